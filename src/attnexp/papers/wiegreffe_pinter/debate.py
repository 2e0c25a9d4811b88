"""Wiegreffe & Pinter's numbers of the debate matrix (`attnexp.experiments.debate_matrix`), per base run,
from their tables (which hold every base run): test F1 of the model and of its uniform twin, the
diagnostic MLP's test F1 guided by the model's attention, with uniform attention and with its own,
and the model-consistent adversary's JSD from the model's attention."""

from __future__ import annotations

import pandas as pd

from attnexp.plan import RunKey

__all__ = ["run_cells", "debate_cells"]


def run_cells(
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


def debate_cells(
    uniform: pd.DataFrame | None, diagnostic: pd.DataFrame | None, adversary: pd.DataFrame | None
) -> dict[RunKey, dict[str, float]]:
    """Per run any of the tables holds, its numbers (a table not made: None)."""
    runs = set()
    for table in (uniform, diagnostic, adversary):
        if table is not None:
            runs |= {RunKey(r.dataset, r.model, int(r.seed)) for r in table.itertuples()}
    cells = {run: run_cells(run, uniform, diagnostic, adversary) for run in sorted(runs)}
    return {run: numbers for run, numbers in cells.items() if numbers}
