"""The papers and extension studies the pipeline runs, each described once. Torch-free: run selection,
config validation, the scorecard and the debate matrix read these records before any job runs.

A `Paper` is one experiment family with its own config section (`jain_wallace:` …) and rule file: the
capabilities its models need, the dataset tasks it is defined for, how the scorecard reads its
published numbers (`anchors`), why its tolerances are what they are, its rows of the debate matrix,
and the config checks JSON Schema cannot express. `PAPERS` lists them in the order their tables and
rows appear; `register_paper` adds one. What other modules derive from the registry (the run plan's
requirements, the scorecard's protocols, the debate matrix's rows) are `RegistryView`s, read from
`PAPERS` at each lookup, so that a paper registered later is seen everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from attnexp.papers.attention_attribution import ATTENTION_ATTRIBUTION
from attnexp.papers.descriptor import PRETRAINED_VECTORS, JobSettings, Paper, Protocol
from attnexp.papers.faithfulness import FAITHFULNESS
from attnexp.papers.jain_wallace import JAIN_WALLACE
from attnexp.papers.serrano_smith import SERRANO_SMITH
from attnexp.papers.wiegreffe_pinter import WIEGREFFE_PINTER

__all__ = ["PRETRAINED_VECTORS", "Protocol", "Paper", "JobSettings", "PAPERS", "register_paper", "RegistryView"]

PAPERS: dict[str, Paper] = {
    p.key: p for p in (JAIN_WALLACE, SERRANO_SMITH, WIEGREFFE_PINTER, FAITHFULNESS, ATTENTION_ATTRIBUTION)
}


def register_paper(paper: Paper) -> Paper:
    """Add a paper to the registry, after those listed above; its key must be new."""
    if paper.key in PAPERS:
        raise ValueError(f"a paper with the key {paper.key!r} is registered already ({PAPERS[paper.key].title})")
    PAPERS[paper.key] = paper
    return paper


class RegistryView(Mapping):
    """A read-only mapping computed from `PAPERS` at each use (`derive(PAPERS)`), in its order."""

    def __init__(self, derive: Callable[[dict[str, Paper]], dict]):
        self._derive = derive

    def __getitem__(self, key):
        return self._derive(PAPERS)[key]

    def __iter__(self) -> Iterator:
        return iter(self._derive(PAPERS))

    def __len__(self) -> int:
        return len(self._derive(PAPERS))
