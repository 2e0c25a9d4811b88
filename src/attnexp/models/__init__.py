"""Every classifier of the three papers behind one name (`{model}` in DESIGN.md) and one contract:
`encode(batch) -> Encoded`, `decode(encoded, attention=None) -> (logits, attention)`.

Names: `{lstm,cnn,average}-{tanh,dot,uniform}` (J&W / W&P; QA/NLI datasets get the question-
conditioned variant of `tanh`/`dot`), `{encoder}-guided-{source model}` (W&P's diagnostic model with
the source model's attention imposed), `{han,flan}-{rnn,conv,none}` (S&S), `transformer-cls`
(the small Transformer trained from scratch).
"""

from __future__ import annotations

from dataclasses import asdict

from torch import nn

from attnexp.models.flat import FlatClassifier, FlatConfig
from attnexp.models.hierarchical import HierarchicalClassifier, HierarchicalConfig
from attnexp.spec import ModelSpec, parse_model_name
from attnexp.models.qa import QAClassifier, QAConfig
from attnexp.models.transformer import TransformerClassifier, TransformerConfig

__all__ = ["ModelSpec", "parse_model_name", "build_model", "model_config", "config_record"]


def model_config(spec: ModelSpec, vocab_size: int, n_classes: int, embedding_dim: int, settings: dict):
    """The dataclass config of a model: everything its architecture depends on (hashed into the
    checkpoint metadata). `settings` is the resolved training settings of the dataset."""
    if spec.family == "transformer":
        return TransformerConfig(
            vocab_size=vocab_size,
            n_classes=n_classes,
            encoder=spec.encoder,
            attention=spec.attention,
            d_model=settings["hidden_size"],
            **settings["transformer"],
        )
    shared = dict(
        vocab_size=vocab_size,
        n_classes=n_classes,
        encoder=spec.encoder,
        embedding_dim=embedding_dim,
        hidden_size=settings["hidden_size"],
    )
    if spec.family == "hierarchical":
        dropout = settings["dropout"][spec.architecture]
        return HierarchicalConfig(
            **shared,
            architecture=spec.architecture,
            conv_input_dropout=settings["conv_input_dropout"],
            dropout_sentence=dropout.get("sentence", 0.0),
            dropout_document=dropout["document"],
            dropout_output=dropout["output"],
        )
    config_class = QAConfig if spec.family == "qa" else FlatConfig
    return config_class(**shared, attention=spec.attention)


def build_model(spec: ModelSpec, config) -> nn.Module:
    """The model a spec names, built from its config; the spec rides along as `model.spec`, so every
    stage can ask it what the model can do."""
    model_class = {
        "flat": FlatClassifier,
        "qa": QAClassifier,
        "hierarchical": HierarchicalClassifier,
        "transformer": TransformerClassifier,
    }[spec.family]
    model = model_class(config)
    model.spec = spec
    return model


def config_record(config) -> dict:
    return {"class": type(config).__name__, **asdict(config)}
