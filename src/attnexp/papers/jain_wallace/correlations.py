"""Jain & Wallace (2019) §5.3: Kendall τ-b between attention, |gradient|, leave-one-out and |IG| per
test instance, from a run's explanation files, and their summary per pair and class group.

Torch-free (it ranks scores that `attnexp.explain` wrote), so the jw_correlations job does not load
torch; `attnexp.papers.jain_wallace.experiment` re-exports all of it with the other §5 experiments.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attnexp import io
from attnexp.explanations import METHODS, ig_converged, importance, read_explanations, unconverged_count
from attnexp.metrics import kendall_tau

if TYPE_CHECKING:  # the job writes its rows without pandas (io.write_records_csv)
    import pandas as pd

__all__ = [
    "PAIRS",
    "COLUMNS",
    "correlation_rows",
    "correlations",
    "class_groups",
    "summarise_correlations",
    "write_correlations",
]

# (first, second) measures whose per-instance Kendall τ is computed, where both were explained
# (`jain_wallace.measures`). Importance scores are magnitudes: |gradient| (J&W §5.1) and |IG|
# (Sundararajan et al. 2017); attention and LOO are non-negative.
PAIRS = (("attention", "gradient"), ("attention", "loo"), ("gradient", "loo"), ("attention", "ig"), ("ig", "loo"))
COLUMNS = ["id", "length", "predicted", "pair", "tau", "p_value", "ig_converged"]


def correlation_rows(records: list[dict]) -> list[dict]:
    """One row (`COLUMNS`) per instance and pair of explained measures: τ-b over all real tokens and
    its two-sided p-value (D-TAU); on a pair with integrated gradients, whether the instance's IG met
    its completeness tolerance (`ig_converged`; empty on the other pairs)."""
    pairs = [(a, b) for a, b in PAIRS if records and a in records[0] and b in records[0]]
    if records and not pairs:
        raise ValueError(
            f"no pair of measures to correlate: the explanations hold {sorted(k for k in records[0] if k in METHODS)}"
        )
    rows = []
    for r in records:
        for first, second in pairs:
            tau, p_value = kendall_tau(importance(r, first), importance(r, second))
            rows.append(
                {
                    "id": r["id"],
                    "length": r["length"],
                    "predicted": r["predicted"],
                    "pair": f"{first}~{second}",
                    "tau": tau,
                    "p_value": p_value,
                    "ig_converged": ig_converged(r) if "ig" in (first, second) else None,
                }
            )
    return rows


def correlations(records: list[dict]) -> pd.DataFrame:
    """`correlation_rows` as a table (its columns even without rows)."""
    import pandas as pd

    return pd.DataFrame(correlation_rows(records), columns=COLUMNS)


def class_groups(predicted: pd.Series, classifier: bool) -> pd.Series:
    """The row group of each instance (§5.3): a classifier's (BC) by predicted class; QA/NLI by
    predicted label when the predictions take fewer than 4 values (SNLI), otherwise one "Overall"
    group (CNN, bAbI)."""
    import pandas as pd

    if not classifier and predicted.nunique() >= 4:
        return pd.Series("Overall", index=predicted.index)
    return predicted.astype(str)


def summarise_correlations(table: pd.DataFrame, classifier: bool, significance: float = 0.05) -> pd.DataFrame:
    """Per pair and group: instances, undefined τ (constant vectors, excluded), mean and population
    std of τ, Sig. Frac. = the fraction of instances with p <= `significance`, and on a pair with
    integrated gradients the instances whose IG did not converge (`n_ig_unconverged`, counted, not
    excluded; empty on the other pairs and in tables written before the flag)."""
    import pandas as pd

    table = table.assign(group=class_groups(table["predicted"], classifier))
    rows = []
    for (pair, group), part in table.groupby(["pair", "group"], sort=True):
        defined = part.dropna(subset=["tau"])
        rows.append(
            {
                "pair": pair,
                "group": group,
                "n": len(defined),
                "n_undefined": len(part) - len(defined),
                "mean": defined["tau"].mean(),
                "std": defined["tau"].std(ddof=0),
                "sig_frac": (defined["p_value"] <= significance).mean(),
                "n_ig_unconverged": unconverged_count(part["ig_converged"]) if "ig_converged" in part else None,
            }
        )
    return pd.DataFrame(rows)


def write_correlations(explanations: list[str | Path], out: str | Path) -> None:
    rows = correlation_rows(read_explanations(explanations))
    if rows:
        io.write_records_csv(out, rows, seal=True)
    else:  # the header alone
        io.write_csv(out, correlations([]), seal=True)
