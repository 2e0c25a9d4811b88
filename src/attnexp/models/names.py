"""Model names (DESIGN.md `{model}`) -> what to build. Torch-free, so config validation and the
Snakefile can check names without importing the models."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelSpec", "parse_model_name", "PROTOCOL_OF_FAMILY"]

# Which training protocol (config `train.protocols`) a model family follows
PROTOCOL_OF_FAMILY = {"flat": "jain_wallace", "qa": "jain_wallace_qa", "hierarchical": "serrano_smith"}

FLAT_ENCODERS = ("lstm", "cnn", "average")
FLAT_ATTENTIONS = ("tanh", "dot", "uniform")
SS_ARCHITECTURES = ("han", "flan")
SS_ENCODERS = ("rnn", "conv", "none")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str  # flat | qa | hierarchical
    encoder: str
    attention: str  # tanh | dot | uniform | guided | context (S&S)
    architecture: str | None = None  # han | flan
    guide: str | None = None  # source model of a guided model

    @property
    def attention_is_trained(self) -> bool:
        return self.attention in {"tanh", "dot", "context"}


def parse_model_name(name: str, task: str) -> ModelSpec:
    """`name` for a dataset of `task` (binary | multiclass | qa | nli) -> ModelSpec, or a ValueError
    that lists what is valid."""
    head, _, rest = name.partition("-")
    if head in SS_ARCHITECTURES and rest in SS_ENCODERS:
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


