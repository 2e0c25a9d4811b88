"""Every classifier of the three papers behind one name (`{model}` in the output paths; the names are
listed in docs/configuration.md) and one contract,
`AttentionModel`: `encode(batch) -> Encoded`, `decode(encoded, attention=None) -> (logits, attention)`.

Names: `{lstm,cnn,average}-{tanh,dot,uniform}` (J&W / W&P; QA/NLI datasets get the question-
conditioned variant of `tanh`/`dot`), the zoo's `{lstm-ortho,lstm-diversity}-{attention}` and
`{encoder}-{sparsemax,entmax15}` (flat classifiers built to make attention faithful), `{encoder}-guided-{source model}` (W&P's diagnostic model with
the source model's attention imposed), `{han,flan}-{rnn,conv,none}` (S&S), `transformer-cls`
(the small Transformer trained from scratch).

Each family is one entry of `MODEL_FAMILIES`: its config dataclass, its module, and how its config
is made from a spec and the training settings. Building, configuring and restoring a model all go
through that one table; what a family can do is its record in `attnexp.spec.FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from attnexp.models.flat import FlatClassifier, FlatConfig
from attnexp.models.hierarchical import HierarchicalClassifier, HierarchicalConfig
from attnexp.models.inputs import Batch, Encoded
from attnexp.models.pretrained import PretrainedClassifier, PretrainedConfig
from attnexp.models.qa import QAClassifier, QAConfig
from attnexp.models.transformer import TransformerClassifier, TransformerConfig
from attnexp.spec import Family, ModelSpec, parse_model_name, register_family

__all__ = [
    "ModelSpec",
    "parse_model_name",
    "AttentionModel",
    "SelfAttentionModel",
    "HierarchicalAttentionModel",
    "FamilyModel",
    "MODEL_FAMILIES",
    "register_family_model",
    "build_model",
    "model_config",
    "config_record",
    "restore_config",
]


# ---------------------------------------------------------------------------------------------
# The contract


@runtime_checkable
class AttentionModel(Protocol):
    """What every experiment relies on. `encode` runs the expensive part once; `decode` is cheap and
    vectorised over leading dimensions of `attention`, so many attention distributions can be imposed
    on one encoding. A family whose spec says `attributable_input` also takes `encode(batch,
    embedded)`: replacement input embeddings (B, T, E) in place of `embedding(batch.tokens)`."""

    spec: ModelSpec
    layout: str  # how its batches are padded (`attnexp.models.inputs.LAYOUTS`)
    embedding: nn.Embedding
    decoder: nn.Linear  # the output layer

    def encode(self, batch: Batch) -> Encoded: ...

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]: ...

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]: ...


@runtime_checkable
class SelfAttentionModel(AttentionModel, Protocol):
    """A model whose spec says `self_attention`: every layer's attention, for rollout, attention
    attribution and head pruning, over its own positions (the Transformer's tokens, a pretrained
    encoder's word pieces), and how scores over those positions become scores over the tokens."""

    def run(
        self,
        batch: Batch,
        embedded: torch.Tensor | None = None,
        imposed: dict | None = None,
        head_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, list[torch.Tensor]]: ...

    def attention_maps(self, batch: Batch) -> torch.Tensor: ...

    def position_mask(self, batch: Batch) -> torch.Tensor: ...  # (B, P) the positions the maps are over

    def token_scores(self, batch: Batch, per_position: torch.Tensor) -> torch.Tensor: ...  # (B, P) -> (B, T)

    def position_labels(self, batch: Batch, vocab: list[str]) -> list[list[str]]: ...


@runtime_checkable
class HierarchicalAttentionModel(AttentionModel, Protocol):
    """A model whose spec attends to `sentences` (a HAN), which attends to words within them too: its
    weight on each word through both levels."""

    def token_attention(self, batch: Batch) -> torch.Tensor: ...


# ---------------------------------------------------------------------------------------------
# One table for building, configuring and restoring


@dataclass(frozen=True)
class FamilyModel:
    """The torch side of a model family."""

    config_class: type
    model_class: type[nn.Module]
    # (spec, vocabulary size, outputs, embedding width, training settings) -> its config
    make_config: Callable[[ModelSpec, int, int, int, dict], Any]


def _recurrent_config(config_class: type) -> Callable[[ModelSpec, int, int, int, dict], Any]:
    def make(spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict):
        return config_class(
            vocab_size=vocab_size,
            n_classes=n_classes,
            encoder=spec.encoder,
            embedding_dim=embedding_dim,
            hidden_size=settings["hidden_size"],
            attention=spec.attention,
        )

    return make


def _flat_config(spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict) -> FlatConfig:
    config = _recurrent_config(FlatConfig)(spec, vocab_size, n_classes, embedding_dim, settings)
    if spec.encoder == "lstm-diversity":
        config.diversity_weight = settings["diversity_weight"]
    return config


def _hierarchical_config(
    spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict
) -> HierarchicalConfig:
    dropout = settings["dropout"][spec.architecture]
    return HierarchicalConfig(
        vocab_size=vocab_size,
        n_classes=n_classes,
        encoder=spec.encoder,
        embedding_dim=embedding_dim,
        hidden_size=settings["hidden_size"],
        architecture=spec.architecture,
        conv_input_dropout=settings["conv_input_dropout"],
        dropout_sentence=dropout.get("sentence", 0.0),
        dropout_document=dropout["document"],
        dropout_output=dropout["output"],
    )


def _transformer_config(
    spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict
) -> TransformerConfig:
    return TransformerConfig(
        vocab_size=vocab_size,
        n_classes=n_classes,
        encoder=spec.encoder,
        attention=spec.attention,
        d_model=settings["hidden_size"],
        **settings["transformer"],
    )


def _pretrained_config(
    spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict
) -> PretrainedConfig:
    source = settings["pretrained"]
    return PretrainedConfig(
        vocab_size=vocab_size, n_classes=n_classes, encoder=spec.encoder, attention=spec.attention, **source
    )


MODEL_FAMILIES: dict[str, FamilyModel] = {
    "flat": FamilyModel(FlatConfig, FlatClassifier, _flat_config),
    "qa": FamilyModel(QAConfig, QAClassifier, _recurrent_config(QAConfig)),
    "hierarchical": FamilyModel(HierarchicalConfig, HierarchicalClassifier, _hierarchical_config),
    "transformer": FamilyModel(TransformerConfig, TransformerClassifier, _transformer_config),
    "pretrained": FamilyModel(PretrainedConfig, PretrainedClassifier, _pretrained_config),
}


def register_family_model(family: Family, model: FamilyModel) -> None:
    """Add a model family: its record (`attnexp.spec.register_family`) and its torch side here."""
    if family.name in MODEL_FAMILIES:
        raise ValueError(f"model family {family.name!r} is registered already")
    register_family(family)
    MODEL_FAMILIES[family.name] = model


def model_config(spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict):
    """The dataclass config of a model: everything its architecture depends on (hashed into the
    checkpoint metadata). `settings` is the resolved training settings of the dataset."""
    return MODEL_FAMILIES[spec.family].make_config(spec, vocab_size, n_classes, embedding_dim, settings)


def build_model(spec: ModelSpec, config) -> nn.Module:
    """The model a spec names, built from its config; the spec rides along as `model.spec`, so every
    stage can ask it what the model can do."""
    model = MODEL_FAMILIES[spec.family].model_class(config)
    model.spec = spec
    return model


def config_record(config) -> dict:
    """What a checkpoint stores of a config: its class name and fields."""
    return {"class": type(config).__name__, **asdict(config)}


def restore_config(spec: ModelSpec, record: dict):
    """A config back from its `config_record`, of the class the spec's family uses (a ValueError
    naming both when the record is of another)."""
    config_class = MODEL_FAMILIES[spec.family].config_class
    fields = dict(record)
    stored = fields.pop("class", None)
    if stored != config_class.__name__:
        raise ValueError(f"a {spec.family} model's config is a {config_class.__name__}, the record holds a {stored!r}")
    return config_class(**fields)
