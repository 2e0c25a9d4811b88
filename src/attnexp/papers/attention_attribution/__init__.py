"""The attention-attribution extension (Hao et al. 2021; rollout, Abnar & Zuidema 2020): the study's
record (torch-free). Its code: `experiment` (head importance, pruning, attribution graphs), `tables`
(with rollout's agreement) and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import Paper, Protocol

__all__ = ["ATTENTION_ATTRIBUTION"]

ATTENTION_ATTRIBUTION = Paper(
    "attention_attribution",
    "attention-attribution (Hao et al.)",
    requirements=(("self_attention", "self-attention in every layer (a Transformer)"),),
    anchors={"Hao et al. 2021": Protocol("extension anchor"), "Abnar & Zuidema 2020": Protocol("extension anchor")},
)
