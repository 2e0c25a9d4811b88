"""Figures of Hao et al. (2021) on the Transformer, from the tables of
`attnexp.papers.attention_attribution.experiment`: the head-pruning curve (test accuracy against the share
of heads pruned, by attribution, by attention and by random orders with a ± sd band) and the
attribution graph of one example (tokens on the x-axis, layers on the y-axis).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

# attnexp.plots first: it picks the non-interactive backend before pyplot loads
from attnexp.plots import use_house_style

__all__ = ["pruning_figure", "graph_figure"]

ORDER_LABELS = {
    "attribution": "by attribution (Hao et al.)",
    "attention": "by max attention",
    "random": "random orders (mean ± sd)",
}
COLORS = dict(zip(ORDER_LABELS, sns.color_palette("colorblind", len(ORDER_LABELS))))
# curves often coincide: each order has its own marker and line style, and attribution is drawn on top
STYLES = {
    "attribution": {"marker": "o", "markersize": 4, "linestyle": "-", "linewidth": 1.6, "zorder": 3},
    "attention": {
        "marker": "s",
        "markersize": 7,
        "markerfacecolor": "none",
        "linestyle": "-.",
        "linewidth": 1.4,
        "zorder": 2,
    },
    "random": {"marker": "^", "markersize": 4, "linestyle": "--", "linewidth": 1.2, "zorder": 1},
}


def pruning_figure(curves: pd.DataFrame, title: str) -> plt.Figure:
    """curves (order, draw, fraction, heads_pruned, accuracy) -> accuracy against the pruned share."""
    use_house_style()
    fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
    for order in [o for o in ORDER_LABELS if o in set(curves["order"])]:
        stats = curves[curves["order"] == order].groupby("fraction")["accuracy"].agg(["mean", "std"]).reset_index()
        ax.plot(stats["fraction"], stats["mean"], color=COLORS[order], label=ORDER_LABELS[order], **STYLES[order])
        if order == "random":
            sd = stats["std"].fillna(0.0)
            ax.fill_between(
                stats["fraction"], stats["mean"] - sd, stats["mean"] + sd, color=COLORS[order], alpha=0.2, linewidth=0
            )
    ax.set_xlabel("fraction of heads pruned (least important first)")
    ax.set_ylabel("test accuracy")
    ax.set_title(title)
    ax.legend(frameon=False, loc="lower left")
    return fig


def graph_figure(graphs: list[dict], layers: int, title: str) -> plt.Figure:
    """One panel per example: a node per (layer, token) an edge reaches, edges (l-1, j) -> (l, i)
    drawn with a width and opacity growing with their normalised score. No examples (no test instance
    has 2 to `attention_attribution.graph_max_tokens` tokens): one panel that says so."""
    use_house_style()
    fig, axes = plt.subplots(
        max(1, len(graphs)),
        1,
        figsize=(7.2, 2.2 + 0.5 * layers * max(1, len(graphs))),
        squeeze=False,
        layout="constrained",
    )
    if not graphs:
        message = "no example: no test instance has from 2 to attention_attribution.graph_max_tokens tokens"
        axes[0, 0].text(0.5, 0.5, message, ha="center", va="center", transform=axes[0, 0].transAxes)
        axes[0, 0].set_axis_off()
    for ax, graph in zip(axes[:, 0], graphs):
        tokens = graph["tokens"]
        for edge in graph["edges"]:
            strength = min(1.0, edge["score"])
            ax.plot(
                [edge["j"], edge["i"]],
                [edge["layer"] - 1, edge["layer"]],
                color="C0",
                alpha=0.3 + 0.7 * strength,
                linewidth=0.5 + 2 * strength,
            )
            ax.scatter([edge["j"], edge["i"]], [edge["layer"] - 1, edge["layer"]], s=12, color="0.2", zorder=3)
        ax.set_xticks(range(len(tokens)), tokens, rotation=60, fontsize=7)
        ax.set_yticks(range(layers + 1), ["input", *(f"layer {layer}" for layer in range(1, layers + 1))])
        ax.set_xlim(-0.5, len(tokens) - 0.5)
        ax.set_ylim(-0.3, layers + 0.3)
        ax.set_title(
            f"{graph['id']}: label {graph['label']}, predicted {graph['predicted']}, root {tokens[graph['root']]!r}",
            fontsize=8,
        )
    fig.suptitle(title)
    return fig
