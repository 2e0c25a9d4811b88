"""Jain & Wallace's numbers of the debate matrix (`attnexp.experiments.debate_matrix`), per run: the mean
τ of attention with |gradient| and with leave-one-out, the median output change under permutation and
the mean ε-max JSD of the adversarial search."""

from __future__ import annotations

from pathlib import Path

from attnexp import io
from attnexp.plan import RunKey

__all__ = ["run_cells", "debate_cells"]


def run_cells(
    correlations: str | Path | None, permutation: str | Path | None, adversarial: str | Path | None
) -> dict[str, float]:
    """One run's numbers from whichever of its three files there are."""
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


def debate_cells(correlations: list, permutation: list, adversarial: list) -> dict[RunKey, dict[str, float]]:
    """Per run (read from each per-run file's path), its numbers."""
    files = {
        kind: {RunKey.of_file(path): str(path) for path in paths}
        for kind, paths in (("correlations", correlations), ("permutation", permutation), ("adversarial", adversarial))
    }
    runs = sorted(set().union(*files.values()))
    return {run: run_cells(*(files[kind].get(run) for kind in files)) for run in runs}
