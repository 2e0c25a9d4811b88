"""Jain & Wallace (2019) figures (their §5–§6), from the per-instance and summary
tables of `attnexp.papers.jain_wallace.experiment`: the τ histograms, τ densities and τ differences, the
permutation violins, the adversarial JSD histogram and violins, the encoder comparison, and the
ground-truth bars of `synthetic` and the planted datasets.

Every function takes a table, returns a Figure and never fails on a small or degenerate table (one
class, a handful of instances, undefined τ): empty panels say "no data", constant samples are drawn
as a line where a density is undefined.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Patch

from attnexp.papers.jain_wallace.correlations import PAIRS as CORRELATED_PAIRS
from attnexp.plan import EXPLANATION_METHODS, SELF_ATTENTION_METHODS

# attnexp.plots first: it picks the non-interactive backend before pyplot loads
from attnexp.plots import use_house_style

__all__ = [
    "tau_histograms",
    "tau_densities",
    "tau_differences",
    "permutation_violin",
    "adversarial_histogram",
    "adversarial_violin",
    "encoder_comparison",
    "ground_truth_bars",
]

# The pairs as the correlation tables write them, and the explanation methods every attention model has
PAIRS = tuple(f"{a}~{b}" for a, b in CORRELATED_PAIRS)
METHODS = tuple(m for m in EXPLANATION_METHODS if m not in SELF_ATTENTION_METHODS)
ENCODERS = ("lstm", "average", "cnn")  # J&W compare BiLSTM with Average first

CLASS = "predicted class"  # the hue column, and so the legend title, of class-coloured figures
TAU_BINS = np.linspace(-1, 1, 41)
JSD_BINS = np.linspace(0, 0.7, 41)  # JSD (natural log) <= ln 2 ≈ 0.693
PEAKEDNESS = "max attention"
PEAKEDNESS_EDGES = (0.25, 0.5, 0.75)
PEAKEDNESS_LABELS = ("[0.00, 0.25)", "[0.25, 0.50)", "[0.50, 0.75)", "[0.75, 1.00]")

# A colour belongs to a class index / pair / method, not to its position in one table, so that it
# means the same thing in every figure even when some classes or pairs are absent.
COLORS = sns.color_palette("colorblind", 10)
PAIR_COLORS = dict(zip(PAIRS, COLORS))
METHOD_COLORS = dict(zip(METHODS, COLORS))


def _tau_label(pair: str) -> str:
    first, second = pair.split("~")
    return f"τ({first}, {second})"


def _ordered(values, preferred: tuple) -> list:
    """`preferred` first (those present), then the rest sorted."""
    present = set(values)
    return [v for v in preferred if v in present] + sorted(present - set(preferred))


def _with_classes(table: pd.DataFrame, names: list[str] | None = None) -> tuple[pd.DataFrame, list[str], dict]:
    """Add CLASS as text (seaborn puts numbers on a colour gradient): each predicted class index as its
    name in `names` (the model's classes, e.g. bAbI's locations), else as the index; and return the
    classes in index order with their colours."""
    predicted = table["predicted"].astype(int)
    indices = sorted(predicted.unique())
    label = {c: names[c] if names is not None and 0 <= c < len(names) else str(c) for c in indices}
    palette = {label[c]: COLORS[c % len(COLORS)] for c in indices}
    return table.assign(**{CLASS: predicted.map(label)}), [label[c] for c in indices], palette


def _no_data(ax: plt.Axes) -> None:
    ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="0.5")


def _require_unique(table: pd.DataFrame, keys: list[str], name: str) -> None:
    duplicated = table[table.duplicated(keys, keep=False)]
    if len(duplicated):
        first = duplicated.iloc[0]
        raise ValueError(
            f"{name}: more than one row for {', '.join(f'{k}={first[k]}' for k in keys)} (one per {keys} expected)"
        )


def _base_seed(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Only the lowest seed of each `keys` combination, when the table has a seed column: a bar
    stands for one trained model, as in J&W; the tables list every seed."""
    if "seed" not in table.columns or table.empty:
        return table
    return table[table["seed"] == table.groupby(keys)["seed"].transform("min")]


def _overall(summary: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The "Overall" row (n, mean, std) of each `keys` combination. Where a summary has per-class
    rows only (`summarise_correlations` groups binary tasks by predicted class), it is pooled from
    them exactly: n-weighted mean, and the population std (ddof=0, as the summaries) from the
    within- and between-class spread."""
    overall = summary[summary["group"] == "Overall"][keys + ["n", "mean", "std"]]
    covered = set(overall[keys].itertuples(index=False, name=None))
    pooled = []
    for key, classes in summary[summary["group"] != "Overall"].groupby(keys, sort=True):
        if key in covered:
            continue
        classes = classes[(classes["n"] > 0) & classes["mean"].notna()]
        n, mean, std = (
            classes["n"].to_numpy(np.float64),
            classes["mean"].to_numpy(np.float64),
            classes["std"].to_numpy(np.float64),
        )
        total = n.sum()
        grand = (n * mean).sum() / total if total else np.nan
        spread = np.sqrt((n * (std**2 + (mean - grand) ** 2)).sum() / total) if total else np.nan
        pooled.append(dict(zip(keys, key)) | {"n": int(total), "mean": grand, "std": spread})
    return pd.concat([overall, pd.DataFrame(pooled, columns=keys + ["n", "mean", "std"])], ignore_index=True)


def _density(ax: plt.Axes, values, label: str, color, support: tuple[float, float]) -> None:
    """A KDE curve cut to `support`. A KDE needs two distinct values: one value is drawn as a
    vertical line, none only as a legend entry, so the legend always lists every curve with its n."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    label = f"{label} (n={len(values)})"
    lines_before = len(ax.lines)
    if len(np.unique(values)) >= 2:
        sns.kdeplot(x=values, ax=ax, color=color, label=label, clip=support, warn_singular=False)
    if len(ax.lines) > lines_before:
        return
    if len(values):  # constant sample, or a spread too small for seaborn's bandwidth
        ax.axvline(float(np.median(values)), color=color, linestyle="--", label=label)
    else:
        ax.plot([], [], color=color, label=label)


def _legend_outside(fig: plt.Figure, colors: dict, title: str) -> None:
    """One legend for all panels, right of them (inside, it would hide bars), made from `colors`
    because a panel may lack some bars."""
    if colors:
        fig.legend(
            handles=[Patch(color=color, label=label) for label, color in colors.items()],
            title=title,
            loc="outside right upper",
        )


def _grouped_bars(
    ax: plt.Axes,
    table: pd.DataFrame,
    *,
    x: str,
    x_order: list,
    hue: str,
    hue_order: list,
    colors: dict,
    mean: str,
    std: str,
    bounds: tuple[float, float] | None = None,
) -> None:
    """mean ± std bars at fixed positions: one group per `x`, one bar per `hue`; a missing
    combination is marked "n/a", an undefined std gets no error bar; with `bounds` (a metric's range)
    the error bars stop at them. Long group labels are slanted so that they never collide."""
    if not x_order:
        _no_data(ax)
        return
    width = 0.8 / len(hue_order)
    positions = np.arange(len(x_order), dtype=np.float64)
    for i, level in enumerate(hue_order):
        cells = table[table[hue] == level].set_index(x).reindex(x_order)
        heights, errors = cells[mean].to_numpy(np.float64), cells[std].to_numpy(np.float64)
        at = positions + (i - (len(hue_order) - 1) / 2) * width
        drawn = np.isfinite(heights)
        ax.bar(at[drawn], heights[drawn], width=width, color=colors[level], label=level)
        for position in at[~drawn]:
            ax.annotate(
                "n/a",
                (position, 0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                rotation=90,
                fontsize="x-small",
                color="0.4",
            )
        with_error = drawn & np.isfinite(errors)
        low, high = errors[with_error], errors[with_error]
        if bounds is not None:
            low = np.minimum(low, heights[with_error] - bounds[0])
            high = np.minimum(high, bounds[1] - heights[with_error])
        ax.errorbar(
            at[with_error], heights[with_error], yerr=[low, high], fmt="none", ecolor="0.2", elinewidth=0.8, capsize=2
        )
    crowded = len(x_order) > 4 or sum(len(str(label)) for label in x_order) > 36
    ax.set_xticks(
        positions, x_order, rotation=30 if crowded else 0, ha="right" if crowded else "center", rotation_mode="anchor"
    )
    ax.set_xlim(-0.5, len(x_order) - 0.5)


# ---------------------------------------------------------------------------------------------
# Correlations (§5.3)


def tau_histograms(correlations: pd.DataFrame, title: str, classes: list[str] | None = None) -> plt.Figure:
    """τ histograms: per-instance τ(attention, gradient) and τ(attention, loo), stacked by predicted class."""
    use_house_style()
    table, classes, palette = _with_classes(correlations.dropna(subset=["tau"]), classes)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharex=True, sharey=True, layout="constrained")
    for ax, pair in zip(axes, ("attention~gradient", "attention~loo")):
        part = table[table["pair"] == pair]
        if part.empty:
            _no_data(ax)
        else:
            sns.histplot(
                part, x="tau", hue=CLASS, hue_order=classes, palette=palette, bins=TAU_BINS, multiple="stack", ax=ax
            )
        ax.set(xlim=(-1, 1), xlabel="Kendall τ", ylabel="instances", title=_tau_label(pair))
    fig.suptitle(title)
    return fig


def tau_densities(correlations: pd.DataFrame, title: str) -> plt.Figure:
    """τ densities: the density of τ over instances, one curve per pair (attention~ig when computed)."""
    use_house_style()
    present = set(correlations["pair"])
    pairs = [
        p
        for p in ("attention~loo", "attention~gradient", "gradient~loo", "attention~ig")
        if p != "attention~ig" or p in present
    ]
    fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
    for pair in pairs:
        _density(
            ax,
            correlations.loc[correlations["pair"] == pair, "tau"],
            _tau_label(pair),
            PAIR_COLORS[pair],
            support=(-1, 1),
        )
    ax.set(xlim=(-1, 1), xlabel="Kendall τ", ylabel="density")
    ax.set_ylim(bottom=0)  # with only lines (no curve) the axis would otherwise centre on 0
    ax.legend(loc="upper left")
    fig.suptitle(title)
    return fig


def tau_differences(correlations: pd.DataFrame, title: str) -> plt.Figure:
    """τ differences: per instance, how much more gradients agree with LOO than attention does:
    τ(gradient, loo) − τ(attention, loo) and τ(gradient, loo) − τ(attention, gradient)."""
    use_house_style()
    _require_unique(correlations, ["id", "pair"], "correlations")
    tau = correlations.pivot(index="id", columns="pair", values="tau")
    tau = tau.reindex(columns=["gradient~loo", "attention~loo", "attention~gradient"])  # absent pairs -> NaN
    differences = {
        "τ(gradient, loo) − τ(attention, loo)": tau["gradient~loo"] - tau["attention~loo"],
        "τ(gradient, loo) − τ(attention, gradient)": tau["gradient~loo"] - tau["attention~gradient"],
    }
    fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
    for (label, difference), color in zip(differences.items(), COLORS):
        _density(ax, difference, label, color, support=(-2, 2))
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set(xlim=(-2, 2), xlabel="difference of Kendall τ", ylabel="density")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")
    fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------------------------
# Permutation (§5.4) and adversarial attention (§5.5)


def _peakedness_violin(
    table: pd.DataFrame, value: str, value_label: str, title: str, classes: list[str] | None = None
) -> plt.Figure:
    """Horizontal violins of `value` per max-attention bin, split by predicted class; every bin is
    shown, in order, even when empty."""
    use_house_style()
    table, classes, palette = _with_classes(table.dropna(subset=[value, "max_attention"]), classes)
    bins = np.searchsorted(PEAKEDNESS_EDGES, table["max_attention"].to_numpy(np.float64), side="right")
    table = table.assign(**{PEAKEDNESS: pd.Categorical.from_codes(bins, categories=PEAKEDNESS_LABELS)})
    fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
    if table.empty:
        _no_data(ax)
        ax.set_yticks(range(len(PEAKEDNESS_LABELS)), PEAKEDNESS_LABELS)
        ax.set_ylim(len(PEAKEDNESS_LABELS) - 0.5, -0.5)  # first bin on top, as seaborn draws it
    else:
        # density_norm="width": bins hold very different numbers of instances, and the shape of a
        # small bin should stay readable; cut=0 keeps each violin within its observed range.
        sns.violinplot(
            table,
            x=value,
            y=PEAKEDNESS,
            order=PEAKEDNESS_LABELS,
            hue=CLASS,
            hue_order=classes,
            palette=palette,
            split=len(classes) == 2,
            cut=0,
            inner="quart",
            density_norm="width",
            orient="h",
            linewidth=0.8,
            ax=ax,
        )
    ax.set(xlabel=value_label, ylabel=PEAKEDNESS)
    ax.set_xlim(left=0)  # both quantities are >= 0; an all-zero sample would centre the axis on 0
    _class_legend_outside(ax, classes)
    fig.suptitle(title)
    return fig


def _class_legend_outside(ax: plt.Axes, classes: list) -> None:
    """The predicted-class legend right of the axes: inside, a QA model's many answer classes (bAbI)
    covered the data."""
    if ax.get_legend() is not None:
        sns.move_legend(
            ax, "upper left", bbox_to_anchor=(1.01, 1.0), ncols=1 + (len(classes) - 1) // 12, title=CLASS, frameon=False
        )


def permutation_violin(permutation: pd.DataFrame, title: str, classes: list[str] | None = None) -> plt.Figure:
    """Permutation violins: median output change under permutation against the peak of the model's attention."""
    return _peakedness_violin(permutation, "median_output_difference", "median output difference Δŷ", title, classes)


def adversarial_histogram(adversarial: pd.DataFrame, title: str, classes: list[str] | None = None) -> plt.Figure:
    """Adversarial histogram: ε-max JSD, each class's histogram normalised to sum to 1."""
    use_house_style()
    table, classes, palette = _with_classes(adversarial.dropna(subset=["eps_max_jsd"]), classes)
    fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
    if table.empty:
        _no_data(ax)
    else:
        sns.histplot(
            table,
            x="eps_max_jsd",
            hue=CLASS,
            hue_order=classes,
            palette=palette,
            bins=JSD_BINS,
            stat="probability",
            common_norm=False,
            element="step",
            ax=ax,
        )
    ax.set(xlim=(0, 0.7), xlabel="ε-max JSD", ylabel="fraction of instances")
    _class_legend_outside(ax, classes)
    fig.suptitle(title)
    return fig


def adversarial_violin(adversarial: pd.DataFrame, title: str, classes: list[str] | None = None) -> plt.Figure:
    """Adversarial violins: ε-max JSD against the peak of the model's attention."""
    return _peakedness_violin(adversarial, "eps_max_jsd", "ε-max JSD", title, classes)


# ---------------------------------------------------------------------------------------------
# Across datasets and models


def encoder_comparison(summary: pd.DataFrame, title: str = "Kendall τ by encoder, tanh attention") -> plt.Figure:
    """Encoder comparison: mean τ ± std per dataset, one bar per encoder of the `<encoder>-tanh` models; one panel
    for τ(attention, gradient), one for τ(attention, loo). Uses the "Overall" rows (pooled from the
    per-class rows where there is none) of the lowest seed of each model."""
    use_house_style()
    rows = _base_seed(summary[summary["model"].str.endswith("-tanh")], ["dataset", "model"])
    rows = _overall(rows, ["dataset", "model", "pair"])
    # removesuffix rather than split("-"): encoders such as han-rnn contain a hyphen themselves
    rows = rows.assign(encoder=rows["model"].str.removesuffix("-tanh"))
    _require_unique(rows, ["dataset", "encoder", "pair"], "summary")
    datasets = sorted(rows["dataset"].unique())
    encoders = _ordered(rows["encoder"].unique(), ENCODERS)
    colors = {e: COLORS[i % len(COLORS)] for i, e in enumerate(encoders)}
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True, layout="constrained")
    for ax, pair in zip(axes, ("attention~gradient", "attention~loo")):
        _grouped_bars(
            ax,
            rows[rows["pair"] == pair],
            x="dataset",
            x_order=datasets,
            hue="encoder",
            hue_order=encoders,
            colors=colors,
            mean="mean",
            std="std",
        )
        ax.axhline(0, color="0.3", linewidth=0.8)
        ax.set(xlabel="dataset", ylabel="mean Kendall τ ± std", title=_tau_label(pair))
    _legend_outside(fig, colors, "encoder")
    fig.suptitle(title)
    return fig


def ground_truth_bars(summary: pd.DataFrame, title: str = "Explanations against the planted cues") -> plt.Figure:
    """Mean ± std over instances of precision@|G|, AUPRC and mass on G, per model
    and explanation method. Uses the "Overall" rows of the lowest seed of each model; several
    datasets become "dataset / model"."""
    use_house_style()
    rows = _base_seed(summary[summary["group"] == "Overall"], ["dataset", "model"])
    _require_unique(rows, ["dataset", "model", "method"], "summary")
    keys = sorted(set(zip(rows["dataset"], rows["model"])))
    several = len({dataset for dataset, _ in keys}) > 1
    # a planted model below its dev-accuracy gate stays visible, marked as failed
    accepted = rows["accepted"] if "accepted" in rows else [True] * len(rows)
    failed = {(d, m) for d, m, ok in zip(rows["dataset"], rows["model"], accepted) if not ok}
    name = {(d, m): (f"{d} / {m}" if several else m) + (" (failed)" if (d, m) in failed else "") for d, m in keys}
    rows = rows.assign(column=[name[k] for k in zip(rows["dataset"], rows["model"])])
    columns = [name[k] for k in keys]
    methods = _ordered(rows["method"].unique(), METHODS)
    colors = {m: METHOD_COLORS.get(m, COLORS[(len(METHODS) + i) % len(COLORS)]) for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True, layout="constrained")
    for ax, (metric, label) in zip(
        axes, (("precision", "precision@|G|"), ("auprc", "AUPRC"), ("mass", "attribution mass on G"))
    ):
        _grouped_bars(
            ax,
            rows,
            x="column",
            x_order=columns,
            hue="method",
            hue_order=methods,
            colors=colors,
            mean=f"{metric}_mean",
            std=f"{metric}_std",
            bounds=(0.0, 1.0),
        )
        ax.set(xlabel="model", ylabel="mean ± std (within [0, 1])", title=label, ylim=(0, 1.05))
    _legend_outside(fig, colors, "method")
    fig.suptitle(title)
    return fig
