"""Serrano & Smith (2019), "Is Attention Interpretable?": the paper's record (torch-free). Its code:
`experiment` (single-weight erasure, removal until the decision flips), `tables` and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import _OWN_ATTENTION, JobSettings, Paper, Protocol

__all__ = ["SERRANO_SMITH", "INTERVENTION_SETTINGS"]

# What the per-model job (`experiment.write_interventions`) depends on: changing the figures or the
# selection never re-runs it (`max_tokens` only sizes batches)
INTERVENTION_SETTINGS = JobSettings("serrano_smith", ("seed", "random_item", "permutations", "attention_ascending", "max_tokens"))

SERRANO_SMITH = Paper(
    "serrano_smith",
    "Serrano & Smith",
    requirements=(_OWN_ATTENTION, ("classifier", "a document classifier (not a QA/NLI model)")),
    # §3.2: word2vec trained on the dataset; their models: HAN and FLAN, selected on dev
    anchors={"Serrano & Smith 2019": Protocol("replicated", "dev", ("word2vec", "word2vec_local"), "word2vec on the dataset", r"(han|flan)-(rnn|conv|none)")},
    measures={
        "ss_flip_top": ("erasing the top-attention item flips the decision, %", "higher, and above the random item's"),
        "ss_flip_random": ("erasing a random item flips the decision, %", "the baseline of the row above"),
        "ss_fraction_attention": ("items removed until the decision flips, attention order (median share)", "lower, and below gradient's and random's"),
        "ss_fraction_gradient": ("items removed until the decision flips, gradient order (median share)", "the comparison of the row above"),
        "ss_fraction_random": ("items removed until the decision flips, random order (median share)", "the baseline"),
        "ss_no_flip_attention": ("no flip even with every item removed in attention order, %", "context: the share the row above leaves out"),
    },
)
