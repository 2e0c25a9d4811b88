"""Serrano & Smith's numbers of the debate matrix (`attnexp.experiments.debate_matrix`), per run: how
often erasing the top-attention item (or a random one) flips the decision, and the median share of
items removed before it flips in attention, gradient and random order."""

from __future__ import annotations

from pathlib import Path

from attnexp import io
from attnexp.papers.serrano_smith.summary import summarise_erasure, summarise_removal
from attnexp.plan import RunKey

__all__ = ["run_cells", "debate_cells"]


def run_cells(erasure: str | Path, removal: str | Path) -> dict[str, float]:
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


def debate_cells(erasure: list, removal: list) -> dict[RunKey, dict[str, float]]:
    """Per run with both files (read from their paths), its numbers."""
    erased = {RunKey.of_file(path): path for path in erasure}
    removed = {RunKey.of_file(path): path for path in removal}
    return {run: run_cells(erased[run], removed[run]) for run in sorted(erased.keys() & removed.keys())}
