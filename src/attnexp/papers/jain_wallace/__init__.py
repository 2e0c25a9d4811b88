"""Jain & Wallace (2019), "Attention is not Explanation": the paper's record (torch-free). Its code:
`experiment` (§5: correlations, permutation, adversarial search, with the torch-free `correlations` and
the search itself in `adversary`), `ground_truth` (the explanations against the planted cues,
torch-free), `tables` (Table 2, ground truth) and `plots`.
"""

from __future__ import annotations

from attnexp.papers.descriptor import (
    _OWN_ATTENTION,
    PRETRAINED_VECTORS,
    RUN_HEADING,
    Figures,
    Finding,
    InReport,
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
            "jain_wallace.table2_tolerance.<encoder>.mean (D-TARGETS): the median gap in a mean tau between J&W's two repository states "
            "(675b0dc, 425a89a) over the datasets whose model and data stayed the same: 0.04 BiLSTM, 0.035 Average; the seed mean "
            "must lie within it (jain_wallace_tolerances.md)",
        ),
        (
            "mean tau, all test instances",
            "mean ",
            "jain_wallace.table2_tolerance.lstm.mean (D-TARGETS): J&W's test-selected (675b0dc) and dev-selected (425a89a) models differ by "
            "0.04 in a BiLSTM mean tau at the median, so one tolerance covers either selection",
        ),
        (
            "Table 2",
            "sig_frac ",
            "jain_wallace.table2_tolerance.<encoder>.sig_frac (D-TARGETS): the median gap in a Sig. Frac. between J&W's two repository states, "
            "at least 0.005 (half J&W's last printed digit): 0.015 BiLSTM, 0.005 Average (jain_wallace_tolerances.md)",
        ),
    ),
    findings=(
        Finding(
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "the larger of mean tau(attention, ",
            "A BiLSTM's attention correlates only weakly with gradient and leave-one-out importance",
            "§4.1 and Table 2 ('weak', 'modest' correlations)",
            "BiLSTM models with additive and dot attention, every dataset",
            threshold="ours: jain_wallace.findings.weak_tau (J&W give no number)",
        ),
        Finding(
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "mean tau(gradient, loo) minus",
            "Gradient and leave-one-out agree with each other more than either does with attention",
            "§4.1 and Table 2 (τ(gradient, leave-one-out) beside attention's)",
            "BiLSTM models, every dataset",
        ),
        Finding(
            "§4.1, attention vs gradient and leave-one-out (Table 2)",
            "mean tau(attention, gradient) of the Average encoder",
            "Attention over an Average encoder correlates better with gradients than a BiLSTM's",
            "§4.1 and Table 2 (the Average columns)",
            "Average against BiLSTM models with the same attention, every dataset",
        ),
        Finding(
            "§4.2, attention permutation (Figure 4)",
            "share of test instances whose median output change",
            "Randomly permuting the attention weights often changes the output only minimally",
            "§4.2 and Figure 4",
            "BiLSTM models with attention that is not near uniform, every dataset",
            exceptions="Diabetes, where a few tokens decide the label and permutation moves the output",
            threshold="ours: jain_wallace.findings.often and minimal_output_change (J&W say 'often', 'minimal')",
        ),
        Finding(
            "§4.2, attention permutation (Figure 4)",
            "the same among instances with max attention",
            "... even where attention is peaked",
            "§4.2 and Figure 4 (the high max-attention bins)",
            "BiLSTM models with at least min_peaked_instances peaked test instances on every seed",
            exceptions="Diabetes, as above",
            threshold="ours: jain_wallace.findings.often, minimal_output_change and peaked_attention",
        ),
        Finding(
            "§4.3, adversarial attention (Figures 6-7)",
            "share of test instances with an adversarial attention",
            "Very different attention distributions often leave the prediction effectively unchanged",
            "§4.3 and Figures 6-7 (ε-max JSD)",
            "BiLSTM models, every dataset (ε: 0.01 for classification, 0.05 for QA/NLI, as the paper)",
            threshold="ours: jain_wallace.findings.often and very_different_jsd (J&W say 'very different', 'often')",
        ),
    ),
    locations={
        "Table 2": "Table 2 (mean τ ± sd | Sig. Frac. per dataset and predicted class)",
        "mean tau, all test instances": "J&W's repository (425a89a): the committed mean τ of the dev-selected retrain",
        "test performance": "Table 1 (test performance column) and J&W's repository (675b0dc, 425a89a) evaluation files",
    },
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
            Table(
                "jain_wallace_table2",
                "jain_wallace_table2",
                fold=False,
                report=InReport("Jain & Wallace 2019", "tables", "Table 2"),
            ),
            Table("jain_wallace_tolerances", "jain_wallace_tolerances"),
            Table("jain_wallace_correlations", "jain_wallace_correlations"),
            Table("ground_truth", "ground_truth", report=InReport("Jain & Wallace 2019", "tables", "ground truth")),
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
    order=10,
)
