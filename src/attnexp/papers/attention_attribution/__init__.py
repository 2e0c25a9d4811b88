"""The attention-attribution extension (Hao et al. 2021; rollout, Abnar & Zuidema 2020): the study's
record (torch-free). Its code: `experiment` (head importance, pruning, attribution graphs), `tables`
(with rollout's agreement) and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import (
    BEYOND_THE_PAPERS,
    RUN_HEADING,
    Figures,
    InReport,
    JobSettings,
    Page,
    Paper,
    Protocol,
    Table,
)

__all__ = ["ATTENTION_ATTRIBUTION", "ATTRIBUTION_SETTINGS"]

# What the per-model jobs (`experiment.write_head_pruning`, `write_attribution_graphs`) depend on; the
# Riemann sum is the explanations' (one setting for both)
ATTRIBUTION_SETTINGS = JobSettings(
    "attention_attribution",
    (
        "importance_examples",
        "fractions",
        "random_orders",
        "batch_size",
        "graph_examples",
        "graph_max_tokens",
        "graph_threshold",
        "graph_skip_top",
    ),
    borrowed=(("steps", "explain.attattr_steps"), ("riemann", "explain.attattr_riemann")),
)

ATTENTION_ATTRIBUTION = Paper(
    "attention_attribution",
    "attention-attribution (Hao et al.)",
    requirements=(("self_attention", "self-attention in every layer (a Transformer)"),),
    anchors={"Hao et al. 2021": Protocol("beyond the papers"), "Abnar & Zuidema 2020": Protocol("beyond the papers")},
    page=Page(
        BEYOND_THE_PAPERS,
        "",
        "",
        (),
        (
            Table(
                "attention_attribution_pruning",
                "attention_attribution_tables",
                report=InReport("Beyond - attention attribution", "head pruning", "head pruning"),
            ),
            Table(
                "attention_attribution_agreement",
                "attention_attribution_tables",
                report=InReport("Beyond - attention attribution", "rollout agreement", "rollout agreement"),
            ),
        ),
        (
            Figures(
                ("attention_attribution/{dataset}/{model}/seed{seed}/head_pruning.png",),
                "attention_attribution_pruning",
                "Head pruning: " + RUN_HEADING,
                ("transformer-cls",),
                limit=2,
            ),
            Figures(
                ("attention_attribution/{dataset}/{model}/seed{seed}/graphs.png",),
                "attention_attribution_graphs",
                "Attribution graphs: " + RUN_HEADING,
                ("transformer-cls",),
                limit=2,
            ),
        ),
    ),
    order=50,
)
