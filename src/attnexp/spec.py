"""The model vocabulary: `{model}` names (DESIGN.md) -> `ModelSpec`, and what each model can do.

This is the one place that parses a model name. Everything downstream (training, checkpoints, run
selection, experiments) asks the spec — `spec.layout`, `spec.attended`, `spec.has_own_attention`,
`spec.attributable_input`, `spec.classifier`, `spec.linear_readout` — never the name string. What a
model can do because of its family is written once, in the family's record (`Family`, in
`FAMILIES`); what depends on one model's attention or architecture is derived from the spec's fields.
The spec is saved with every checkpoint and metrics.json (`spec.record()`), so a trained model is
rebuilt from its own record (`ModelSpec.from_record`), not re-derived from its name. Torch-free: the
config check and the Snakefile use it before any job runs; the torch side of a family (its config,
its module) is registered in `attnexp.models`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from decimal import Decimal

__all__ = ["Family", "FAMILIES", "register_family", "ModelSpec", "parse_model_name", "adversary_name", "lambda_tag"]


@dataclass(frozen=True)
class Family:
    """What every model of a family can do, whatever its attention or architecture. The experiments
    ask these through the spec (`spec.classifier`, ...), never the family's name."""

    name: str
    protocol: str  # the training protocol it follows (config `train.protocols`)
    classifier: bool  # decides from the attended items alone, not conditioned on a question/hypothesis
    attributable_input: bool  # `encode(batch, embedded)` takes replacement input embeddings (gradients, IG)
    linear_readout: bool  # logits = W (Σ_i α_i h_i) + b: cached states project through the output once
    self_attention: bool  # self-attention maps in every layer: rollout, attention attribution, head pruning
    word_vectors: bool  # initialised from the dataset's word vectors (D-EMB), not learnt from random
    imitable: bool  # W&P's uniform, guided and adversarial counterparts are defined for its models
    binary_outputs: int  # outputs for a two-class task: 1 (a sigmoid, J&W's BC models) or 2 (a softmax)
    # The family's own names, for a family added with `register_family`: (name, task) -> its spec, or
    # None when the name is not one of its own. The four families of the papers are parsed below.
    parse_name: Callable[[str, str], ModelSpec | None] | None = None
    # reads every word of the dataset, not only the training vocabulary's (a pretrained encoder's
    # tokenizer covers words the training split lacks; `attnexp.data.splits.open_words`)
    open_vocabulary: bool = False


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            "flat",
            "jain_wallace",
            classifier=True,
            attributable_input=True,
            linear_readout=True,
            self_attention=False,
            word_vectors=True,
            imitable=True,
            binary_outputs=1,
        ),
        Family(
            "qa",
            "jain_wallace_qa",
            classifier=False,
            attributable_input=True,
            linear_readout=False,
            self_attention=False,
            word_vectors=True,
            imitable=False,
            binary_outputs=2,
        ),
        Family(
            "hierarchical",
            "serrano_smith",
            classifier=True,
            attributable_input=False,
            linear_readout=True,
            self_attention=False,
            word_vectors=True,
            imitable=False,
            binary_outputs=2,
        ),
        Family(
            "transformer",
            "transformer",
            classifier=True,
            attributable_input=True,
            linear_readout=False,
            self_attention=True,
            word_vectors=False,
            imitable=True,
            binary_outputs=2,
        ),
        # a pretrained encoder (BERT, DistilBERT) fine-tuned and read out at `[CLS]`: `<encoder>-cls`,
        # the encoder named under `pretrained` in the config (attnexp.models.pretrained)
        Family(
            "pretrained",
            "pretrained",
            classifier=True,
            attributable_input=True,
            linear_readout=False,
            self_attention=True,
            word_vectors=False,
            imitable=False,
            binary_outputs=2,
            parse_name=lambda name, task: _parse_pretrained(name, task),
            open_vocabulary=True,
        ),
    )
}


def _parse_pretrained(name: str, task: str) -> ModelSpec | None:
    encoder, _, readout = name.rpartition("-")
    if readout != "cls" or not encoder.isalnum() or encoder == "transformer":
        return None
    if task not in ("binary", "multiclass"):
        raise ValueError(
            f"model {name!r}: a pretrained encoder is fine-tuned here for classification tasks, not {task}"
        )
    return ModelSpec(name, "pretrained", encoder, "cls")


def register_family(family: Family) -> None:
    """Add a model family: its record here, its torch side with `attnexp.models.register_family_model`.
    A name may be registered once; a new family needs its own `parse_name`."""
    if family.name in FAMILIES:
        raise ValueError(f"model family {family.name!r} is registered already")
    if family.parse_name is None:
        raise ValueError(f"model family {family.name!r}: a new family needs parse_name, which names its models")
    FAMILIES[family.name] = family


FLAT_ENCODERS = ("lstm", "cnn", "average")
FLAT_ATTENTIONS = ("tanh", "dot", "uniform")
# The models built to make attention faithful (the zoo), flat classifiers under every test. Mohankumar et al.
# 2020: the BiLSTM with each state orthogonalised against the sum of the previous ones (`lstm-ortho`), and the
# BiLSTM trained with a conicity penalty (`lstm-diversity`), each with any flat attention (`lstm-ortho-tanh`).
# Sparse attention (`lstm-sparsemax`, `lstm-entmax15`): J&W's additive scores normalised by sparsemax (Martins &
# Astudillo 2016) or 1.5-entmax (Peters et al. 2019) in place of softmax, so that tokens can get exactly zero.
ZOO_ENCODERS = ("lstm-ortho", "lstm-diversity")
SPARSE_ATTENTIONS = ("sparsemax", "entmax15")
SS_ARCHITECTURES = ("han", "flan")
SS_ENCODERS = ("rnn", "conv", "none")
TRANSFORMER = "transformer-cls"  # the small Transformer trained from scratch, read out at `[CLS]`
TRANSFORMER_UNIFORM = "transformer-uniform"  # its W&P uniform twin: `[CLS]` attends 1/n in every head
# Attention with trainable parameters of the model's own (S&S's context vector is `context`, the
# Transformer's `[CLS]` query is `cls`). `uniform` (frozen 1/n) and `guided` (imposed weights) have none.
TRAINED_ATTENTIONS = ("tanh", "dot", "context", "cls", *SPARSE_ATTENTIONS)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str  # flat | qa | hierarchical | transformer | pretrained
    encoder: str  # lstm | cnn | average | lstm-ortho | lstm-diversity (flat); rnn | conv | none (S&S); ...
    attention: str  # tanh | dot | uniform | guided | sparsemax | entmax15 | context (S&S) | cls (Transformer)
    architecture: str | None = None  # han | flan
    guide: str | None = None  # source model of a guided model
    imitates: str | None = None  # W&P §4: the base model a model-consistent adversary imitates
    adversary_lambda: float | None = None  # ... and the weight λ of its attention divergence

    # ----------------------------------------------------------------- capabilities

    @property
    def layout(self) -> str:
        """How a batch is padded (`attnexp.models.inputs`): `sos_eos` (J&W flat and QA/NLI; the
        Transformer, whose `<SOS>` is its `[CLS]`), `tokens` (FLAN), `sentences` (HAN)."""
        if self.architecture == "han":
            return "sentences"
        return "tokens" if self.architecture == "flan" else "sos_eos"

    @property
    def attended(self) -> str:
        """The items of the attention layer closest to the output: `sentences` (HAN) or `tokens`."""
        return "sentences" if self.architecture == "han" else "tokens"

    @property
    def has_own_attention(self) -> bool:
        """Trainable attention of its own, which the experiments read and manipulate. Not `uniform`
        (frozen 1/n) nor `guided` (another model's weights imposed)."""
        return self.attention in TRAINED_ATTENTIONS

    @property
    def traits(self) -> Family:
        """The record of its family: what every model of the family can do."""
        return FAMILIES[self.family]

    @property
    def classifier(self) -> bool:
        """A document classifier: the output is a decision over classes read from the attended items
        alone, not conditioned on a question or hypothesis (flat, HAN/FLAN and Transformer models)."""
        return self.traits.classifier

    @property
    def self_attention(self) -> bool:
        """Self-attention maps in every layer: rollout, attention attribution and head pruning apply."""
        return self.traits.self_attention

    @property
    def word_vectors(self) -> bool:
        """Initialised from the dataset's word vectors (D-EMB); the Transformer learns its embeddings
        from random initialisation."""
        return self.traits.word_vectors

    @property
    def imposed_attention(self) -> bool:
        """Its attention is given per instance (W&P's diagnostic model), not computed."""
        return self.attention == "guided"

    @property
    def is_adversary(self) -> bool:
        """Trained to match another model's predictions while diverging from its attention (W&P §4),
        on that model's exported predictions and attention, with no gold labels."""
        return self.imitates is not None

    @property
    def imitable(self) -> bool:
        """A flat or Transformer classifier that is neither guided nor an adversary: W&P's uniform,
        guided and adversarial counterparts are defined for it (the Transformer's attention is its
        `[CLS]` readout's head mean, over the same tokens as a flat model's)."""
        return self.traits.imitable and self.attention != "guided" and not self.is_adversary

    @property
    def uniform_twin(self) -> str:
        """W&P §3.2: the same encoder trained end to end with 1/n attention."""
        return f"{self.encoder}-uniform"

    def diagnostic_trained(self, mlp: str) -> str:
        """W&P §3.4's "trained MLP": the diagnostic encoder with attention of its own, of the base's
        kind for a flat base (tanh or dot) and additive (`tanh`, W&P's) for the Transformer."""
        return f"{mlp}-{self.attention if self.family == 'flat' else 'tanh'}"

    @property
    def attributable_input(self) -> bool:
        """Its encoder takes replacement input embeddings (`encode(batch, embedded)`), which
        gradient and integrated-gradients attributions need: flat, QA/NLI and Transformer models."""
        return self.traits.attributable_input

    @property
    def linear_readout(self) -> bool:
        """logits = W (Σ_i α_i h_i) + b, linear in the attention, so cached states can be projected
        through the output layer once (`attnexp.experiments.cached.Readout`). QA/NLI models mix
        the question in through a tanh and are not."""
        return self.traits.linear_readout

    def output_size(self, n_classes: int) -> int:
        """Its output units for `n_classes` classes (J&W's binary classifiers: one sigmoid unit)."""
        return self.traits.binary_outputs if n_classes == 2 else n_classes

    # ----------------------------------------------------------------- storage

    def record(self) -> dict:
        """What checkpoints and metrics.json store."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict) -> ModelSpec:
        """Keys with a default may be absent (records written before they existed)."""
        known = {f.name for f in fields(cls)}
        required = {"name", "family", "encoder", "attention"}
        if not isinstance(record, dict) or not required <= set(record) <= known:
            got = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise ValueError(
                f"a model spec record needs the keys {sorted(required)} and at most {sorted(known)}, got {got}"
            )
        if record["family"] not in FAMILIES:
            raise ValueError(
                f"a model spec record of an unknown family {record['family']!r}: expected one of {sorted(FAMILIES)}"
            )
        return cls(**record)


# ---------------------------------------------------------------------------------------------
# W&P's model-consistent adversaries: `{base model}-adversary-{λ}`, e.g. `lstm-tanh-adversary-1e-3`.
# λ is written in a form the `{model}` wildcard accepts (no dots): 1e-3, 1e0, 2p5e-2 (= 0.025).

ADVERSARY = "-adversary-"


def lambda_tag(value: float) -> str:
    """λ -> its name form: the shortest decimal that reads back to the same float, as a mantissa
    without trailing zeros (`p` for the decimal point) and an integer exponent, so that two different
    λ never share a model name."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"an adversary's λ must be positive and finite, got {value!r}")
    _, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    head, tail = str(digits[0]), "".join(map(str, digits[1:]))
    return f"{head}{'p' + tail if tail else ''}e{exponent + len(digits) - 1}"


def _parse_lambda_tag(tag: str, name: str) -> float:
    try:
        value = float(tag.replace("p", "."))
    except ValueError:
        value = None
    valid = value is not None and math.isfinite(value) and value > 0
    if not valid or lambda_tag(value) != tag:
        canonical = f" (write it {lambda_tag(value)!r})" if valid else ""
        raise ValueError(f"model {name!r}: {tag!r} is not a λ in name form like 1e-3, 1e0 or 2p5e-2{canonical}")
    return value


def adversary_name(base: str, lam: float) -> str:
    return f"{base}{ADVERSARY}{lambda_tag(lam)}"


def parse_model_name(name: str, task: str) -> ModelSpec:
    """`name` for a dataset of `task` (binary | multiclass | qa | nli) -> ModelSpec, or a ValueError
    that lists what is valid."""
    if name in (TRANSFORMER, TRANSFORMER_UNIFORM):
        if task in {"qa", "nli"}:
            raise ValueError(f"model {name!r}: the Transformer is defined for classification tasks, not {task}")
        return ModelSpec(name, "transformer", "transformer", name.rpartition("-")[2])
    head, _, rest = name.partition("-")
    if head in SS_ARCHITECTURES and rest in SS_ENCODERS:
        if task in {"qa", "nli"}:
            raise ValueError(f"model {name!r}: HAN/FLAN models are defined for classification tasks, not {task}")
        return ModelSpec(name, "hierarchical", rest, "context", architecture=head)
    if head in FLAT_ENCODERS and rest.startswith("guided-"):
        source = rest[len("guided-") :]
        if task in {"qa", "nli"}:
            raise ValueError(f"model {name!r}: guided models are defined for classification tasks, not {task}")
        source_spec = parse_model_name(source, task)
        if source_spec.family not in ("flat", "transformer") or source_spec.attention == "guided":
            raise ValueError(
                f"model {name!r}: the guide must be a flat or Transformer model with its own attention, got {source!r}"
            )
        return ModelSpec(name, "flat", head, "guided", guide=source)
    if ADVERSARY in name:
        base, _, tag = name.rpartition(ADVERSARY)
        base_spec = parse_model_name(base, task)
        if not (base_spec.imitable and base_spec.has_own_attention) or task != "binary":
            raise ValueError(
                f"model {name!r}: an adversary imitates a flat or Transformer binary classifier with its own attention, got {base!r} on a {task} task"
            )
        return ModelSpec(
            name,
            base_spec.family,
            base_spec.encoder,
            base_spec.attention,
            imitates=base,
            adversary_lambda=_parse_lambda_tag(tag, name),
        )
    if head in FLAT_ENCODERS and rest in FLAT_ATTENTIONS:
        if task in {"qa", "nli"}:
            if rest == "uniform":
                raise ValueError(f"model {name!r}: QA/NLI models attend with tanh or dot")
            return ModelSpec(name, "qa", head, rest)
        return ModelSpec(name, "flat", head, rest)
    encoder, _, attention = name.rpartition("-")
    if encoder in FLAT_ENCODERS + ZOO_ENCODERS and attention in FLAT_ATTENTIONS + SPARSE_ATTENTIONS:
        if task in {"qa", "nli"}:
            raise ValueError(
                f"model {name!r}: orthogonal, diversity and sparse-attention models are defined for classification tasks, not {task}"
            )
        return ModelSpec(name, "flat", encoder, attention)
    for family in FAMILIES.values():
        spec = family.parse_name(name, task) if family.parse_name else None
        if spec is not None:
            return spec
    raise ValueError(
        f"unknown model {name!r}: expected {{{','.join(FLAT_ENCODERS + ZOO_ENCODERS)}}}-{{{','.join(FLAT_ATTENTIONS + SPARSE_ATTENTIONS)}}}, "
        f"{{encoder}}-guided-{{source model}}, {{flat or Transformer model}}-adversary-{{λ}} "
        f", {{{','.join(SS_ARCHITECTURES)}}}-{{{','.join(SS_ENCODERS)}}}, {TRANSFORMER} or {TRANSFORMER_UNIFORM}"
    )
