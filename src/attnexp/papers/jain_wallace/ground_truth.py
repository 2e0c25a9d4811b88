"""Jain & Wallace's explanations against the planted class cues of `synthetic` and the planted datasets:
one row per test instance and method (`ground_truth_table`), and their means per method, overall and
by predicted class (`summarise_ground_truth`). Torch-free: it reads explanation records."""

from __future__ import annotations

import pandas as pd

from attnexp.explanations import METHODS, ig_converged, importance, unconverged_count
from attnexp.metrics import ground_truth_scores

GROUND_TRUTH_METHODS = METHODS  # every method explained for the model (the Transformer adds rollout, attattr)


def ground_truth_table(records: list[dict], data: list[dict]) -> pd.DataFrame:
    """One row per test instance and method: the §3 metrics against the planted class cues G
    (`rationale` of each test record), and on integrated gradients' rows whether the instance's IG met
    its completeness tolerance (`ig_converged`). Instances without cues are skipped."""
    truth = {d["id"]: d["rationale"] for d in data}
    rows = []
    for r in records:
        if r["id"] not in truth:
            raise ValueError(f"instance {r['id']!r} of the explanations is not in the test data")
        if not truth[r["id"]]:
            continue
        for method in (m for m in GROUND_TRUTH_METHODS if m in r):
            scores = ground_truth_scores(importance(r, method), truth[r["id"]])
            converged = ig_converged(r) if method == "ig" else None
            row = {"id": r["id"], "length": r["length"], "predicted": r["predicted"], "method": method, **scores}
            rows.append(row | {"ig_converged": converged})
    return pd.DataFrame(rows)


def summarise_ground_truth(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over instances per method, overall and by predicted class. `n_undefined_mass`
    counts instances whose scores are all zero (mass undefined, left out of the mass means);
    `n_ig_unconverged` the integrated-gradients instances whose completeness gap did not converge
    (counted, not left out; empty for the other methods)."""
    metrics = ["mass", "mass_ratio", "precision", "first_hit", "auprc"]
    if "ig_converged" not in table:  # a table made without integrated gradients
        table = table.assign(ig_converged=None)
    parts = [table.assign(group="Overall"), table.assign(group=table["predicted"].astype(str))]
    grouped = pd.concat(parts).groupby(["method", "group"], sort=True)
    summary = grouped[metrics].agg(["mean", lambda x: x.std(ddof=0)])
    summary.columns = [f"{m}_{'mean' if s == 'mean' else 'std'}" for m, s in summary.columns]
    undefined = grouped["mass"].apply(lambda mass: int(mass.isna().sum()))
    unconverged = grouped["ig_converged"].apply(unconverged_count)
    return summary.reset_index().assign(
        n=grouped.size().values, n_undefined_mass=undefined.values, n_ig_unconverged=unconverged.values
    )
