"""Faithfulness figure (ERASER, DeYoung et al. 2020), from the per-instance ERASER tables of
`attnexp.papers.faithfulness.experiment`: for one dataset, the perturbation curves whose mean height is
the AOPC, one column per model and unit (tokens; a HAN's sentences and tokens), comprehensiveness on
top and sufficiency below, one line per ranking with a band of ± one standard error over instances.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from attnexp.papers.faithfulness import RANKINGS

# attnexp.plots first: it picks the non-interactive backend before pyplot loads
from attnexp.plots import use_house_style

__all__ = ["RANKING_LABELS", "perturbation_curves"]

RANKING_LABELS = {name: label for name, (label, _) in RANKINGS.items()}
COLORS = dict(zip(RANKING_LABELS, sns.color_palette("colorblind", len(RANKING_LABELS))))
# a marker of its own per ranking: eight colours of one palette include near-identical pairs
MARKERS = dict(zip(RANKING_LABELS, ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")))
METRICS = {"comprehensiveness": "comprehensiveness ↑", "sufficiency": "sufficiency ↓"}  # arrow: more faithful


def perturbation_curves(tables: dict[str, pd.DataFrame], dataset: str, columns: int = 3) -> plt.Figure:
    """{model: eraser table} -> per model a pair of panels (comprehensiveness above sufficiency) of
    per-bin means with standard-error bands, at most `columns` models side by side (more wrap to
    the next band of rows, so that the text stays legible at the saved size)."""
    use_house_style()
    models = list(tables)
    cols = max(1, min(columns, len(models)))
    bands = max(1, -(-len(models) // cols))
    fig, axes = plt.subplots(
        2 * bands, cols, figsize=(3.6 * cols, 2.7 * 2 * bands), squeeze=False, layout="constrained"
    )
    for index in range(bands * cols):
        band, col = divmod(index, cols)
        if index >= len(models):
            for row in range(2):
                axes[2 * band + row, col].set_visible(False)
            continue
        model, table = models[index], tables[models[index]]
        unit = table["unit"].iloc[0] if "unit" in table and not table.empty else "tokens"
        for row, metric in enumerate(METRICS):
            ax = axes[2 * band + row, col]
            if row == 0:  # a HAN's label names its unit already ("han-rnn (seed 10), sentences")
                ax.set_title(model if unit == "tokens" or model.endswith(unit) else f"{model} ({unit})")
            else:
                ax.set_xlabel(f"bin b (top ⌈b·n⌉ {unit})")
            if col == 0:
                ax.set_ylabel(METRICS[metric])
            if table.empty:
                ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
                continue
            stats = table.groupby(["ranking", "bin"], sort=True)[metric].agg(["mean", "std", "count"]).reset_index()
            for ranking in [r for r in RANKING_LABELS if r in set(stats["ranking"])]:
                s = stats[stats["ranking"] == ranking]
                error = (s["std"] / np.sqrt(s["count"])).fillna(0.0)
                style = {"linestyle": "--"} if ranking == "random" else {}
                ax.plot(
                    s["bin"],
                    s["mean"],
                    marker=MARKERS[ranking],
                    markersize=4,
                    color=COLORS[ranking],
                    label=RANKING_LABELS[ranking],
                    **style,
                )
                ax.fill_between(
                    s["bin"], s["mean"] - error, s["mean"] + error, color=COLORS[ranking], alpha=0.2, linewidth=0
                )
            ax.set_xscale("log")
            ax.set_xticks(sorted(stats["bin"].unique()), [f"{b:g}" for b in sorted(stats["bin"].unique())])
            ax.minorticks_off()
            ax.axhline(0.0, color="0.5", linewidth=0.6)
    # every ranking any model has, in RANKING_LABELS order (HAN/FLAN have fewer than the others)
    shown = {label: handle for ax in axes.flat for handle, label in zip(*ax.get_legend_handles_labels())}
    labels = [label for label in RANKING_LABELS.values() if label in shown]
    handles = [shown[label] for label in labels]
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(handles), 4), frameon=False)
    fig.suptitle(f"{dataset}: ERASER perturbation curves (AOPC: mean over the bins)")
    return fig
