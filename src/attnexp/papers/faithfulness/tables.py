"""The faithfulness battery's summary: AOPC per model and ranking (mean ± sd over test instances), and
the claims each ranking makes against the random baseline (DeYoung et al. 2020).

A ranking that reflects what the model uses should erase more of the prediction than a random one
when its top tokens go (AOPC-comprehensiveness above Random's) and keep more of it when only they
stay (AOPC-sufficiency below Random's). Those two comparisons, per model and ranking, are the
battery's claims; leave-one-out is the check that the battery works at all (it ranks by exactly
the quantity comprehensiveness measures at k = 1).

The violation test (Liu et al. 2022) is summarised the same way: per model, unit and explainer, the
mean over test instances of the share of units whose attribution's sign disagrees with the output
change of removing the unit alone. Its claims are Liu et al.'s ordering: attention violates more often
than integrated gradients, and Random most often.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.claims import claim, write_claims
from attnexp.markdown import to_markdown
from attnexp.papers.faithfulness import RANDOM
from attnexp.papers.faithfulness.seed_envelopes import summarise_envelopes
from attnexp.papers.faithfulness.summary import aopc, primary_operator, unconverged_share
from attnexp.plan import RunKey

__all__ = [
    "aopc_table",
    "envelope_table",
    "violation_table",
    "faithfulness_claims",
    "rank_changes",
    "violation_claims",
    "write_tables",
]

PAPER = "DeYoung et al. 2020"
NORMALISED = (
    "aopc_comprehensiveness_normalised",
    "aopc_comprehensiveness_normalised_sd",
    "aopc_sufficiency_normalised",
    "aopc_sufficiency_normalised_sd",
    "aopc_comprehensiveness_bounded",  # the raw score over the instances with a range
    "aopc_sufficiency_bounded",
)
NORMALISED_SOURCE = "normalised AOPC (Edin et al. 2025): (AOPC - min) / (max - min) over each instance's orderings"
SOURCE = "ERASER (DeYoung et al. 2020) §4 AOPC, the official scorer's bins and 1/|B|"
VIOLATION_PAPER = "Liu et al. 2022"
VIOLATION_SOURCE = "Liu et al. 2022 (ICML), the violation test; their ratios: references/liu_2022_violation.csv"


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
        "operator",
        "unit",
        "ranking",
        "aopc_comprehensiveness",
        "aopc_comprehensiveness_sd",
        "aopc_sufficiency",
        "aopc_sufficiency_sd",
        "instances",
        *NORMALISED,
        "instances_normalised",
        "ig_unconverged",
    ]
    # an eraser.csv without the instances' AOPC ranges (written before they existed) leaves them empty
    return pd.concat(parts, ignore_index=True).reindex(columns=columns) if parts else pd.DataFrame(columns=columns)


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


def violation_table(paths: list[str | Path]) -> pd.DataFrame:
    """violation.csv per run -> one row per run, unit and explainer: the mean violation ratio over the
    instances with a claim (± sd), and how many instances were scored."""
    columns = ["dataset", "model", "seed", "operator", "unit", "explainer", "violation_ratio", "violation_ratio_sd"]
    columns += ["instances"]
    columns += ["ig_unconverged"]  # integrated gradients' rows: the share of instances whose completeness failed
    parts = []
    for path in paths:
        run = RunKey.of_file(path)
        frame = io.read_table(path, dtype={"id": str, "explainer": str, "unit": str})
        if frame.empty:
            continue
        if "operator" not in frame:  # a table of one battery
            frame = frame.assign(operator="delete")
        keys = ["operator", "unit", "explainer"]
        summary = frame.groupby(keys, sort=False)["violation_ratio"].agg(["mean", "std", "count"])
        rows = pd.DataFrame(
            {
                "dataset": run.dataset,
                "model": run.model,
                "seed": run.seed,
                **{key: summary.index.get_level_values(key) for key in keys},
                "violation_ratio": summary["mean"].to_numpy(),
                "violation_ratio_sd": summary["std"].to_numpy(),
                "instances": summary["count"].to_numpy(),
            }
        )
        parts.append(rows.assign(ig_unconverged=unconverged_share(frame, keys, rows)))
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def violation_claims(table: pd.DataFrame) -> list[dict]:
    """Per run and unit, Liu et al.'s ordering: attention's violation ratio above IG's (where IG was
    run), and Random's above every explainer's."""
    rows = []
    for (dataset, model, seed, unit), group in table.groupby(["dataset", "model", "seed", "unit"], sort=False):
        ratio = group.set_index("explainer")["violation_ratio"]
        condition = f"{int(group['instances'].max())} test instances, {unit} removed one at a time"

        def ordering(quantity: str, value: float) -> dict:
            verdict = "holds" if value > 0 else "does not hold"
            return claim(
                VIOLATION_PAPER,
                "violation",
                dataset,
                model,
                int(seed),
                quantity,
                ours=float(value),
                verdict=verdict,
                source=VIOLATION_SOURCE,
                condition=condition,
            )

        if {"attention", "ig"} <= set(ratio.index):
            rows.append(
                ordering(
                    "violation ratio(attention) - violation ratio(ig); holds above 0",
                    ratio["attention"] - ratio["ig"],
                )
            )
        others = ratio.drop(index=RANDOM, errors="ignore")
        if RANDOM in ratio.index and len(others):
            rows.append(
                ordering(
                    "violation ratio(random) - the largest other explainer's; holds above 0",
                    ratio[RANDOM] - others.max(),
                )
            )
    return rows


def faithfulness_claims(table: pd.DataFrame) -> list[dict]:
    """Per run and ranking: AOPC-comprehensiveness above Random's, AOPC-sufficiency below it; the same
    of the normalised scores where the instances' AOPC ranges were found."""
    rows = []
    for (dataset, model, seed, _), group in table.groupby(["dataset", "model", "seed", "unit"], sort=False):
        by_ranking = group.set_index("ranking")
        if RANDOM not in by_ranking.index:
            continue
        random = by_ranking.loc[RANDOM]
        for ranking, r in by_ranking.drop(index=RANDOM).iterrows():
            for metric, better in (("comprehensiveness", 1), ("sufficiency", -1)):
                for prefix, column, source, instances in (
                    ("", f"aopc_{metric}", SOURCE, r.instances),
                    ("normalised ", f"aopc_{metric}_normalised", f"{SOURCE}; {NORMALISED_SOURCE}", None),
                ):
                    if column not in by_ranking or pd.isna(r[column]) or pd.isna(random[column]):
                        continue  # no normalised score without the instances' AOPC ranges
                    gap = float(r[column] - random[column])
                    counted = (
                        f"{int(instances)} test instances"
                        if instances is not None
                        else (f"{int(r.instances_normalised)} test instances with an AOPC range")
                    )
                    rows.append(
                        claim(
                            PAPER,
                            "AOPC",
                            dataset,
                            model,
                            int(seed),
                            f"{prefix}AOPC-{metric}({ranking}) - {prefix}AOPC-{metric}(random); "
                            f"holds {'above' if better > 0 else 'below'} 0",
                            ours=gap,
                            verdict="holds" if better * gap > 0 else "does not hold",
                            source=source,
                            condition=f"{counted}, ranked {r.unit}",
                        )
                    )
    return rows


def rank_changes(table: pd.DataFrame) -> pd.DataFrame:
    """Where raw and normalised AOPC-comprehensiveness order things differently, both over the instances
    with an AOPC range: per dataset, operator and unit, the explainers of each run and the models (each
    seed) under each ranking, ordered by both, one row per comparison whose order changes."""
    rows = []
    column = "aopc_comprehensiveness_normalised"
    if table.empty or column not in table or table[column].isna().all():
        return pd.DataFrame(columns=["dataset", "operator", "unit", "compared", "by raw AOPC", "by normalised AOPC"])
    shown = table.dropna(subset=[column])

    def order(group: pd.DataFrame, key: str, label) -> str:
        return " > ".join(label(r) for _, r in group.sort_values(key, ascending=False, kind="stable").iterrows())

    for (dataset, operator, unit), part in shown.groupby(["dataset", "operator", "unit"], sort=False):
        comparisons = [
            (f"explainers of {model} (seed {seed})", group, lambda r: r["ranking"])
            for (model, seed), group in part.groupby(["model", "seed"], sort=False)
        ] + [
            (f"models by {ranking}", group, lambda r: f"{r['model']}/{r['seed']}")
            for ranking, group in part.groupby("ranking", sort=False)
        ]
        for compared, group, label in comparisons:
            if len(group) < 2:
                continue
            raw = order(group, "aopc_comprehensiveness_bounded", label)
            normalised = order(group, column, label)
            if raw != normalised:
                rows.append(
                    {
                        "dataset": dataset,
                        "operator": operator,
                        "unit": unit,
                        "compared": compared,
                        "by raw AOPC": raw,
                        "by normalised AOPC": normalised,
                    }
                )
    return pd.DataFrame(rows, columns=["dataset", "operator", "unit", "compared", "by raw AOPC", "by normalised AOPC"])


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± sd to 3 decimals, one column per metric."""
    shown = table[["dataset", "model", "seed", "operator", "unit", "ranking", "instances"]].copy()
    for metric in ("comprehensiveness", "sufficiency"):
        mean, sd = table[f"aopc_{metric}"], table[f"aopc_{metric}_sd"]
        shown[f"AOPC-{metric}"] = [f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, sd)]
        mean, sd = table[f"aopc_{metric}_normalised"], table[f"aopc_{metric}_normalised_sd"]
        shown[f"normalised {metric}"] = ["" if pd.isna(m) else f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, sd)]
    shown["instances normalised"] = ["" if pd.isna(n) else str(int(n)) for n in table["instances_normalised"]]
    shown["IG unconverged"] = _shares(table["ig_unconverged"])
    return shown


def _rank_changes_markdown(changes: pd.DataFrame) -> str:
    if changes.empty:
        return "\n\n## Raw against normalised\n\nNo order of explainers or models changes between raw and normalised AOPC-comprehensiveness.\n"
    return (
        "\n\n## Raw against normalised\n\nWhere raw and normalised AOPC-comprehensiveness order the explainers of a model, "
        "or the models under one ranking, differently:\n\n" + to_markdown(changes)
    )


def _shares(values: pd.Series) -> list[str]:
    """Shares as percentages, blank where there is none (rankings other than integrated gradients)."""
    return ["" if pd.isna(v) else f"{100 * v:.0f} %" for v in values]


def _violation_markdown(table: pd.DataFrame, reference: str | Path) -> str:
    shown = table[["dataset", "model", "seed", "operator", "unit", "explainer", "instances"]].copy()
    shown["violation ratio"] = [
        f"{m:.3f} ± {s:.3f}" for m, s in zip(table["violation_ratio"], table["violation_ratio_sd"])
    ]
    shown["IG unconverged"] = _shares(table["ig_unconverged"])
    published = io.read_table(reference, sealed=False, dtype={"explainer": str})  # a committed reference file
    reference = ", ".join(f"{r.explainer} {r.violation_ratio:.3f}" for r in published.itertuples())
    return (
        "# Faithfulness: the violation test\n\n"
        "Per model and explainer, the share of an instance's units whose attribution's sign disagrees with the "
        "output change when the unit alone is removed (predicted class; units with a zero attribution make no "
        "claim), mean ± sd over test instances (Liu et al. 2022). Attention and rollout are non-negative: they "
        "claim that every unit supports the prediction. Random: N(0, 1) attributions, the mean over draws.\n\n"
        f"Liu et al.'s Yelp LSTM + tanh (the mean over their three removal operators): {reference}; we compare "
        "the ordering, not the values.\n\n" + to_markdown(shown)
    )


def write_tables(
    paths: list[str | Path],
    envelope_paths: list[str | Path],
    out,
    violation_paths: list[str | Path],
    violation_reference: str | Path,
) -> pd.DataFrame:
    """results/tables/faithfulness_{aopc,seed_envelopes,violation}.{csv,md} and results/claims/faithfulness.csv;
    `violation_reference`: Liu et al.'s published ratios (references/liu_2022_violation.csv)."""
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
        "bins of each test instance, then mean ± sd over instances (DeYoung et al. 2020), per removal operator "
        "(`faithfulness.ops`: delete removes the token, zero gives it the zero embedding, attention_mask keeps it with "
        "no attention; the claims read the first). The unit is what a ranking "
        "orders and erases: tokens, or the sentences a HAN attends to. IG unconverged: the share of the instances whose "
        "integrated gradients kept a completeness gap above `explain.ig_tolerance` at `explain.ig_max_steps` points "
        "(their rows are scored as they are). Normalised: each instance's AOPC placed in the range any ordering of its "
        "units reaches, (AOPC - min) / (max - min) in [0, 1] (Edin et al. 2025; exact bounds for short instances, beam "
        "search for long ones, `faithfulness.bounds`), read in the same direction as the raw score: raw AOPC's range "
        "depends on the model, so only the normalised scores compare across models.\n\n"
        + to_markdown(_shown(table))
        + _rank_changes_markdown(rank_changes(table)),
    )
    violation = violation_table(violation_paths)
    io.write_csv(out["violation_csv"], violation, seal=True)
    io.write_text(out["violation_md"], _violation_markdown(violation, violation_reference))
    # the claims read the first operator's battery (`faithfulness.ops`)
    write_claims(
        out["claims"], faithfulness_claims(primary_operator(table)) + violation_claims(primary_operator(violation))
    )
    return table
