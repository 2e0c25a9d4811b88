"""Serrano & Smith (2019) figures (their §5–§6), from the per-instance tables of
`attnexp.papers.serrano_smith.experiment`:

- ΔJS scatter: single-weight erasure, ΔJS = JS(p, q_top) − JS(p, q_random) against Δα = α_top − α_random,
  one panel per dataset, for one model (S&S's subsample: at most `per_bin` points per x-bin of
  width `bin_width`, the single largest ΔJS dropped; y is the raw difference, D-SS-PLOT).
- Removal box plots: removal until the decision flips, the fraction of items removed (or the attention
  mass removed) at the first flip per ranking, one panel per model, for one dataset. No-flip
  instances are left out of each box and their share is printed above it (D-SS-NOFLIP); "Random"
  is the first of the permutations (D-SS-BOX).

Every function takes tables, returns a Figure and never fails on a small table: the panel of an
empty table (every test instance had a single item, S&S §4) says there was nothing to erase.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from attnexp.papers.serrano_smith import RANKINGS

# attnexp.plots first: it picks the non-interactive backend before pyplot loads
from attnexp.plots import use_house_style

__all__ = ["RANKING_LABELS", "subsample", "delta_js", "removal_boxes"]

RANKING_LABELS = RANKINGS  # the orders' labels, in the order their boxes are drawn
COLORS = dict(zip(RANKING_LABELS, sns.color_palette("colorblind", len(RANKING_LABELS))))
QUANTITIES = {
    "fraction": "fraction of items removed at the first flip",
    "removed_mass": "attention mass removed at the first flip",
}


NOTHING_TO_ERASE = "nothing to erase:\nevery test instance\nhas a single item"


def _nothing_to_erase(ax: plt.Axes) -> None:
    ax.text(0.5, 0.5, NOTHING_TO_ERASE, ha="center", va="center", transform=ax.transAxes)


def subsample(table: pd.DataFrame, bin_width: float, per_bin: int, seed: int) -> pd.DataFrame:
    """S&S's plotting subsample of (delta_attention, delta_js): at most `per_bin` rows per x-bin,
    drawn with a fixed seed, then the row with the largest ΔJS dropped."""
    if table.empty:
        return table
    rng = np.random.default_rng(seed)
    bins = np.floor(table["delta_attention"].to_numpy() / bin_width).astype(np.int64)
    keep = []
    for b in np.unique(bins):
        rows = np.flatnonzero(bins == b)
        keep.extend(rows if len(rows) <= per_bin else np.sort(rng.choice(rows, per_bin, replace=False)))
    picked = table.iloc[np.sort(np.array(keep))]
    return picked.drop(index=picked["delta_js"].idxmax())


def delta_js(
    tables: dict[str, pd.DataFrame],
    model: str,
    bin_width: float,
    per_bin: int,
    seed: int,
    model_seed: int,
) -> plt.Figure:
    """The ΔJS scatter for one model (trained with `model_seed`): {dataset: single-weight erasure table}
    -> one panel per dataset, the top item by attention against its random item; `seed` draws the
    plotted subsample."""
    use_house_style()
    datasets = sorted(tables)
    cols = min(2, max(1, len(datasets)))
    rows = max(1, -(-len(datasets) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False, layout="constrained")
    for ax, dataset in zip(axes.flat, datasets):
        table = tables[dataset]
        table = table[table["top_by"] == "attention"]
        shown = subsample(table, bin_width, per_bin, seed)
        if shown.empty:
            _nothing_to_erase(ax)
        else:
            ax.scatter(
                shown["delta_attention"], shown["delta_js"], s=6, alpha=0.6, color=COLORS["attention"], linewidths=0
            )
            negative = float((table["delta_js"] < 0).mean())
            ax.text(
                0.98,
                0.96,
                f"ΔJS < 0: {negative:.1%} of {len(table)}",
                ha="right",
                va="top",
                transform=ax.transAxes,
                fontsize=7,
            )
        ax.axhline(0, color="0.4", linewidth=0.6)
        ax.set(
            xlim=(0, 1),
            ylim=(-0.05, 0.45),
            title=dataset,
            xlabel="Δα = α(top) − α(random)",
            ylabel="ΔJS (raw difference)",
        )
    for ax in list(axes.flat)[len(datasets) :]:
        ax.set_visible(False)
    fig.suptitle(f"Single-weight erasure: {model}, seed {model_seed}")
    return fig


def removal_boxes(tables: dict[str, pd.DataFrame], dataset: str, quantity: str = "fraction") -> plt.Figure:
    """The removal box plot of the fraction removed (`fraction`) or of the attention mass removed
    (`removed_mass`) for one dataset: {model: removal table} -> one
    panel per model, a box per ranking over the instances that flip, % no-flip above each box."""
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {sorted(QUANTITIES)}, got {quantity!r}")
    use_house_style()
    models = sorted(tables)
    # at most three panels a row: six models in one row made a strip too wide to read at page width
    cols = min(3, max(1, len(models)))
    rows = -(-max(1, len(models)) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 3.4 * rows), squeeze=False, layout="constrained")
    for ax in axes.flat[len(models) :]:
        ax.set_visible(False)
    for i, (ax, model) in enumerate(zip(axes.flat, models)):
        table = tables[model]
        table = table[(table["ranking"] != "random") | (table["permutation"] == 0)]  # D-SS-BOX
        rankings = [r for r in RANKING_LABELS if r in set(table["ranking"])]
        if not rankings:
            _nothing_to_erase(ax)
            ax.set_title(model)
            continue
        data = [table[(table["ranking"] == r) & table["flipped"]][quantity].astype(float).to_numpy() for r in rankings]
        shown = [d if len(d) else np.array([np.nan]) for d in data]
        boxes = ax.boxplot(shown, patch_artist=True, widths=0.6, showfliers=False, medianprops={"color": "black"})
        for patch, r in zip(boxes["boxes"], rankings):
            patch.set_facecolor(COLORS[r])
        for x, (r, values) in enumerate(zip(rankings, data), start=1):
            part = table[table["ranking"] == r]
            ax.text(
                x,
                1.04,
                f"{(~part['flipped']).mean():.0%}",
                ha="center",
                va="bottom",
                fontsize=7,
                transform=ax.get_xaxis_transform(),
            )
            if not len(values):  # nothing flipped: no box to draw
                ax.text(x, 0.5, "no flip", ha="center", va="center", rotation=90, fontsize=7, color="0.4")
            elif np.subtract(*np.percentile(values, [75, 25])) < 1e-9:  # a box of zero height is a line: mark it
                ax.plot(
                    x, np.median(values), marker="D", markersize=7, color=COLORS[r], markeredgecolor="black", zorder=3
                )
        ax.set_xticks(
            range(1, len(rankings) + 1),
            [RANKING_LABELS[r] for r in rankings],
            rotation=30,
            ha="right",
            rotation_mode="anchor",
        )
        ax.set(ylim=(-0.03, 1.05), ylabel=QUANTITIES[quantity] if i % cols == 0 else "")
        ax.set_title(model, pad=18)  # room for the no-flip shares
    fig.suptitle(f"Removal until the decision flips: {dataset} (above each box: % no flip)")
    return fig
