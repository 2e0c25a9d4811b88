"""Serrano & Smith (2019), "Is Attention Interpretable?": the paper's record (torch-free). Its code:
`experiment` (single-weight erasure, removal until the decision flips), `tables` and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import (
    _OWN_ATTENTION,
    Figures,
    Finding,
    InReport,
    JobSettings,
    Page,
    Paper,
    Protocol,
    Table,
)

__all__ = ["SERRANO_SMITH", "RANKINGS", "TOP_BY", "INTERVENTION_SETTINGS"]

# The orders of §6's removal (name as written in the tables -> label in the figures), and the three
# choices of §5's top item; `attn_x_grad` is S&S's attention × gradient of the decision w.r.t. attention
RANKINGS = {
    "random": "Random",
    "attention": "Attention",
    "gradient": "Gradient",
    "attn_x_grad": "Attn × Grad",
    "attention_ascending": "Attention ↑",
}
TOP_BY = ("attention", "gradient", "attn_x_grad")

# What the per-model job (`experiment.write_interventions`) depends on: changing the figures or the
# selection never re-runs it (`max_tokens` only sizes batches)
INTERVENTION_SETTINGS = JobSettings(
    "serrano_smith", ("seed", "random_item", "permutations", "attention_ascending", "max_tokens")
)

SERRANO_SMITH = Paper(
    "serrano_smith",
    "Serrano & Smith",
    requirements=(_OWN_ATTENTION, ("classifier", "a document classifier (not a QA/NLI model)")),
    # §3.2: word2vec trained on the dataset; their models: HAN and FLAN, selected on dev
    anchors={
        "Serrano & Smith 2019": Protocol(
            "replicated",
            "dev",
            ("word2vec", "word2vec_local"),
            "word2vec on the dataset",
            r"(han|flan)-(rnn|conv|none)",
        )
    },
    findings=(
        Finding(
            "§5, single-weight erasure",
            "share of instances whose decision erasing the highest-attention item flips",
            "Erasing the highest-attention item rarely flips the decision",
            "§5 (single attention weight erasure)",
            "every HAN and FLAN model, each dataset",
            threshold="ours: serrano_smith.findings.rarely (S&S say 'rarely')",
        ),
        Finding(
            "§5, single-weight erasure",
            "share of instances whose decision only the top item's erasure flips",
            "... but flips it more often than erasing a random item",
            "§5 (single attention weight erasure, against a random item)",
            "every HAN and FLAN model, each dataset",
        ),
        Finding(
            "§5, single-weight erasure",
            "share of instances where erasing the top item moves the output more",
            "Erasing the highest-attention item mostly moves the output more than erasing a random item",
            "§5 (the difference in JS divergence, top item against a random one)",
            "every HAN and FLAN model, each dataset",
            threshold="ours: a majority of instances (0.5)",
        ),
        Finding(
            "§6, removal box plots",
            "median fraction removed at the first flip",
            "Removing items by the gradient ranking flips the decision after fewer items than by attention",
            "§6 (removing sets of attention weights until the decision flips, box plots)",
            "every HAN and FLAN model, each dataset",
        ),
        Finding(
            "§6, per-instance comparison",
            "share of instances where the gradient ranking flips sooner",
            "... and does so on more instances",
            "§6 (per-instance comparison of the rankings)",
            "every HAN and FLAN model, each dataset",
        ),
    ),
    locations={
        "prob_predictor.py shares": "S&S's repository (attn-tests, prob_predictor.py): the shares its code computes",
    },
    measures={
        "ss_flip_top": ("erasing the top-attention item flips the decision, %", "higher, and above the random item's"),
        "ss_flip_random": ("erasing a random item flips the decision, %", "the baseline of the row above"),
        "ss_fraction_attention": (
            "items removed until the decision flips, attention order (median share)",
            "lower, and below gradient's and random's",
        ),
        "ss_fraction_gradient": (
            "items removed until the decision flips, gradient order (median share)",
            "the comparison of the row above",
        ),
        "ss_fraction_random": ("items removed until the decision flips, random order (median share)", "the baseline"),
        "ss_no_flip_attention": (
            "no flip even with every item removed in attention order, %",
            "context: the share the row above leaves out",
        ),
    },
    page=Page(
        "serrano-smith-2019",
        "Serrano & Smith 2019: Is Attention Interpretable?",
        "Erasing the highest-attention item against a random one (single-weight erasure), and removing items in "
        "attention, gradient and random order until the decision flips.",
        (),
        (
            Table(
                "serrano_smith_erasure",
                "serrano_smith_erasure",
                report=InReport("Serrano & Smith 2019", "tables", "erasure"),
            ),
            Table(
                "serrano_smith_removal",
                "serrano_smith_removal",
                report=InReport("Serrano & Smith 2019", "tables", "removal"),
            ),
            Table(
                "serrano_smith_flip_sooner",
                "serrano_smith_flip_sooner",
                report=InReport("Serrano & Smith 2019", "tables", "flip_sooner"),
            ),
        ),
        (
            Figures(
                ("serrano_smith/{dataset}/seed{seed}/removal_fraction.png",),
                "serrano_smith_removal_figures",
                "Removal until the decision flips: {dataset}, seed {seed}",
            ),
            Figures(
                ("serrano_smith/delta_js/{model}/seed{seed}.png",),
                "serrano_smith_delta_js",
                "Single-weight erasure: {model}, seed {seed}",
                ("han-rnn", "flan-rnn", "han-conv", "flan-conv"),
                limit=3,
            ),
        ),
    ),
    order=20,
)
