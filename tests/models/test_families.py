"""The model-family contract: every family's models satisfy `AttentionModel` (and the optional
protocols their spec's capabilities promise), and a family added through the two registration points
(`attnexp.models.register_family_model`: its record and its torch side) trains, explains and runs
Jain & Wallace's experiments on `synthetic` without a change anywhere else."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from torch import nn

from attnexp import models
from attnexp import spec as spec_module
from attnexp.data.preprocess import build_vocab
from attnexp.data.synthetic import generate
from attnexp.explain import explain_examples
from attnexp.models import (
    AttentionModel,
    FamilyModel,
    HierarchicalAttentionModel,
    SelfAttentionModel,
    register_family_model,
)
from attnexp.models.attention import AdditiveAttention, real_token_mask
from attnexp.models.inputs import Batch, Encoded, to_examples
from attnexp.models.splits import SplitData
from attnexp.papers.jain_wallace import experiment as jw
from attnexp.spec import FAMILIES, Family, ModelSpec, parse_model_name
from attnexp.train import build_and_initialise
from attnexp.train.loop import train_model
from tests.tiny_tasks import load_config, quiet, tiny_settings

# one model of every family and architecture, with the task it is defined for
EVERY_KIND = [
    ("lstm-tanh", "binary"),
    ("cnn-dot", "multiclass"),
    ("average-uniform", "binary"),
    ("lstm-guided-lstm-tanh", "binary"),
    ("lstm-tanh", "qa"),
    ("han-rnn", "multiclass"),
    ("flan-conv", "multiclass"),
    ("transformer-cls", "binary"),
]


@pytest.fixture(scope="module")
def config():
    return load_config()


@pytest.mark.parametrize(("name", "task"), EVERY_KIND)
def test_every_family_satisfies_the_contract_its_capabilities_promise(config, name, task):
    spec = parse_model_name(name, task)
    settings = tiny_settings(
        config,
        "transformer-cls"
        if spec.family == "transformer"
        else "han-rnn"
        if spec.family == "hierarchical"
        else "lstm-tanh",
    )
    model, _ = build_and_initialise(
        spec, [f"w{i}" for i in range(30)], 3 if task == "multiclass" else 2, None, settings
    )
    assert isinstance(model, AttentionModel) and model.spec == spec
    assert isinstance(model, SelfAttentionModel) == spec.self_attention
    if spec.attended == "sentences":  # a HAN: its weight on each word, through both levels
        assert isinstance(model, HierarchicalAttentionModel)
    assert ("embedded" in inspect.signature(model.encode).parameters) == spec.attributable_input
    assert set(models.MODEL_FAMILIES) == set(FAMILIES)


def test_a_spec_record_of_an_unknown_family_is_refused():
    record = parse_model_name("lstm-tanh", "binary").record() | {"family": "bag"}
    with pytest.raises(ValueError, match="unknown family 'bag'"):
        ModelSpec.from_record(record)


# ---------------------------------------------------------------------------------------------
# A family added from outside: attention straight over the word embeddings (no encoder)


@dataclass
class BagConfig:
    vocab_size: int
    n_classes: int
    encoder: str
    embedding_dim: int
    hidden_size: int
    attention: str


class BagClassifier(nn.Module):
    layout = "sos_eos"
    guided = False

    def __init__(self, cfg: BagConfig):
        super().__init__()
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embedding_dim, padding_idx=0)
        self.attention = AdditiveAttention(cfg.embedding_dim, cfg.hidden_size)
        self.decoder = nn.Linear(cfg.embedding_dim, cfg.n_classes)

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        hidden = self.embedding(batch.tokens) if embedded is None else embedded
        return Encoded(hidden, real_token_mask(batch.lengths, batch.tokens.shape[1]))

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if attention is None:
            attention = self.attention(encoded.hidden, encoded.mask)
        return self.decoder(torch.einsum("...bl,blh->...bh", attention, encoded.hidden)), attention

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch))


def _bag_name(name: str, task: str) -> ModelSpec | None:
    return ModelSpec(name, "bag", "bag", "tanh") if name == "bag-tanh" and task == "binary" else None


BAG = Family(
    "bag",
    "jain_wallace",
    classifier=True,
    attributable_input=True,
    linear_readout=True,
    self_attention=False,
    word_vectors=True,
    imitable=False,
    binary_outputs=1,
    parse_name=_bag_name,
)


@pytest.fixture
def bag_family():
    def make(spec, vocab_size, n_classes, embedding_dim, settings):
        return BagConfig(vocab_size, n_classes, spec.encoder, embedding_dim, settings["hidden_size"], spec.attention)

    register_family_model(BAG, FamilyModel(BagConfig, BagClassifier, make))
    yield
    del FAMILIES["bag"], models.MODEL_FAMILIES["bag"]


def synthetic_splits(config) -> tuple[dict[str, SplitData], list[str]]:
    generator = config["datasets"]["synthetic"]["generator"] | {"sizes": {"train": 400, "dev": 60, "test": 40}}
    documents = generate(generator, config["datasets"]["synthetic"]["split_seed"])
    vocab = build_vocab(documents["train"], 1)
    return {
        split: SplitData(to_examples([d.to_record() for d in docs], vocab, [0, 1])) for split, docs in documents.items()
    }, vocab


def test_a_family_registered_through_its_record_trains_explains_and_runs_jain_wallace(config, bag_family):
    spec = parse_model_name("bag-tanh", "binary")
    assert spec.traits is BAG and spec.attributable_input and spec.output_size(2) == 1
    with pytest.raises(ValueError, match="registered already"):
        spec_module.register_family(BAG)
    splits, vocab = synthetic_splits(config)
    settings = tiny_settings(config, "lstm-tanh", epochs=3, hidden_size=16, embedding_dim=16)
    torch.manual_seed(0)
    model, _ = build_and_initialise(spec, vocab, 2, None, settings)
    assert isinstance(model, AttentionModel) and model.spec is spec
    result = train_model(model, splits, settings, select_on="dev", seed=0, device=torch.device("cpu"), log=quiet)
    losses = [epoch["train_loss"] for epoch in result.history]
    assert len(losses) == 3 and losses[-1] < losses[0]  # it learns
    model.load_state_dict(result.state_dict)
    model.eval()
    test = splits["test"].examples
    records = explain_examples(
        model, test, {"batch_size": 16, "loo_op": "delete"}, quiet, ("attention", "gradient", "loo")
    )
    assert len(records) == len(test) and all(len(r["gradient"]) == len(r["attention"]) == r["length"] for r in records)
    taus = jw.correlations(records)
    assert set(taus["pair"]) == {"attention~gradient", "attention~loo", "gradient~loo"} and taus["tau"].notna().any()
    js = config["jain_wallace"] | {"permutations": 5}
    permutation = jw.permutation_rows(model, test, js, seed=10)
    assert len(permutation) == len(test) and np.isfinite([r["median_output_difference"] for r in permutation]).all()
    adversarial, exported = jw.adversarial_rows(
        model, test[:8], js | {"adversary": js["adversary"] | {"steps": 20}}, seed=10, log=quiet
    )
    assert len(adversarial) == len(exported) == 8
