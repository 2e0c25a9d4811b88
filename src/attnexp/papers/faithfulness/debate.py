"""The faithfulness battery's numbers of the debate matrix (`attnexp.experiments.debate_matrix`), per
run: AOPC-comprehensiveness and -sufficiency of the attention, leave-one-out and random rankings, and
where the battery wrote each instance's AOPC range, normalised to it."""

from __future__ import annotations

from pathlib import Path

from attnexp import io
from attnexp.papers.faithfulness.summary import aopc, primary_operator
from attnexp.plan import RunKey

__all__ = ["run_cells", "debate_cells"]


def run_cells(eraser: str | Path) -> dict[str, float]:
    frame = primary_operator(io.read_table(eraser, dtype={"id": str, "ranking": str, "unit": str, "operator": str}))
    if frame.empty:  # no test instance has two units: the battery scored none
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


def debate_cells(eraser: list) -> dict[RunKey, dict[str, float]]:
    """Per run (read from the path of its eraser.csv), its numbers."""
    return {run: run_cells(path) for run, path in sorted((RunKey.of_file(path), path) for path in eraser)}
