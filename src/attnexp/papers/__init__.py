"""The papers and extension studies the pipeline runs, each described once. Torch-free: run selection,
config validation, the scorecard and the debate matrix read these records before any job runs.

A `Paper` is one experiment family with its own package (`attnexp.papers.jain_wallace` …), rule file and,
mostly, config section: the capabilities its models need, the dataset tasks it is defined for, how the
scorecard reads its published numbers (`anchors`), why its tolerances are what they are, its rows of
the debate matrix, and the config checks JSON Schema cannot express. Nothing lists the papers: each
subpackage here whose `__init__` defines a `Paper` with the subpackage's name as its key is one, and
`PAPERS` holds them in their `order` (that of their claims, tables and rows); `register_paper` adds
one from elsewhere. What other modules derive from the registry (the run plan's requirements, the
scorecard's protocols, the debate matrix's rows) are `RegistryView`s, read from `PAPERS` at each
lookup, so that a paper registered later is seen everywhere.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping

from attnexp.papers.descriptor import PRETRAINED_VECTORS, JobSettings, Paper, Protocol

__all__ = [
    "PRETRAINED_VECTORS",
    "Protocol",
    "Paper",
    "JobSettings",
    "PAPERS",
    "DEBATE_MEASURES",
    "discover_papers",
    "register_paper",
    "RegistryView",
]


def discover_papers(package: str = __name__) -> dict[str, Paper]:
    """key -> descriptor of every subpackage of `package` that defines a `Paper` keyed by its own name,
    in the papers' `order`; a subpackage without one is an error naming it."""
    found = []
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if not module.ispkg:
            continue
        namespace = vars(importlib.import_module(f"{package}.{module.name}"))
        papers = {id(v): v for v in namespace.values() if isinstance(v, Paper) and v.key == module.name}
        if len(papers) != 1:
            raise ImportError(
                f"{package}.{module.name}: a paper's package defines one Paper with key {module.name!r} in its __init__, found {len(papers)}"
            )
        found += papers.values()
    return {paper.key: paper for paper in sorted(found, key=lambda paper: paper.order)}


PAPERS: dict[str, Paper] = discover_papers()


def register_paper(paper: Paper) -> Paper:
    """Add a paper from outside this package to the registry, after those found here; its key must be new."""
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


# measure -> (paper, what it is, the reading in favour of attention as explanation): each paper's rows of
# the debate matrix (`Paper.measures`), in the papers' order
DEBATE_MEASURES = RegistryView(
    lambda papers: {key: (paper.title, *row) for paper in papers.values() for key, row in paper.measures.items()}
)
