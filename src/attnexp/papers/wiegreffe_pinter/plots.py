"""Wiegreffe & Pinter (2019) figures, from the tables of
`attnexp.papers.wiegreffe_pinter.experiment`:

- Figure 2 (violin): per test instance, the attention JSD to the base model (median over the seed
  models, or J&W's per-instance adversary) against the bin of the base's largest attention weight,
  violins split by predicted class with quartile lines.
- Figure 2 (scatter): the same JSD against the output change, coloured by predicted class.
- Figure 4: the adversaries' trade-off, mean test JSD(α_a, α_b) against mean TVD(ŷ_a, ŷ_b), one
  point per λ, with the seed models, the uniform model and J&W's adversary as reference points;
  the JSD axis runs to ln 2, its bound.
- Table 1: one test instance as two heat-map rows, base and adversary attention over its tokens.

Torch-free; every function returns a Figure and draws "no data" rather than failing on an empty table.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

# attnexp.plots first: it picks the non-interactive backend before pyplot loads
from attnexp.plots import fitted_title, use_house_style

__all__ = ["COMPARISONS", "max_attention_bin", "seed_violin", "seed_scatter", "frontier", "attention_example"]

COMPARISONS = {"seeds": "seed models (median JSD)", "jw_adversary": "J&W per-instance adversary"}
REFERENCES = {"seeds": ("seed models", "o"), "uniform": ("uniform model", "s"), "jw_adversary": ("J&W adversary", "^")}
CLASS = "predicted class"
BIN = "max attention (base)"
LN2 = math.log(2)


def _no_data(ax: plt.Axes) -> None:
    ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)


def max_attention_bin(max_attention: pd.Series, edges: list[float]) -> pd.Series:
    """Figure 2's bins [0, e1), [e1, e2), ..., [e_k, 1] as ordered categories like "[0.25, 0.5)"."""
    bounds = [0.0, *edges, 1.0]
    labels = [f"[{a:g}, {b:g})" for a, b in zip(bounds[:-2], bounds[1:-1])] + [f"[{bounds[-2]:g}, 1]"]
    index = np.searchsorted(np.asarray(edges), max_attention.to_numpy(np.float64), side="right")
    return pd.Series(pd.Categorical.from_codes(index, categories=labels, ordered=True), index=max_attention.index)


def _block(table: pd.DataFrame, comparison: str) -> pd.DataFrame:
    block = table[table["comparison"] == comparison]
    return block.assign(**{CLASS: block["predicted"].astype(str)})


def seed_violin(table: pd.DataFrame, comparison: str, edges: list[float], title: str) -> plt.Figure:
    """Figure 2 (violin) for one comparison block of the seed-variance table."""
    use_house_style()
    block = _block(table, comparison)
    bins = max_attention_bin(block["max_attention"], edges) if len(block) else pd.Series(dtype="category")
    labels = list(max_attention_bin(pd.Series([0.0]), edges).cat.categories)
    fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
    if block.empty:
        _no_data(ax)
    else:
        classes = sorted(block[CLASS].unique())
        # density_norm="width": bins hold very different numbers of instances; cut=0 keeps each
        # violin within its observed range (JSD >= 0)
        sns.violinplot(
            block.assign(**{BIN: bins}),
            x="attention_jsd",
            y=BIN,
            order=labels,
            hue=CLASS,
            hue_order=classes,
            palette="colorblind",
            split=len(classes) == 2,
            cut=0,
            inner="quart",
            density_norm="width",
            orient="h",
            linewidth=0.8,
            ax=ax,
        )
    ax.set(xlabel=f"JSD to the base attention, {COMPARISONS[comparison]}", ylabel=BIN, xlim=(0, LN2))
    fig.suptitle(title)
    return fig


def seed_scatter(table: pd.DataFrame, comparison: str, title: str) -> plt.Figure:
    """Figure 2 (scatter): attention JSD against output TVD per instance."""
    use_house_style()
    block = _block(table, comparison)
    fig, ax = plt.subplots(figsize=(4.5, 3.5), layout="constrained")
    if block.empty:
        _no_data(ax)
    else:
        sns.scatterplot(
            block,
            x="attention_jsd",
            y="output_tvd",
            hue=CLASS,
            hue_order=sorted(block[CLASS].unique()),
            palette="colorblind",
            s=8,
            alpha=0.6,
            linewidth=0,
            ax=ax,
        )
    ax.set(
        xlabel=f"JSD to the base attention, {COMPARISONS[comparison]}",
        ylabel="output difference |Δŷ|",
        xlim=(0, LN2),
        ylim=(0, None),
    )
    fig.suptitle(title)
    return fig


def frontier(table: pd.DataFrame, title: str) -> plt.Figure:
    """Figure 4 for one base run: rows of kind `adversary` (one per λ) and the reference rows."""
    use_house_style()
    fig, ax = plt.subplots(figsize=(5, 4.4), layout="constrained")
    adversaries = table[table["kind"] == "adversary"].sort_values("lambda")
    if table.empty:
        _no_data(ax)
    if len(adversaries):
        ax.plot(adversaries["jsd"], adversaries["tvd"], "-", color="black", linewidth=0.8, zorder=2)
        # one colour per λ in the legend: text labels beside the points collided where adversaries
        # of neighbouring λ reach the same JSD (near ln 2)
        shades = sns.color_palette("viridis", len(adversaries))
        for shade, (_, row) in zip(shades, adversaries.iterrows()):
            ax.scatter(
                row["jsd"],
                row["tvd"],
                s=22,
                color=shade,
                edgecolor="black",
                linewidth=0.4,
                zorder=4,
                label=f"adversary, λ = {row['lambda']:g}",
            )
    palette = dict(zip(REFERENCES, sns.color_palette("colorblind", len(REFERENCES))))
    for kind, (label, marker) in REFERENCES.items():
        rows = table[table["kind"] == kind]
        if len(rows):
            ax.scatter(rows["jsd"], rows["tvd"], marker=marker, s=40, color=palette[kind], label=label, zorder=3)
    ax.axvline(LN2, color="grey", linewidth=0.6, linestyle=":")
    ax.set(
        xlabel="mean JSD(α_a, α_base), test", ylabel="mean TVD(ŷ_a, ŷ_base), test", xlim=(0, LN2 * 1.02), ylim=(0, None)
    )
    if len(table):  # below the axes: inside, it hid the seed and uniform points in the upper left
        fig.legend(loc="outside lower center", ncols=3, fontsize=7, frameon=False)
    fig.suptitle(title)
    return fig


def attention_example(tokens: list[str], rows: dict[str, np.ndarray], title: str) -> plt.Figure:
    """Table 1: one heat-map row per model ({label: weights over `tokens`}), tokens as column labels."""
    use_house_style()
    if not tokens or not rows:
        fig, ax = plt.subplots(figsize=(4, 2), layout="constrained")
        _no_data(ax)
        fig.suptitle(title)
        return fig
    matrix = np.stack([np.asarray(w, dtype=np.float64) for w in rows.values()])
    if matrix.shape[1] != len(tokens):
        raise ValueError(f"{matrix.shape[1]} weights for {len(tokens)} tokens")
    fig, ax = plt.subplots(figsize=(max(4.0, 0.22 * len(tokens) + 1.5), 0.5 * len(rows) + 1.6), layout="constrained")
    sns.heatmap(
        matrix,
        cmap="Reds",
        vmin=0,
        vmax=float(matrix.max()) or 1.0,
        cbar_kws={"label": "attention", "shrink": 0.8},
        xticklabels=tokens,
        yticklabels=list(rows),
        linewidths=0.3,
        linecolor="white",
        ax=ax,
    )
    ax.tick_params(axis="x", labelrotation=90, labelsize=6)
    ax.tick_params(axis="y", labelrotation=0)
    fitted_title(fig, title)
    return fig
