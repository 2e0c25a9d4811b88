"""Tables and claims of the Transformer slice (Abnar & Zuidema 2020; Hao et al. 2021), torch-free: the head-pruning
summary (Hao et al. 2021, Figure 3) and how well rollout, attention attribution and raw attention
agree with input-gradient and leave-one-out (blank-out) importance (Abnar & Zuidema 2020).

Both published anchors are qualitative, so their claims rows compare our two numbers, not a
published value:
- Hao et al.: pruning heads by attribution keeps accuracy longer than by attention (and, this
  project's acceptance, than random orders), read at half the heads pruned.
- Abnar & Zuidema: rollout correlates better than raw attention with gradient and blank-out
  importance (their Tables 1–3 report Spearman's ρ; so do we, per instance, then the mean).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from attnexp import io
from attnexp.claims import claim, write_claims
from attnexp.explanations import explanation_sets, read_explanations
from attnexp.markdown import to_markdown
from attnexp.plan import RunKey

__all__ = ["pruning_summary", "pruning_claims", "rollout_agreement", "rollout_claims", "write_tables"]

HAO = (
    "Hao et al. 2021",
    "Figure 3",
    "Hao et al. 2021 (AAAI), Figure 3: head pruning by attribution vs attention scores",
)
ABNAR = (
    "Abnar & Zuidema 2020",
    "Tables 1-3",
    "Abnar & Zuidema 2020 (ACL), Tables 1-3: Spearman's rho with input gradients and blank-out",
)
AGAINST = {"gradient": "|gradient|", "loo": "leave-one-out (blank-out)"}
METHODS = ("attention", "rollout", "attattr")


def pruning_summary(paths: list[str | Path]) -> pd.DataFrame:
    """pruning.csv files -> per run and fraction: accuracy by attribution, by attention, and the
    random orders' mean and sd."""
    rows = []
    for path in paths:
        run = RunKey.of_file(path)
        curves = io.read_table(path)
        for fraction, group in curves.groupby("fraction", sort=True):
            by_order = group.groupby("order")["accuracy"]
            random = group.loc[group["order"] == "random", "accuracy"]
            rows.append(
                {
                    "dataset": run.dataset,
                    "model": run.model,
                    "seed": run.seed,
                    "fraction": float(fraction),
                    "heads_pruned": int(group["heads_pruned"].iloc[0]),
                    "attribution": by_order.mean().get("attribution", np.nan),
                    "attention": by_order.mean().get("attention", np.nan),
                    "random_mean": random.mean() if len(random) else np.nan,
                    "random_sd": random.std(ddof=1) if len(random) > 1 else np.nan,
                    "random_orders": len(random),
                }
            )
    return pd.DataFrame(rows)


def pruning_claims(summary: pd.DataFrame, at: float = 0.5) -> list[dict]:
    """At `at` of the heads pruned: attribution order >= random orders' mean, >= attention order."""
    paper, table, source = HAO
    rows = []
    for (dataset, model, seed), group in summary.groupby(["dataset", "model", "seed"], sort=False):
        point = group[np.isclose(group["fraction"], at)]
        for other, label in (
            ("random_mean", f"the mean of {int(group['random_orders'].iloc[0])} random orders"),
            ("attention", "the max-attention order"),
        ):
            gap = float(point["attribution"].iloc[0] - point[other].iloc[0]) if len(point) else np.nan
            verdict = "undefined" if np.isnan(gap) else ("holds" if gap >= 0 else "does not hold")
            rows.append(
                claim(
                    paper,
                    table,
                    dataset,
                    model,
                    int(seed),
                    f"test accuracy with {at:.0%} of heads pruned: attribution order - {label}; holds at or above 0",
                    ours=gap,
                    verdict=verdict,
                    source=source,
                    condition="no retraining; importance on dev instances, gold targets",
                )
            )
    return rows


def _agreement(records: list[dict], method: str, against: str) -> tuple[float, int]:
    """Mean over instances (n >= 2, neither vector constant) of Spearman's ρ(|method|, |against|):
    magnitudes, as `attnexp.explain.importance` reads them (attention, rollout and LOO are
    non-negative already; gradient and attention attribution are signed)."""
    values = []
    for r in records:
        a, b = (np.abs(np.asarray(r[key], dtype=np.float64)) for key in (method, against))
        if len(a) >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
            values.append(spearmanr(a, b).statistic)
    return (float(np.mean(values)) if values else np.nan), len(values)


def rollout_agreement(paths: list[str | Path]) -> pd.DataFrame:
    """Transformer explanation files (`METHODS` and `AGAINST` of each run) -> per run, method and
    reference measure: the mean Spearman ρ (attention attribution by magnitude)."""
    rows = []
    for files in explanation_sets(paths).values():
        run = RunKey.of_file(files[0])
        records = read_explanations(files)
        for against in AGAINST:
            for method in METHODS:
                mean, n = _agreement(records, method, against)
                rows.append(
                    {
                        "dataset": run.dataset,
                        "model": run.model,
                        "seed": run.seed,
                        "method": method,
                        "against": against,
                        "spearman": mean,
                        "instances": n,
                    }
                )
    return pd.DataFrame(rows)


def rollout_claims(agreement: pd.DataFrame) -> list[dict]:
    """Per run and reference measure: ρ(rollout, X) - ρ(attention, X) > 0."""
    paper, table, source = ABNAR
    rows = []
    for (dataset, model, seed, against), group in agreement.groupby(
        ["dataset", "model", "seed", "against"], sort=False
    ):
        by_method = group.set_index("method")["spearman"]
        gap = float(by_method["rollout"] - by_method["attention"])
        rows.append(
            claim(
                paper,
                table,
                dataset,
                model,
                int(seed),
                f"mean Spearman rho with {AGAINST[against]}: rollout - raw attention; holds above 0",
                ours=gap,
                verdict="undefined" if np.isnan(gap) else ("holds" if gap > 0 else "does not hold"),
                source=source,
                condition=f"{int(group['instances'].min())} test instances; [CLS] readout",
            )
        )
    return rows


def write_tables(pruning_paths, explanation_paths, out) -> None:
    """results/tables/attention_attribution_{pruning,agreement}.{csv,md} and results/claims/attention_attribution.csv."""
    summary = pruning_summary(pruning_paths)
    agreement = rollout_agreement(explanation_paths)
    io.write_csv(out["pruning_csv"], summary, seal=True)
    io.write_csv(out["agreement_csv"], agreement, seal=True)
    shown = summary.copy()
    shown["random"] = [f"{m:.3f} ± {s:.3f}" for m, s in zip(shown.pop("random_mean"), shown.pop("random_sd"))]
    io.write_text(
        out["pruning_md"],
        "# Head pruning (Hao et al. 2021, Figure 3)\n\nTest accuracy with the least important heads masked, by "
        "attention attribution, by max attention, and by random orders (mean ± sd); no retraining.\n\n"
        + to_markdown(shown.round(3))
        + "\n",
    )
    wide = agreement.pivot_table(
        index=["dataset", "model", "seed", "against"], columns="method", values="spearman", sort=False
    ).reset_index()
    io.write_text(
        out["agreement_md"],
        "# Agreement with gradient and blank-out importance (Abnar & Zuidema 2020)\n\nMean over test instances of "
        "Spearman's ρ between each method's token scores (attention attribution by magnitude) and |gradient| or "
        "leave-one-out.\n\n" + to_markdown(wide.round(3)) + "\n",
    )
    write_claims(out["claims"], pruning_claims(summary) + rollout_claims(agreement))
