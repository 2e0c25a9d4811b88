"""Model specs (attnexp.spec): parsing `{model}` names, the capabilities every stage asks of a spec
(checked by hand for every family), and the record that checkpoints and metrics.json store."""

from __future__ import annotations

import dataclasses
import json

import pytest

import attnexp.models
from attnexp.spec import PROTOCOL_OF_FAMILY, ModelSpec, parse_model_name

# --------------------------------------------------------------------------------------------------
# names


@pytest.mark.parametrize(
    "name, task, family, encoder, attention, architecture, guide",
    [
        ("lstm-tanh", "binary", "flat", "lstm", "tanh", None, None),
        ("cnn-dot", "multiclass", "flat", "cnn", "dot", None, None),
        ("average-uniform", "binary", "flat", "average", "uniform", None, None),
        ("lstm-tanh", "qa", "qa", "lstm", "tanh", None, None),
        ("average-dot", "nli", "qa", "average", "dot", None, None),
        ("average-guided-lstm-tanh", "binary", "flat", "average", "guided", None, "lstm-tanh"),
        ("cnn-guided-average-uniform", "binary", "flat", "cnn", "guided", None, "average-uniform"),
        ("han-rnn", "multiclass", "hierarchical", "rnn", "context", "han", None),
        ("flan-none", "binary", "hierarchical", "none", "context", "flan", None),
    ],
)
def test_parse_model_name_accepts(name, task, family, encoder, attention, architecture, guide):
    spec = parse_model_name(name, task)
    assert (spec.name, spec.family, spec.encoder, spec.attention, spec.architecture, spec.guide) == (
        name, family, encoder, attention, architecture, guide,
    )
    assert spec.has_own_attention == (attention in {"tanh", "dot", "context"})


@pytest.mark.parametrize(
    "name, task, message",
    [
        ("lstm-uniform", "qa", "tanh or dot"),
        ("average-uniform", "nli", "tanh or dot"),
        ("average-guided-han-rnn", "binary", "flat model"),
        ("average-guided-lstm-guided-lstm-tanh", "binary", "flat model"),
        ("average-guided-lstm-tanh", "qa", "classification"),
        ("han-conv", "qa", "HAN/FLAN models are defined for classification tasks, not qa"),
        ("flan-rnn", "nli", "HAN/FLAN models are defined for classification tasks, not nli"),
        ("average-guided-", "binary", "unknown model"),
        ("gru-tanh", "binary", "unknown model"),
        ("lstm-softmax", "binary", "unknown model"),
        ("lstm", "binary", "unknown model"),
        ("han-lstm", "binary", "unknown model"),
        ("flan", "binary", "unknown model"),
        ("LSTM-tanh", "binary", "unknown model"),
    ],
)
def test_parse_model_name_rejects(name, task, message):
    with pytest.raises(ValueError, match=message):
        parse_model_name(name, task)


def test_models_reexports_the_spec_api():
    assert attnexp.models.ModelSpec is ModelSpec and attnexp.models.parse_model_name is parse_model_name


# --------------------------------------------------------------------------------------------------
# capabilities, by hand for every family

# name, task -> layout, attended, has_own_attention, imposed_attention, attributable_input, linear_readout
CAPABILITIES = [
    ("lstm-tanh", "binary", "sos_eos", "tokens", True, False, True, True),
    ("cnn-dot", "multiclass", "sos_eos", "tokens", True, False, True, True),
    ("average-uniform", "binary", "sos_eos", "tokens", False, False, True, True),
    ("average-guided-lstm-tanh", "binary", "sos_eos", "tokens", False, True, True, True),
    ("lstm-tanh", "qa", "sos_eos", "tokens", True, False, True, False),
    ("average-dot", "nli", "sos_eos", "tokens", True, False, True, False),
    ("han-rnn", "multiclass", "sentences", "sentences", True, False, False, True),
    ("han-none", "binary", "sentences", "sentences", True, False, False, True),
    ("flan-conv", "multiclass", "tokens", "tokens", True, False, False, True),
    ("flan-rnn", "binary", "tokens", "tokens", True, False, False, True),
]


@pytest.mark.parametrize(
    "name, task, layout, attended, own, imposed, attributable, linear", CAPABILITIES, ids=[f"{c[0]}-{c[1]}" for c in CAPABILITIES]
)
def test_capabilities_of_every_family(name, task, layout, attended, own, imposed, attributable, linear):
    spec = parse_model_name(name, task)
    assert (spec.layout, spec.attended, spec.has_own_attention, spec.imposed_attention, spec.attributable_input, spec.linear_readout) == (
        layout, attended, own, imposed, attributable, linear,
    )
    assert spec.family in PROTOCOL_OF_FAMILY


def test_attention_is_trained_is_gone():
    assert not hasattr(parse_model_name("lstm-tanh", "binary"), "attention_is_trained")


# --------------------------------------------------------------------------------------------------
# the stored record


@pytest.mark.parametrize("name, task", [(c[0], c[1]) for c in CAPABILITIES], ids=[f"{c[0]}-{c[1]}" for c in CAPABILITIES])
def test_record_round_trip(name, task):
    spec = parse_model_name(name, task)
    record = spec.record()
    assert set(record) == {"name", "family", "encoder", "attention", "architecture", "guide"} and record["name"] == name
    stored = json.loads(json.dumps(record))  # what a metrics.json / checkpoint holds
    assert ModelSpec.from_record(stored) == spec
    assert ModelSpec.from_record(stored).layout == spec.layout


def test_record_by_hand():
    assert parse_model_name("average-guided-lstm-tanh", "binary").record() == {
        "name": "average-guided-lstm-tanh", "family": "flat", "encoder": "average", "attention": "guided", "architecture": None, "guide": "lstm-tanh",
    }
    assert parse_model_name("han-conv", "multiclass").record() == {
        "name": "han-conv", "family": "hierarchical", "encoder": "conv", "attention": "context", "architecture": "han", "guide": None,
    }


@pytest.mark.parametrize(
    "record, got",
    [
        ({"name": "lstm-tanh", "family": "flat", "encoder": "lstm", "attention": "tanh", "architecture": None}, "'name'"),  # no guide
        (parse_model_name("lstm-tanh", "binary").record() | {"extra": 1}, "'extra'"),
        (["lstm-tanh"], "got list"),
    ],
    ids=["missing", "extra", "not-a-dict"],
)
def test_from_record_refuses_records_with_other_keys(record, got):
    with pytest.raises(ValueError, match="a model spec record needs the keys") as err:
        ModelSpec.from_record(record)
    assert got in str(err.value) and "'guide'" in str(err.value)


def test_specs_are_frozen():
    spec = parse_model_name("lstm-tanh", "binary")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.attention = "dot"
