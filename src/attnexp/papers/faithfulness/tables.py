"""The faithfulness battery's summary: AOPC per model and ranking (mean ± sd over test instances), and
the claims each ranking makes against the random baseline (DeYoung et al. 2020).

A ranking that reflects what the model uses should erase more of the prediction than a random one
when its top tokens go (AOPC-comprehensiveness above Random's) and keep more of it when only they
stay (AOPC-sufficiency below Random's). Those two comparisons, per model and ranking, are the
battery's claims; leave-one-out is the check that the battery works at all (it ranks by exactly
the quantity comprehensiveness measures at k = 1).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.claims import claim, write_claims
from attnexp.markdown import to_markdown
from attnexp.papers.faithfulness.experiment import RANDOM, aopc
from attnexp.papers.faithfulness.seed_envelopes import summarise_envelopes
from attnexp.plan import RunKey

__all__ = ["aopc_table", "envelope_table", "faithfulness_claims", "write_tables"]

PAPER = "DeYoung et al. 2020"
SOURCE = "ERASER (DeYoung et al. 2020) §4 AOPC, the official scorer's bins and 1/|B|"


def aopc_table(paths: list[str | Path]) -> pd.DataFrame:
    """eraser.csv per run (`results/faithfulness/{dataset}/{model}/seed{seed}/eraser.csv`) -> one row
    per run, unit its rankings order (tokens; a HAN's sentences and tokens) and ranking."""
    parts = []
    for path in paths:
        run = RunKey.of_file(path)
        frame = io.read_table(path, dtype={"id": str, "ranking": str, "unit": str})
        if "unit" not in frame or frame["unit"].isna().any() or not set(frame["unit"]) <= {"tokens", "sentences"}:
            found = sorted(frame["unit"].dropna().unique()) if "unit" in frame else "no `unit` column"
            raise ValueError(f"{path}: every row needs a `unit` (tokens or sentences), got {found}")
        parts.append(aopc(frame).assign(dataset=run.dataset, model=run.model, seed=run.seed))
    columns = [
        "dataset",
        "model",
        "seed",
        "unit",
        "ranking",
        "aopc_comprehensiveness",
        "aopc_comprehensiveness_sd",
        "aopc_sufficiency",
        "aopc_sufficiency_sd",
        "instances",
    ]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def envelope_table(paths: list[str | Path]) -> pd.DataFrame:
    """seed_envelope.csv per W&P base run -> one row per run and measure (`summarise_envelopes`)."""
    parts = []
    for path in paths:
        run = RunKey.of_file(path)
        summary = summarise_envelopes(io.read_table(path, dtype={"id": str, "measure": str}))
        parts.append(summary.assign(dataset=run.dataset, model=run.model, seed=run.seed))
    columns = [
        "dataset",
        "model",
        "seed",
        "measure",
        "seed_median_tau",
        "seed_median_tau_sd",
        "attention_tau",
        "attention_tau_sd",
        "share_attention_below_envelope",
        "instances",
        "undefined",
    ]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def faithfulness_claims(table: pd.DataFrame) -> list[dict]:
    """Per run and ranking: AOPC-comprehensiveness above Random's, AOPC-sufficiency below it."""
    rows = []
    for (dataset, model, seed, _), group in table.groupby(["dataset", "model", "seed", "unit"], sort=False):
        by_ranking = group.set_index("ranking")
        if RANDOM not in by_ranking.index:
            continue
        random = by_ranking.loc[RANDOM]
        for ranking, r in by_ranking.drop(index=RANDOM).iterrows():
            comp = float(r.aopc_comprehensiveness - random.aopc_comprehensiveness)
            suff = float(r.aopc_sufficiency - random.aopc_sufficiency)
            rows.append(
                claim(
                    PAPER,
                    "AOPC",
                    dataset,
                    model,
                    int(seed),
                    f"AOPC-comprehensiveness({ranking}) - AOPC-comprehensiveness(random); holds above 0",
                    comp,
                    verdict="holds" if comp > 0 else "does not hold",
                    source=SOURCE,
                    condition=f"{int(r.instances)} test instances, ranked {r.unit}",
                )
            )
            rows.append(
                claim(
                    PAPER,
                    "AOPC",
                    dataset,
                    model,
                    int(seed),
                    f"AOPC-sufficiency({ranking}) - AOPC-sufficiency(random); holds below 0",
                    suff,
                    verdict="holds" if suff < 0 else "does not hold",
                    source=SOURCE,
                    condition=f"{int(r.instances)} test instances, ranked {r.unit}",
                )
            )
    return rows


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± sd to 3 decimals, one column per metric."""
    shown = table[["dataset", "model", "seed", "unit", "ranking", "instances"]].copy()
    for metric in ("comprehensiveness", "sufficiency"):
        mean, sd = table[f"aopc_{metric}"], table[f"aopc_{metric}_sd"]
        shown[f"AOPC-{metric}"] = [f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, sd)]
    return shown


def write_tables(paths: list[str | Path], envelope_paths: list[str | Path], out) -> pd.DataFrame:
    """results/tables/faithfulness_{aopc,seed_envelopes}.{csv,md} and results/claims/faithfulness.csv."""
    envelopes = envelope_table(envelope_paths)
    io.write_csv(out["envelopes_csv"], envelopes, seal=True)
    io.write_text(
        out["envelopes_md"],
        "# Faithfulness: seed envelopes\n\n"
        "Per measure, the median over the W&P seed models of Kendall τ(base model, seed model) (the measure's "
        "agreement with itself), beside the base model's τ(attention, measure); mean ± sd over test instances "
        "(the seed spread W&P §3.3 measure, applied to every explainer).\n\n" + to_markdown(envelopes.round(3)),
    )
    table = aopc_table(paths)
    io.write_csv(out["aopc_csv"], table, seal=True)
    io.write_text(
        out["aopc_md"],
        "# Faithfulness: AOPC per model and ranking\n\n"
        "ERASER comprehensiveness (higher is better) and sufficiency (lower is better), the mean over the "
        "bins of each test instance, then mean ± sd over instances (DeYoung et al. 2020). The unit is what a ranking "
        "orders and erases: tokens, or the sentences a HAN attends to.\n\n" + to_markdown(_shown(table)),
    )
    write_claims(out["claims"], faithfulness_claims(table))
    return table
