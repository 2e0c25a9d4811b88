"""The debate matrix: each paper's test on each model, side by side.

The three papers argued over one recurrent model each; this project runs their tests through the
same code on every model with its own attention, the Transformer included. This module reads what
each stage already wrote for a run and summarises it in one number per test:

    Jain & Wallace      mean τ(attention, |gradient|), mean τ(attention, LOO), the median output
                        change under permutation, the mean ε-max JSD of the adversarial search
    Serrano & Smith     how often erasing the top-attention item (or a random one) flips the
                        decision; the median share of items removed before the decision flips, in
                        attention, gradient and random order
    Wiegreffe & Pinter  test F1 of the model and of its uniform twin; the diagnostic MLP's test F1
                        guided by the model's attention, with uniform attention and with its own;
                        the model-consistent adversary's JSD from the model's attention
    faithfulness        AOPC-comprehensiveness and -sufficiency of attention, leave-one-out and
                        random rankings (ERASER)

`reading` says which way a number points: the direction in which it supports attention as an
explanation. Nothing here recomputes an experiment; a run a stage did not cover has no row for it.

The rows are the measures of the papers' descriptors (`attnexp.papers`, `Paper.measures`). A paper
added later gives its numbers as one small table per run, `debate_cells.csv` (columns `measure`,
`value`, its run read from the path as every other file's), registered in the rule file's
`DEBATE_INPUTS` as `("cells", path)`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from attnexp import io
from attnexp.papers import RegistryView
from attnexp.papers.faithfulness.summary import aopc, primary_operator
from attnexp.papers.serrano_smith.summary import summarise_erasure, summarise_removal
from attnexp.plan import RunKey

__all__ = [
    "MEASURES",
    "jain_wallace_cells",
    "serrano_smith_cells",
    "faithfulness_cells",
    "wiegreffe_pinter_cells",
    "registered_cells",
    "debate_matrix",
    "write_debate_matrix",
]

# measure -> (paper, what it is, the reading in favour of attention as explanation): each paper's
# rows (`attnexp.papers`), in the papers' order
MEASURES = RegistryView(
    lambda papers: {key: (paper.title, *row) for paper in papers.values() for key, row in paper.measures.items()}
)

# ---------------------------------------------------------------------------------------------
# One stage's files of one run -> its numbers


def jain_wallace_cells(
    correlations: str | Path | None, permutation: str | Path | None, adversarial: str | Path | None
) -> dict[str, float]:
    cells = {}
    if correlations is not None:
        table = io.read_table(correlations)
        for key, pair in (("jw_tau_gradient", "attention~gradient"), ("jw_tau_loo", "attention~loo")):
            cells[key] = float(table.loc[table["pair"] == pair, "tau"].dropna().mean())
    if permutation is not None:
        cells["jw_permutation"] = float(io.read_table(permutation)["median_output_difference"].median())
    if adversarial is not None:
        cells["jw_adversarial_jsd"] = float(io.read_table(adversarial)["eps_max_jsd"].mean())
    return cells


def serrano_smith_cells(erasure: str | Path, removal: str | Path) -> dict[str, float]:
    """The run's S&S numbers; none where it had nothing to erase (every test instance has a single item)."""
    erased, removed = (io.read_table(path, dtype={"id": str}) for path in (erasure, removal))
    if erased.empty or removed.empty:
        return {}
    single = summarise_erasure(erased).set_index("top_by").loc["attention"]
    ordered = summarise_removal(removed).set_index("ranking")
    return {
        "ss_flip_top": float(single["pct_both_flip"] + single["pct_only_top_flips"]),
        "ss_flip_random": float(single["pct_both_flip"] + single["pct_only_random_flips"]),
        **{
            f"ss_fraction_{name}": float(ordered.loc[name, "fraction_median"])
            for name in ("attention", "gradient", "random")
        },
        "ss_no_flip_attention": float(ordered.loc["attention", "pct_no_flip"]),
    }


def faithfulness_cells(eraser: str | Path) -> dict[str, float]:
    """The run's ERASER numbers; none where no test instance has two units (the battery scores none)."""
    frame = primary_operator(io.read_table(eraser, dtype={"id": str, "ranking": str, "unit": str, "operator": str}))
    if frame.empty:
        return {}
    # the units the model attends to (written first); a HAN's token rows are in the AOPC table
    table = aopc(frame[frame["unit"] == frame["unit"].iloc[0]]).set_index("ranking")
    cells = {}
    for name in ("attention", "loo", "random"):
        if name in table.index:
            cells[f"ff_comp_{name}"] = float(table.loc[name, "aopc_comprehensiveness"])
            if name != "loo":
                cells[f"ff_suff_{name}"] = float(table.loc[name, "aopc_sufficiency"])
    if "aopc_comprehensiveness_normalised" in table:  # an eraser.csv with each instance's AOPC range
        for name, metrics in (("attention", ("comp", "suff")), ("random", ("comp",))):
            for metric in metrics if name in table.index else ():
                column = {"comp": "aopc_comprehensiveness", "suff": "aopc_sufficiency"}[metric]
                cells[f"ff_{metric}_{name}_normalised"] = float(table.loc[name, f"{column}_normalised"])
    return cells


def wiegreffe_pinter_cells(
    run: RunKey, uniform: pd.DataFrame | None, diagnostic: pd.DataFrame | None, adversary: pd.DataFrame | None
) -> dict[str, float]:
    """The W&P tables' rows of one base run (none when W&P did not take it as a base)."""

    def rows(table):
        if table is None or table.empty:
            return table
        return table[(table["dataset"] == run.dataset) & (table["model"] == run.model) & (table["seed"] == run.seed)]

    cells = {}
    u, d, a = rows(uniform), rows(diagnostic), rows(adversary)
    if u is not None and len(u):
        cells |= {"wp_f1": float(u["base_f1"].iloc[0]), "wp_uniform_f1": float(u["uniform_f1"].iloc[0])}
    if d is not None and len(d):
        f1 = d.set_index("guide")["f1"]
        cells |= {
            "wp_mlp_guided_f1": float(f1["base"]),
            "wp_mlp_uniform_f1": float(f1["uniform"]),
            "wp_mlp_trained_f1": float(f1["trained"]),
        }
    if a is not None and len(a):
        cells["wp_adversary_jsd"] = float(a["jsd"].iloc[0])
    return cells


# ---------------------------------------------------------------------------------------------
# Every run -> the matrix


def _by_run(paths: list[str | Path]) -> dict[RunKey, str]:
    return {RunKey.of_file(p): str(p) for p in paths}


def registered_cells(paths: list[str | Path]) -> dict[RunKey, dict[str, float]]:
    """Per run, the numbers of the `debate_cells.csv` tables (measure, value) of papers that give
    theirs that way; a measure no paper registers is an error naming the file."""
    cells: dict[RunKey, dict[str, float]] = {}
    for path in paths:
        table = io.read_table(path)
        unknown = sorted(set(table["measure"]) - set(MEASURES))
        if unknown:
            raise ValueError(
                f"{path}: measures {unknown} are no paper's (expected some of {list(MEASURES)}; register them in the paper's descriptor)"
            )
        cells.setdefault(RunKey.of_file(path), {}).update(zip(table["measure"], table["value"].astype(float)))
    return cells


def debate_matrix(
    files: dict[str, list[str | Path]], uniform=None, diagnostic=None, adversary=None, cells: list[str | Path] = ()
) -> pd.DataFrame:
    """files: kind -> per-run files (kinds `jw_correlations`, `jw_permutation`, `jw_adversarial`,
    `ss_erasure`, `ss_removal`, `ff_eraser`); the W&P tables as data frames (or None); `cells`: the
    `debate_cells.csv` of papers registered later (`registered_cells`). -> tidy: one row per run
    and measure, in `MEASURES` order."""
    unknown = set(files) - {
        "jw_correlations",
        "jw_permutation",
        "jw_adversarial",
        "ss_erasure",
        "ss_removal",
        "ff_eraser",
    }
    if unknown:
        raise ValueError(f"unknown kinds of debate-matrix input: {sorted(unknown)}")
    by_kind = {kind: _by_run(paths) for kind, paths in files.items()}
    wp_runs = set()
    for table in (uniform, diagnostic, adversary):
        if table is not None:
            wp_runs |= {RunKey(r.dataset, r.model, int(r.seed)) for r in table.itertuples()}
    registered = registered_cells(list(cells))
    runs = sorted(set().union(*(set(v) for v in by_kind.values())) | wp_runs | set(registered))
    rows = []
    for run in runs:
        get = lambda kind: by_kind.get(kind, {}).get(run)  # noqa: E731
        numbers = jain_wallace_cells(get("jw_correlations"), get("jw_permutation"), get("jw_adversarial"))
        if get("ss_erasure") and get("ss_removal"):
            numbers |= serrano_smith_cells(get("ss_erasure"), get("ss_removal"))
        if get("ff_eraser"):
            numbers |= faithfulness_cells(get("ff_eraser"))
        numbers |= wiegreffe_pinter_cells(run, uniform, diagnostic, adversary) | registered.get(run, {})
        for measure, (paper, test, reading) in MEASURES.items():
            if measure in numbers:
                rows.append(
                    {
                        **run._asdict(),
                        "paper": paper,
                        "measure": measure,
                        "test": test,
                        "value": numbers[measure],
                        "reading": reading,
                    }
                )
    return pd.DataFrame(rows, columns=["dataset", "model", "seed", "paper", "measure", "test", "value", "reading"])


def _markdown(matrix: pd.DataFrame) -> str:
    """Per dataset: one row per test, one column per model (seed); percentages to 1 decimal, the rest to 3."""
    lines = [
        "# The debate matrix: every paper's test on every model",
        "",
        "Each row is one test of attention as explanation, each column a trained model; `reading` says which",
        "way a number supports attention as an explanation. A blank cell: that stage did not run the model.",
    ]
    for dataset, part in matrix.groupby("dataset", sort=True):
        part = part.assign(
            column=part["model"] + (" seed" + part["seed"].astype(str) if part["seed"].nunique() > 1 else "")
        )
        columns = list(dict.fromkeys(part["column"]))
        shown = part.pivot_table(index="measure", columns="column", values="value", aggfunc="first")
        measures = [m for m in MEASURES if m in shown.index]
        lines += [
            "",
            f"## {dataset}",
            "",
            "| paper | test | " + " | ".join(columns) + " | reading |",
            "|---|---|" + "---|" * len(columns) + "---|",
        ]
        for m in measures:
            paper, test, reading = MEASURES[m]
            digits = 1 if test.endswith("%") else 3
            values = ["" if pd.isna(shown.loc[m].get(c, np.nan)) else f"{shown.loc[m, c]:.{digits}f}" for c in columns]
            lines.append(f"| {paper} | {test} | " + " | ".join(values) + f" | {reading} |")
    return "\n".join(lines) + "\n"


def write_debate_matrix(
    files: dict[str, list[str]],
    uniform_csv=None,
    diagnostic_csv=None,
    adversary_csv=None,
    out_csv=None,
    out_md=None,
    cells: list[str] = (),
) -> pd.DataFrame:
    read = lambda path: None if path is None else io.read_table(path)  # noqa: E731
    matrix = debate_matrix(files, read(uniform_csv), read(diagnostic_csv), read(adversary_csv), cells)
    if matrix.empty:
        raise ValueError("the debate matrix has no numbers: no stage wrote results for any run")
    io.write_csv(out_csv, matrix, seal=True)
    io.write_text(out_md, _markdown(matrix))
    return matrix
