"""The papers and extension studies the pipeline runs, each described once. Torch-free: run selection,
config validation, the scorecard and the debate matrix read these records before any job runs.

A `Paper` is one experiment family with its own config section (`jain_wallace:` …) and rule file: the
capabilities its models need, the dataset tasks it is defined for, how the scorecard reads its
published numbers (`anchors`), why its tolerances are what they are, its rows of the debate matrix,
and the config checks JSON Schema cannot express. `PAPERS` lists them in the order their tables and
rows appear.
"""

from __future__ import annotations

from attnexp.papers.descriptor import PRETRAINED_VECTORS, Paper, Protocol
from attnexp.papers.jain_wallace import JAIN_WALLACE
from attnexp.papers.serrano_smith import SERRANO_SMITH
from attnexp.papers.wiegreffe_pinter import WIEGREFFE_PINTER
from attnexp.papers.faithfulness import FAITHFULNESS
from attnexp.papers.attention_attribution import ATTENTION_ATTRIBUTION

__all__ = ["PRETRAINED_VECTORS", "Protocol", "Paper", "PAPERS"]

PAPERS: dict[str, Paper] = {p.key: p for p in (JAIN_WALLACE, SERRANO_SMITH, WIEGREFFE_PINTER, FAITHFULNESS, ATTENTION_ATTRIBUTION)}
