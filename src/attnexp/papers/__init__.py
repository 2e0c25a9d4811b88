"""The papers and extension studies the pipeline runs, each described once. Torch-free: run selection,
config validation, the scorecard and the debate matrix read these records before any job runs.

A `Paper` is one experiment family with its own config section (`jain_wallace:` …) and rule file: the
capabilities its models need, the dataset tasks it is defined for, how the scorecard reads its
published numbers (`anchors`), why its tolerances are what they are, its rows of the debate matrix,
and the config checks JSON Schema cannot express. `PAPERS` lists them in the order their tables and
rows appear.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from attnexp.messages import close_match

__all__ = ["PRETRAINED_VECTORS", "Protocol", "Paper", "PAPERS"]


@dataclass(frozen=True)
class Protocol:
    """What a paper's own numbers were made with, as far as the scorecard's cause rules need it."""

    role: str  # "replicated" or "extension anchor"
    select_on: str | None = None  # the paper's checkpoint selection (D-SEL); None: no rule
    embeddings: tuple[str, ...] = ()  # our `embeddings=` values that are the paper's kind; (): no rule
    embeddings_label: str = ""  # what the paper used, in words
    models: str | None = None  # regular expression (full match) of the models of the paper's claims; None: any
    own_embeddings: dict[str, str] | None = None  # dataset -> the `embeddings=` value that is the paper's own there (J&W's bAbI: random)


@dataclass(frozen=True)
class Paper:
    key: str  # its config section, rule file and experiment name
    title: str  # as messages name it
    requirements: tuple[tuple[str, str], ...]  # (spec capability, what it means) its models need
    tasks: tuple[str, ...] | None = None  # the dataset tasks it is defined for; None: every task
    anchors: dict[str, Protocol] = field(default_factory=dict)  # the claims' `paper` value -> its protocol
    tolerance_bases: tuple[tuple[str, str, str], ...] = ()  # (table, quantity prefix, why the tolerance is what it is)
    measures: dict[str, tuple[str, str]] = field(default_factory=dict)  # debate-matrix row -> (what it is, the reading for attention)
    config_problems: Callable[[dict], list[str]] | None = None  # its section's checks beyond the schema

    @property
    def citation(self) -> str | None:
        """The `paper` value of its own claims (its first anchor), which its tolerance bases are for."""
        return next(iter(self.anchors), None)


_OWN_ATTENTION = ("has_own_attention", "its own trained attention")
PRETRAINED_VECTORS = ("fasttext_simple", "glove840b")  # our `embeddings=` values of the papers' pretrained kind


def _wiegreffe_pinter_problems(config: dict) -> list[str]:
    section, problems = config["wiegreffe_pinter"], []
    adversary = section["adversary"]
    if adversary["table_lambda"] not in adversary["lambdas"]:
        problems.append(f"config key 'wiegreffe_pinter.adversary.table_lambda': {adversary['table_lambda']} is not one of wiegreffe_pinter.adversary.lambdas {adversary['lambdas']}")
    for i, name in enumerate(section["table2_only"]):
        if name not in config["datasets"]:
            problems.append(f"config key 'wiegreffe_pinter.table2_only.{i}': unknown dataset {name!r}{close_match(name, config['datasets'])}")
    for name in section["dataset_seeds"]:
        if name not in config["datasets"]:
            problems.append(f"config key 'wiegreffe_pinter.dataset_seeds.{name}': unknown dataset {name!r}{close_match(name, config['datasets'])}")
    edges = section["max_attention_bins"]
    if sorted(set(edges)) != edges:
        problems.append(f"config key 'wiegreffe_pinter.max_attention_bins': expected strictly increasing edges, got {edges}")
    return problems


JAIN_WALLACE = Paper(
    "jain_wallace",
    "Jain & Wallace",
    requirements=(
        _OWN_ATTENTION,
        ("attributable_input", "an encoder over replaceable input embeddings (a flat, QA/NLI or Transformer model)"),
    ),
    # pretrained vectors, except bAbI, which starts from random 50-d embeddings
    anchors={"Jain & Wallace 2019": Protocol("replicated", "test", PRETRAINED_VECTORS, "pretrained", r"(lstm|cnn|average)-(tanh|dot)",
                                             {"babi1": "random", "babi2": "random", "babi3": "random"})},
    tolerance_bases=(
        ("Table 2", "mean ",
         "jain_wallace.table2_tolerance.mean (D-TARGETS): J&W's two repository states (675b0dc, 425a89a) differ by up to 0.06 in a mean tau"),
        ("mean tau, all test instances", "mean ",
         "jain_wallace.table2_tolerance.mean (D-TARGETS): J&W's test-selected (675b0dc) and dev-selected (425a89a) models differ by up to 0.06 in a mean tau, so one tolerance covers either selection"),
        ("Table 2", "sig_frac ",
         "jain_wallace.table2_tolerance.sig_frac (D-TARGETS): J&W's two repository states (675b0dc, 425a89a) differ by up to 0.11 in a Sig. Frac."),
    ),
    measures={
        "jw_tau_gradient": ("τ(attention, gradient magnitude), mean", "higher: attention agrees with gradients"),
        "jw_tau_loo": ("τ(attention, leave-one-out), mean", "higher: attention agrees with leave-one-out"),
        "jw_permutation": ("permuted attention: median Δŷ, median over instances", "higher: the output depends on where attention falls"),
        "jw_adversarial_jsd": ("adversarial attention: ε-max JSD, mean", "lower: no very different attention gives the same output"),
    },
)

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

WIEGREFFE_PINTER = Paper(
    "wiegreffe_pinter",
    "Wiegreffe & Pinter",
    requirements=(
        _OWN_ATTENTION,
        ("imitable", "a flat or Transformer classifier of its own (uniform, guided and adversarial counterparts exist for it)"),
    ),
    tasks=("binary",),
    anchors={"Wiegreffe & Pinter 2019": Protocol("replicated", "test", PRETRAINED_VECTORS, "pretrained", r"lstm-(tanh|uniform)")},
    tolerance_bases=(
        ("Table 2", "",
         "claims.performance_tolerance on the F1 gap base - uniform: the spread of one test F1 (J&W's repository, commits 675b0dc and 425a89a)"),
    ),
    measures={
        "wp_f1": ("test F1 of the model", "context"),
        "wp_uniform_f1": ("test F1 of its uniform-attention twin", "lower than the model's: its attention is needed"),
        "wp_mlp_guided_f1": ("diagnostic MLP test F1, guided by the model's attention", "higher than with uniform attention"),
        "wp_mlp_uniform_f1": ("diagnostic MLP test F1, uniform attention", "the baseline"),
        "wp_mlp_trained_f1": ("diagnostic MLP test F1, its own trained attention", "the comparison"),
        "wp_adversary_jsd": ("model-consistent adversary: JSD from the model's attention", "lower: a consistent model cannot attend very differently"),
    },
    config_problems=_wiegreffe_pinter_problems,
)

# The faithfulness battery ranks the attended units of every model with its own attention: by the
# explanations where there are any, by the model's attention and leave-one-unit-out for HAN and FLAN.
FAITHFULNESS = Paper(
    "faithfulness",
    "faithfulness",
    requirements=(_OWN_ATTENTION,),
    anchors={"DeYoung et al. 2020": Protocol("extension anchor")},
    measures={
        "ff_comp_attention": ("AOPC-comprehensiveness, attention ranking", "higher, and above random's"),
        "ff_comp_loo": ("AOPC-comprehensiveness, leave-one-out ranking", "the comparison"),
        "ff_comp_random": ("AOPC-comprehensiveness, random ranking", "the baseline"),
        "ff_suff_attention": ("AOPC-sufficiency, attention ranking", "lower, and below random's"),
        "ff_suff_random": ("AOPC-sufficiency, random ranking", "the baseline"),
    },
)

ATTENTION_ATTRIBUTION = Paper(
    "attention_attribution",
    "attention-attribution (Hao et al.)",
    requirements=(("self_attention", "self-attention in every layer (a Transformer)"),),
    anchors={"Hao et al. 2021": Protocol("extension anchor"), "Abnar & Zuidema 2020": Protocol("extension anchor")},
)

PAPERS: dict[str, Paper] = {p.key: p for p in (JAIN_WALLACE, SERRANO_SMITH, WIEGREFFE_PINTER, FAITHFULNESS, ATTENTION_ATTRIBUTION)}
