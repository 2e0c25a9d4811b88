"""The zoo: the models built to make attention faithful, each a flat classifier that runs through every
paper's test like J&W's BiLSTM (`attnexp.spec.ZOO_ENCODERS`, `SPARSE_ATTENTIONS`), and Mohankumar et
al. (2020)'s own measures of them (`attnexp.papers.zoo.tables`): accuracy, conicity, and the agreement
of attention with gradients and integrated gradients, beside the published values.

The zoo's table runs on every dataset that trains a zoo model, over the LSTM family there: J&W's
`lstm-tanh` (Mohankumar et al.'s vanilla LSTM) and every zoo model of the dataset. Its record (`ZOO`)
has no config section: its runs follow from the models the datasets train (rules/zoo.smk). Its second
table, `comparison`, sets each zoo model against the vanilla BiLSTM on every directional test of the
debate matrix; the zoo adds no rows to the matrix itself.
"""

from __future__ import annotations

from attnexp.papers.descriptor import BEYOND_THE_PAPERS, InReport, Page, Paper, Protocol, Table
from attnexp.spec import SPARSE_ATTENTIONS, ZOO_ENCODERS, ModelSpec

__all__ = ["ZOO", "VANILLA", "MEASURES", "is_zoo", "in_zoo_table"]

VANILLA = "lstm-tanh"  # Mohankumar et al.'s "vanilla LSTM", the baseline every zoo model is compared with
MEASURES = ("gradient", "ig")  # what attention is compared with (their Table 4)


def is_zoo(spec: ModelSpec) -> bool:
    """A model built to make attention faithful: an orthogonal or diversity LSTM, or sparse attention."""
    return spec.family == "flat" and (spec.encoder in ZOO_ENCODERS or spec.attention in SPARSE_ATTENTIONS)


def in_zoo_table(spec: ModelSpec) -> bool:
    """A model of the zoo's table: a zoo model with attention of its own, or the vanilla BiLSTM."""
    return spec.has_own_attention and (spec.name == VANILLA or is_zoo(spec))


ZOO = Paper(
    "zoo",
    "zoo",
    requirements=(),  # its models are chosen by `in_zoo_table`, not by a capability
    anchors={"Mohankumar et al. 2020": Protocol("beyond the papers")},
    page=Page(
        BEYOND_THE_PAPERS,
        "",
        "",
        (),
        (
            Table("zoo", "zoo", report=InReport("Beyond - the zoo", "Mohankumar et al. 2020", "zoo")),
            Table(
                "zoo_comparison",
                "zoo_comparison",
                report=InReport("Beyond - the zoo", "against the vanilla BiLSTM", "zoo against vanilla"),
            ),
        ),
    ),
    order=60,
    selected_in_config=False,
)
