"""Jain & Wallace (2019), "Attention is not Explanation": the paper's record (torch-free). Its code:
`experiment` (§5: correlations, permutation, adversarial search, with the torch-free `correlations`),
`tables` (Table 2, ground truth) and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import (
    _OWN_ATTENTION,
    PRETRAINED_VECTORS,
    RUN_HEADING,
    Figures,
    JobSettings,
    Page,
    Paper,
    Protocol,
    Table,
)

__all__ = ["JAIN_WALLACE", "PERMUTATION_SETTINGS", "ADVERSARY_SETTINGS"]

# What each per-model experiment depends on (`experiment.write_permutation`, `write_adversarial`), and
# nothing else: narrowing the selection or changing another experiment's settings never re-runs it.
# (`max_tokens` only sizes batches.)
PERMUTATION_SETTINGS = JobSettings("jain_wallace", ("permutations", "max_tokens"))
ADVERSARY_SETTINGS = JobSettings("jain_wallace", ("adversary", "adv_eps_bc", "adv_eps_qa", "max_tokens"))

JAIN_WALLACE = Paper(
    "jain_wallace",
    "Jain & Wallace",
    requirements=(
        _OWN_ATTENTION,
        ("attributable_input", "an encoder over replaceable input embeddings (a flat, QA/NLI or Transformer model)"),
    ),
    # pretrained vectors, except bAbI, which starts from random 50-d embeddings
    anchors={
        "Jain & Wallace 2019": Protocol(
            "replicated",
            "test",
            PRETRAINED_VECTORS,
            "pretrained",
            r"(lstm|cnn|average)-(tanh|dot)",
            {"babi1": "random", "babi2": "random", "babi3": "random"},
        )
    },
    tolerance_bases=(
        (
            "Table 2",
            "mean ",
            "jain_wallace.table2_tolerance.<encoder>.mean (D-TARGETS): the largest gap in a mean tau between J&W's two repository states "
            "(675b0dc, 425a89a) over the datasets whose model and data stayed the same: 0.115 BiLSTM, 0.145 Average (jain_wallace_tolerances.md)",
        ),
        (
            "mean tau, all test instances",
            "mean ",
            "jain_wallace.table2_tolerance.lstm.mean (D-TARGETS): J&W's test-selected (675b0dc) and dev-selected (425a89a) models differ by up to "
            "0.115 in a BiLSTM mean tau, so one tolerance covers either selection",
        ),
        (
            "Table 2",
            "sig_frac ",
            "jain_wallace.table2_tolerance.<encoder>.sig_frac (D-TARGETS): the largest gap in a Sig. Frac. between J&W's two repository states: "
            "0.18 BiLSTM, 0.11 Average (jain_wallace_tolerances.md)",
        ),
    ),
    findings=(
        (
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "the larger of mean tau(attention, ",
            "A BiLSTM's attention correlates only weakly with gradient and leave-one-out importance",
        ),
        (
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "mean tau(gradient, loo) minus",
            "Gradient and leave-one-out agree with each other more than either does with attention",
        ),
        (
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "mean tau(attention, gradient) of the Average encoder",
            "Attention over an Average encoder correlates better with gradients than a BiLSTM's",
        ),
        (
            "§4.2, attention permutation (Figure 4)",
            "share of test instances whose median output change",
            "Randomly permuting the attention weights often changes the output only minimally",
        ),
        (
            "§4.2, attention permutation (Figure 4)",
            "the same among instances with max attention",
            "... even where attention is peaked",
        ),
        (
            "§4.3, adversarial attention (Figures 6-7)",
            "share of test instances with an adversarial attention",
            "Very different attention distributions often leave the prediction effectively unchanged",
        ),
    ),
    measures={
        "jw_tau_gradient": ("τ(attention, gradient magnitude), mean", "higher: attention agrees with gradients"),
        "jw_tau_loo": ("τ(attention, leave-one-out), mean", "higher: attention agrees with leave-one-out"),
        "jw_permutation": (
            "permuted attention: median Δŷ, median over instances",
            "higher: the output depends on where attention falls",
        ),
        "jw_adversarial_jsd": (
            "adversarial attention: ε-max JSD, mean",
            "lower: no very different attention gives the same output",
        ),
    },
    page=Page(
        "jain-wallace-2019",
        "Jain & Wallace 2019: Attention is not Explanation",
        "Kendall τ between attention and gradient or leave-one-out importance (Table 2), the output's response to "
        "permuted attention and the most different attention that keeps the output (adversarial attention), and, beyond "
        "the paper, explanations scored against the planted cues of generated data.",
        (),
        (
            Table("jain_wallace_table2", "jain_wallace_table2", fold=False),
            Table("jain_wallace_tolerances", "jain_wallace_tolerances"),
            Table("jain_wallace_correlations", "jain_wallace_correlations"),
            Table("ground_truth", "ground_truth"),
        ),
        (
            Figures(("jain_wallace/encoder_comparison.png",), "jain_wallace_encoders", "Encoder comparison"),
            Figures(("jain_wallace/ground_truth.png",), "ground_truth", "Ground truth"),
            Figures(
                tuple(
                    f"jain_wallace/{{dataset}}/{{model}}/seed{{seed}}/{n}.png"
                    for n in ("tau_histograms", "permutation", "adversarial_violin")
                ),
                "jain_wallace_figures",
                RUN_HEADING,
                ("lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh"),
                per_dataset=True,
            ),
        ),
    ),
)
