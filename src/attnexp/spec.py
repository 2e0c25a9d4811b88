"""The model vocabulary: `{model}` names (DESIGN.md) -> `ModelSpec`, and what each model can do.

This is the one place that parses a model name. Everything downstream (training, checkpoints, run
selection, experiments) asks the spec — `spec.layout`, `spec.attended`, `spec.has_own_attention`,
`spec.attributable_input`, `spec.linear_readout` — never the name string. The spec is saved with
every checkpoint and metrics.json (`spec.record()`), so a trained model is rebuilt from its own
record (`ModelSpec.from_record`), not re-derived from its name. Torch-free: the config check and
the Snakefile use it before any job runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

__all__ = ["ModelSpec", "parse_model_name", "PROTOCOL_OF_FAMILY"]

# Which training protocol (config `train.protocols`) a model family follows
PROTOCOL_OF_FAMILY = {"flat": "jain_wallace", "qa": "jain_wallace_qa", "hierarchical": "serrano_smith"}

FLAT_ENCODERS = ("lstm", "cnn", "average")
FLAT_ATTENTIONS = ("tanh", "dot", "uniform")
SS_ARCHITECTURES = ("han", "flan")
SS_ENCODERS = ("rnn", "conv", "none")
# Attention with trainable parameters of the model's own (S&S's context vector is `context`).
# `uniform` (frozen 1/n) and `guided` (imposed weights) have none.
TRAINED_ATTENTIONS = ("tanh", "dot", "context")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str  # flat | qa | hierarchical
    encoder: str
    attention: str  # tanh | dot | uniform | guided | context (S&S)
    architecture: str | None = None  # han | flan
    guide: str | None = None  # source model of a guided model

    # ----------------------------------------------------------------- capabilities

    @property
    def layout(self) -> str:
        """How a batch is padded (`attnexp.models.inputs`): `sos_eos` (J&W flat and QA/NLI),
        `tokens` (FLAN), `sentences` (HAN)."""
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
    def imposed_attention(self) -> bool:
        """Its attention is given per instance (W&P's diagnostic model), not computed."""
        return self.attention == "guided"

    @property
    def attributable_input(self) -> bool:
        """Its encoder takes replacement input embeddings (`encode(batch, embedded)`), which
        gradient and integrated-gradients attributions need: flat and QA/NLI models."""
        return self.family in ("flat", "qa")

    @property
    def linear_readout(self) -> bool:
        """logits = W (Σ_i α_i h_i) + b, linear in the attention, so cached states can be projected
        through the output layer once (`attnexp.experiments.cached.Readout`). QA/NLI models mix
        the question in through a tanh and are not."""
        return self.family in ("flat", "hierarchical")

    # ----------------------------------------------------------------- storage

    def record(self) -> dict:
        """What checkpoints and metrics.json store."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict) -> "ModelSpec":
        expected = {f.name for f in fields(cls)}
        if not isinstance(record, dict) or set(record) != expected:
            got = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise ValueError(f"a model spec record needs the keys {sorted(expected)}, got {got}")
        return cls(**record)


def parse_model_name(name: str, task: str) -> ModelSpec:
    """`name` for a dataset of `task` (binary | multiclass | qa | nli) -> ModelSpec, or a ValueError
    that lists what is valid."""
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
        if source_spec.family != "flat" or source_spec.attention == "guided":
            raise ValueError(f"model {name!r}: the guide must be a flat model with its own attention, got {source!r}")
        return ModelSpec(name, "flat", head, "guided", guide=source)
    if head in FLAT_ENCODERS and rest in FLAT_ATTENTIONS:
        if task in {"qa", "nli"}:
            if rest == "uniform":
                raise ValueError(f"model {name!r}: QA/NLI models attend with tanh or dot")
            return ModelSpec(name, "qa", head, rest)
        return ModelSpec(name, "flat", head, rest)
    raise ValueError(
        f"unknown model {name!r}: expected {{{','.join(FLAT_ENCODERS)}}}-{{{','.join(FLAT_ATTENTIONS)}}}, "
        f"{{encoder}}-guided-{{source model}} or {{{','.join(SS_ARCHITECTURES)}}}-{{{','.join(SS_ENCODERS)}}}"
    )
