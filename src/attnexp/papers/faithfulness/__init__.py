"""The faithfulness extension (ERASER, DeYoung et al. 2020): the study's record (torch-free). Its code:
`experiment` (the job: comprehensiveness and sufficiency per ranking, and the violation test, from
`rankings`, `eraser`, `violations` and `bounds`), `summary` (their AOPC), `seed_envelopes` (each
explainer's agreement with itself across W&P's seed models), `tables` and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import (
    _OWN_ATTENTION,
    BEYOND_THE_PAPERS,
    Figures,
    InReport,
    JobSettings,
    Page,
    Paper,
    Protocol,
    Table,
)

__all__ = ["FAITHFULNESS", "RANDOM", "RANKINGS", "ERASER_SETTINGS", "eraser_settings"]

RANDOM = "random"

# ranking (as written in the tables) -> (label in the figures, the explanation methods it is computed
# from); `random` is ERASER's baseline, drawn, not read from an explanation
RANKINGS = {
    RANDOM: ("Random", ()),
    "attention": ("Attention", ("attention",)),
    "gradient": ("|Gradient|", ("gradient",)),
    "loo": ("Leave-one-out", ("loo",)),
    "ig": ("Integrated gradients", ("ig",)),
    "attention_x_gradient": ("Attention × |Gradient|", ("attention", "gradient")),
    "rollout": ("Rollout", ("rollout",)),
    "attattr": ("Attention attribution", ("attattr",)),
}

# What the per-model battery (`experiment.write_faithfulness`) depends on (`max_tokens` only sizes batches)
ERASER_SETTINGS = JobSettings(
    "faithfulness", ("bins", "rankings", "random_rankings", "ops", "bounds", "max_instances", "han_units", "max_tokens")
)


def eraser_settings(config: dict, spec) -> dict:
    """The battery's settings for a model (its `ModelSpec`): `han_units` only where it matters, a model
    attending over sentences, so that changing it re-runs the HAN batteries alone."""
    settings = ERASER_SETTINGS.of(config)
    if spec.attended != "sentences":
        del settings["han_units"]
    return settings


# The faithfulness battery ranks the attended units of every model with its own attention: by the
# explanations where there are any, by the model's attention and leave-one-unit-out for HAN and FLAN.
FAITHFULNESS = Paper(
    "faithfulness",
    "faithfulness",
    requirements=(_OWN_ATTENTION,),
    anchors={
        "DeYoung et al. 2020": Protocol("beyond the papers"),
        "Liu et al. 2022": Protocol("beyond the papers"),
    },
    measures={
        "ff_comp_attention": ("AOPC-comprehensiveness, attention ranking", "higher, and above random's"),
        "ff_comp_loo": ("AOPC-comprehensiveness, leave-one-out ranking", "the comparison"),
        "ff_comp_random": ("AOPC-comprehensiveness, random ranking", "the baseline"),
        "ff_suff_attention": ("AOPC-sufficiency, attention ranking", "lower, and below random's"),
        "ff_suff_random": ("AOPC-sufficiency, random ranking", "the baseline"),
        # normalised to each instance's AOPC range (Edin et al. 2025): comparable across models
        "ff_comp_attention_normalised": ("normalised AOPC-comprehensiveness, attention ranking", "higher, in [0, 1]"),
        "ff_comp_random_normalised": ("normalised AOPC-comprehensiveness, random ranking", "the baseline"),
        "ff_suff_attention_normalised": ("normalised AOPC-sufficiency, attention ranking", "lower, in [0, 1]"),
    },
    page=Page(
        BEYOND_THE_PAPERS,
        "",
        "",
        (),
        (
            Table("faithfulness_aopc", "faithfulness_aopc", report=InReport("Beyond - faithfulness", "AOPC", "AOPC")),
            Table(
                "faithfulness_seed_envelopes",
                "faithfulness_seed_envelopes",
                report=InReport("Beyond - faithfulness", "seed envelopes", "seed envelopes"),
            ),
            Table(
                "faithfulness_violation",
                "faithfulness_violation",
                report=InReport("Beyond - faithfulness", "violation test", "violation test"),
            ),
        ),
        (Figures(("faithfulness/{dataset}/aopc.png",), "faithfulness_figure", "Perturbation curves: {dataset}"),),
    ),
    order=40,
)
