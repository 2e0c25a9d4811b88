"""From a battery's per-instance rows to its AOPC summary: what the tables, the debate matrix and
the figures read (`experiment` writes the rows). Torch-free, so that those jobs never load torch.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnexp.explanations import unconverged_count

__all__ = ["aopc", "normalised", "primary_operator", "unconverged_share"]


def aopc(frame: pd.DataFrame) -> pd.DataFrame:
    """Per removal operator, unit and ranking: AOPC-comprehensiveness (higher is better) and
    AOPC-sufficiency (lower is better), the mean over instances of each instance's mean over bins, with
    the sd over instances; where the table carries each instance's AOPC range (`with_bounds`), the same
    normalised to it (Edin et al. 2025: (AOPC − min) / (max − min), in [0, 1], read in the same direction),
    the raw score over the same instances (`_bounded`) and how many instances have a range; and for
    integrated gradients the share of instances whose completeness gap did not converge."""
    if "unit" not in frame:
        frame = frame.assign(unit="tokens")
    if "operator" not in frame:  # a table of one battery
        frame = frame.assign(operator="delete")
    keys = ["operator", "unit", "ranking"]
    metrics = ["comprehensiveness", "sufficiency"]
    per_instance = frame.groupby([*keys, "id"], sort=False)[metrics].mean()
    bounded = "comprehensiveness_min" in frame
    if bounded:
        ranges = frame.groupby([*keys, "id"], sort=False)[[f"{m}_{e}" for m in metrics for e in ("min", "max")]].first()
        has_range = ranges["comprehensiveness_min"].notna()
        for metric in metrics:
            per_instance[f"{metric}_normalised"] = normalised(
                per_instance[metric], ranges[f"{metric}_min"], ranges[f"{metric}_max"]
            )
            # the raw score over the same instances, so that raw and normalised compare like with like
            per_instance[f"{metric}_bounded"] = per_instance[metric].where(has_range)
    summary = per_instance.groupby(keys, sort=False).agg(["mean", "std", "count"])
    out = pd.DataFrame(
        {
            **{key: summary.index.get_level_values(key) for key in keys},
            "aopc_comprehensiveness": summary[("comprehensiveness", "mean")].to_numpy(),
            "aopc_comprehensiveness_sd": summary[("comprehensiveness", "std")].to_numpy(),
            "aopc_sufficiency": summary[("sufficiency", "mean")].to_numpy(),
            "aopc_sufficiency_sd": summary[("sufficiency", "std")].to_numpy(),
            "instances": summary[("comprehensiveness", "count")].to_numpy(),
        }
    )
    if bounded:
        for metric in metrics:
            out[f"aopc_{metric}_normalised"] = summary[(f"{metric}_normalised", "mean")].to_numpy()
            out[f"aopc_{metric}_normalised_sd"] = summary[(f"{metric}_normalised", "std")].to_numpy()
            out[f"aopc_{metric}_bounded"] = summary[(f"{metric}_bounded", "mean")].to_numpy()
        out["instances_normalised"] = summary[("comprehensiveness_bounded", "count")].to_numpy()
    return out.assign(ig_unconverged=unconverged_share(frame, keys, out)).reset_index(drop=True)


def primary_operator(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of each run's first removal operator (`faithfulness.ops`' first, written first): what the
    claims, the debate matrix and the figures read. A table of several runs keys them by dataset, model
    and seed; one run's eraser.csv or violation.csv has no such columns."""
    if "operator" not in frame or frame.empty:
        return frame
    runs = [key for key in ("dataset", "model", "seed") if key in frame]
    first = frame.groupby(runs, sort=False)["operator"].transform("first") if runs else frame["operator"].iloc[0]
    return frame[frame["operator"] == first]


def unconverged_share(frame: pd.DataFrame, keys: list[str], summary: pd.DataFrame) -> np.ndarray:
    """Per row of `summary` (keyed by `keys`): the share of its instances whose integrated gradients did
    not converge (`with_ig_convergence`), NaN for the rows of other rankings or a table without the flags."""
    if "ig_converged" not in frame:
        return np.full(len(summary), np.nan)
    per_instance = frame.groupby([*keys, "id"], sort=False)["ig_converged"].first()
    share = {}
    for key, flags in per_instance.groupby(level=keys, sort=False):
        bad = unconverged_count(flags)
        share[key] = np.nan if bad is None else bad / flags.notna().sum()
    return np.array([share.get(tuple(row), np.nan) for row in summary[keys].itertuples(index=False)], dtype=float)


def normalised(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """(AOPC − min) / (max − min), clipped to [0, 1] against rounding; NaN where every ordering gives the
    same AOPC (max = min: nothing to normalise) or no bounds were computed."""
    value, low, high = (np.asarray(a, dtype=np.float64) for a in (value, low, high))
    span = high - low
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(span > 1e-12, (value - low) / np.where(span > 1e-12, span, 1.0), np.nan)
    return np.clip(out, 0.0, 1.0)
