"""The debate matrix: each paper's test on each model, side by side.

The three papers argued over one recurrent model each; this project runs their tests through the
same code on every model with its own attention, the Transformer included. Each paper summarises what
its stage wrote for a run in one number per test, its *debate cells*: one small table per paper,
`results/debate_cells/<paper>.csv` (`Paper.debate_cells_file`), one row per run and measure
(`CELL_COLUMNS`), written by `write_debate_cells` from its own package (`attnexp.papers.<paper>.debate`):

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

This module merges those tables and knows no paper: the measures it shows, with the paper, what each
is and its `reading` (the direction in which a number supports attention as an explanation), are
handed to it, the papers' descriptors' rows (`attnexp.papers.DEBATE_MEASURES`). Nothing here
recomputes an experiment; a run a stage did not cover has no row for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp import io

__all__ = ["CELL_COLUMNS", "write_debate_cells", "read_debate_cells", "debate_matrix", "write_debate_matrix"]

CELL_COLUMNS = ["dataset", "model", "seed", "measure", "value"]  # a paper's debate cells, one row per number
# measure -> (paper, what it is, the reading in favour of attention as explanation), in row order
Measures = Mapping[str, tuple[str, str, str]]
# (dataset, model, seed): a paper's `attnexp.plan.RunKey`, here a plain tuple, as this module reads no plan
Run = tuple[str, str, int]


def write_debate_cells(path: str | Path, cells: Mapping[Run, Mapping[str, float]]) -> pd.DataFrame:
    """A paper's numbers of the debate matrix, per run: measure -> value. Written with every digit (not
    `io.write_csv`'s 6), so that the matrix shows the numbers the paper computed."""
    frame = pd.DataFrame(
        [(*run, measure, float(value)) for run, numbers in sorted(cells.items()) for measure, value in numbers.items()],
        columns=CELL_COLUMNS,
    )
    io.write_text(path, frame.to_csv(index=False), seal=True)
    return frame


def read_debate_cells(paths: list[str | Path], measures: Measures) -> dict[Run, dict[str, float]]:
    """Per run, the numbers of the papers' debate-cell tables; a table without the `CELL_COLUMNS` or with
    a measure no paper registers is an error naming the file."""
    cells: dict[Run, dict[str, float]] = {}
    for path in paths:
        table = io.read_table(path, dtype={"dataset": str, "model": str, "measure": str})
        if list(table.columns) != CELL_COLUMNS:
            raise ValueError(f"{path}: columns {list(table.columns)}, expected {CELL_COLUMNS} (debate cells)")
        unknown = sorted(set(table["measure"]) - set(measures))
        if unknown:
            raise ValueError(
                f"{path}: measures {unknown} are no paper's (expected some of {list(measures)}; register them in the paper's descriptor)"
            )
        for row in table.itertuples(index=False):
            cells.setdefault((row.dataset, row.model, int(row.seed)), {})[row.measure] = float(row.value)
    return cells


def debate_matrix(cells: list[str | Path], measures: Measures) -> pd.DataFrame:
    """The papers' debate-cell tables (`write_debate_cells`) -> tidy: one row per run and measure, runs
    sorted, each run's measures in `measures` order."""
    numbers = read_debate_cells(list(cells), measures)
    rows = [
        {
            **dict(zip(CELL_COLUMNS[:3], run)),
            "paper": paper,
            "measure": measure,
            "test": test,
            "value": numbers[run][measure],
            "reading": reading,
        }
        for run in sorted(numbers)
        for measure, (paper, test, reading) in measures.items()
        if measure in numbers[run]
    ]
    return pd.DataFrame(rows, columns=["dataset", "model", "seed", "paper", "measure", "test", "value", "reading"])


def _markdown(matrix: pd.DataFrame, measures: Measures) -> str:
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
        lines += [
            "",
            f"## {dataset}",
            "",
            "| paper | test | " + " | ".join(columns) + " | reading |",
            "|---|---|" + "---|" * len(columns) + "---|",
        ]
        for m in (m for m in measures if m in shown.index):
            paper, test, reading = measures[m]
            digits = 1 if test.endswith("%") else 3
            values = ["" if pd.isna(shown.loc[m].get(c, np.nan)) else f"{shown.loc[m, c]:.{digits}f}" for c in columns]
            lines.append(f"| {paper} | {test} | " + " | ".join(values) + f" | {reading} |")
    return "\n".join(lines) + "\n"


def write_debate_matrix(cells: list[str | Path], measures: Measures, out_csv, out_md) -> pd.DataFrame:
    matrix = debate_matrix(cells, measures)
    if matrix.empty:
        raise ValueError("the debate matrix has no numbers: no stage wrote results for any run")
    io.write_csv(out_csv, matrix, seal=True)
    io.write_text(out_md, _markdown(matrix, measures))
    return matrix
