"""Model specs (attnexp.spec): parsing `{model}` names, the capabilities every stage asks of a spec
(checked by hand for every family), and the record that checkpoints and metrics.json store."""

from __future__ import annotations

import dataclasses
import json

import pytest

import attnexp.models
from attnexp.spec import FAMILIES, ModelSpec, adversary_name, lambda_tag, parse_model_name

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
        name,
        family,
        encoder,
        attention,
        architecture,
        guide,
    )
    assert spec.has_own_attention == (attention in {"tanh", "dot", "context"})


@pytest.mark.parametrize(
    "name, task, message",
    [
        ("lstm-uniform", "qa", "tanh or dot"),
        ("average-uniform", "nli", "tanh or dot"),
        ("average-guided-han-rnn", "binary", "flat or Transformer model"),
        ("average-guided-lstm-guided-lstm-tanh", "binary", "flat or Transformer model"),
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
    "name, task, layout, attended, own, imposed, attributable, linear",
    CAPABILITIES,
    ids=[f"{c[0]}-{c[1]}" for c in CAPABILITIES],
)
def test_capabilities_of_every_family(name, task, layout, attended, own, imposed, attributable, linear):
    spec = parse_model_name(name, task)
    assert (
        spec.layout,
        spec.attended,
        spec.has_own_attention,
        spec.imposed_attention,
        spec.attributable_input,
        spec.linear_readout,
    ) == (
        layout,
        attended,
        own,
        imposed,
        attributable,
        linear,
    )
    assert spec.family in FAMILIES


def test_attention_is_trained_is_gone():
    assert not hasattr(parse_model_name("lstm-tanh", "binary"), "attention_is_trained")


# --------------------------------------------------------------------------------------------------
# the stored record


@pytest.mark.parametrize(
    "name, task", [(c[0], c[1]) for c in CAPABILITIES], ids=[f"{c[0]}-{c[1]}" for c in CAPABILITIES]
)
def test_record_round_trip(name, task):
    spec = parse_model_name(name, task)
    record = spec.record()
    assert (
        set(record)
        == {"name", "family", "encoder", "attention", "architecture", "guide", "imitates", "adversary_lambda"}
        and record["name"] == name
    )
    stored = json.loads(json.dumps(record))  # what a metrics.json / checkpoint holds
    assert ModelSpec.from_record(stored) == spec
    assert ModelSpec.from_record(stored).layout == spec.layout


def test_record_by_hand():
    assert parse_model_name("average-guided-lstm-tanh", "binary").record() == {
        "name": "average-guided-lstm-tanh",
        "family": "flat",
        "encoder": "average",
        "attention": "guided",
        "architecture": None,
        "guide": "lstm-tanh",
        "imitates": None,
        "adversary_lambda": None,
    }
    assert parse_model_name("han-conv", "multiclass").record() == {
        "name": "han-conv",
        "family": "hierarchical",
        "encoder": "conv",
        "attention": "context",
        "architecture": "han",
        "guide": None,
        "imitates": None,
        "adversary_lambda": None,
    }


@pytest.mark.parametrize(
    "record, got",
    [
        (
            {"name": "lstm-tanh", "family": "flat", "encoder": "lstm", "architecture": None},
            "'name'",
        ),  # no attention (required)
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


# --------------------------------------------------------------------------------------------------
# W&P's model-consistent adversaries: `{base}-adversary-{λ}`


LAMBDA_TAGS = [
    (1e-4, "1e-4"),
    (1e-3, "1e-3"),
    (1e-2, "1e-2"),
    (0.1, "1e-1"),
    (1, "1e0"),
    (1.0, "1e0"),
    (10, "1e1"),
    (0.025, "2p5e-2"),
    (1.5, "1p5e0"),
    (250, "2p5e2"),
]


@pytest.mark.parametrize("value, tag", LAMBDA_TAGS, ids=[t for _, t in LAMBDA_TAGS])
def test_lambda_tag_and_its_parse_round_trip(value, tag):
    assert lambda_tag(value) == tag
    assert adversary_name("lstm-tanh", value) == f"lstm-tanh-adversary-{tag}"
    spec = parse_model_name(f"lstm-tanh-adversary-{tag}", "binary")
    assert spec.adversary_lambda == value and isinstance(spec.adversary_lambda, float)
    assert lambda_tag(spec.adversary_lambda) == tag  # name -> λ -> name
    assert "." not in tag  # the `{model}` wildcard takes no dots


@pytest.mark.parametrize("value", [0, 0.0, -1e-3, float("nan")])
def test_lambda_tag_refuses_a_non_positive_lambda(value):
    with pytest.raises(ValueError, match="must be positive"):
        lambda_tag(value)


@pytest.mark.parametrize(
    "tag, canonical",
    [
        ("1e-03", "1e-3"),
        ("0.1", "1e-1"),
        ("10", "1e1"),
        ("1E-3", "1e-3"),
        ("2.5e-2", "2p5e-2"),
        ("0p1", "1e-1"),
        ("1p0e0", "1e0"),
        ("1e+1", "1e1"),
    ],
)
def test_a_non_canonical_lambda_tag_is_refused_with_the_canonical_form(tag, canonical):
    name = f"lstm-tanh-adversary-{tag}"
    with pytest.raises(ValueError) as err:
        parse_model_name(name, "binary")
    message = str(err.value)
    assert f"model {name!r}" in message and f"{tag!r} is not a λ in name form" in message
    assert f"(write it {canonical!r})" in message


@pytest.mark.parametrize("tag", ["", "x", "0", "0e0", "-1e-3", "nan", "1e-3p"])
def test_a_lambda_tag_that_is_no_positive_number_is_refused_without_a_canonical_form(tag):
    with pytest.raises(ValueError, match="is not a λ in name form") as err:
        parse_model_name(f"lstm-tanh-adversary-{tag}", "binary")
    assert "write it" not in str(err.value)


@pytest.mark.parametrize("tag", ["inf", "1e400"])
def test_an_infinite_lambda_tag_is_refused_naming_the_model(tag):
    with pytest.raises(ValueError, match="is not a λ in name form"):
        parse_model_name(f"lstm-tanh-adversary-{tag}", "binary")


def test_adversary_spec_fields_and_capabilities():
    spec = parse_model_name("lstm-tanh-adversary-1e-3", "binary")
    assert spec == ModelSpec(
        "lstm-tanh-adversary-1e-3", "flat", "lstm", "tanh", imitates="lstm-tanh", adversary_lambda=1e-3
    )
    assert spec.is_adversary and not spec.imitable
    assert spec.has_own_attention and not spec.imposed_attention and spec.guide is None
    assert (spec.layout, spec.attended, spec.attributable_input, spec.linear_readout) == (
        "sos_eos",
        "tokens",
        True,
        True,
    )
    assert spec.family in FAMILIES
    dot = parse_model_name("cnn-dot-adversary-2p5e-2", "binary")
    assert (dot.encoder, dot.attention, dot.imitates, dot.adversary_lambda) == ("cnn", "dot", "cnn-dot", 0.025)


@pytest.mark.parametrize(
    "name, imitable",
    [
        ("lstm-tanh", True),
        ("average-dot", True),
        ("lstm-uniform", True),
        ("average-guided-lstm-tanh", False),
        ("han-rnn", False),
        ("flan-conv", False),
    ],
)
def test_imitable_and_is_adversary_of_the_other_models(name, imitable):
    spec = parse_model_name(name, "binary")
    assert spec.imitable is imitable and not spec.is_adversary
    assert spec.imitates is None and spec.adversary_lambda is None


def test_imitable_is_false_for_qa_models():
    assert (
        not parse_model_name("lstm-tanh", "qa").imitable
        and not parse_model_name("lstm-tanh", "multiclass").is_adversary
    )
    assert parse_model_name("lstm-tanh", "multiclass").imitable  # a flat classifier, whatever the task


@pytest.mark.parametrize(
    "name, task, base",
    [
        ("lstm-uniform-adversary-1e-3", "binary", "'lstm-uniform'"),  # no attention of its own
        ("average-uniform-adversary-1e-3", "binary", "'average-uniform'"),
        ("han-rnn-adversary-1e-3", "binary", "'han-rnn'"),  # not flat
        ("flan-conv-adversary-1e-3", "binary", "'flan-conv'"),
        ("lstm-tanh-adversary-1e-3-adversary-1e-3", "binary", "'lstm-tanh-adversary-1e-3'"),  # an adversary's adversary
        ("lstm-tanh-adversary-1e-3", "multiclass", "on a multiclass task"),
        ("lstm-tanh-adversary-1e-3", "qa", "on a qa task"),
        ("cnn-dot-adversary-1e-3", "nli", "on a nli task"),
    ],
)
def test_an_adversary_of_a_model_without_imitable_attention_is_refused(name, task, base):
    with pytest.raises(
        ValueError, match="an adversary imitates a flat or Transformer binary classifier with its own attention"
    ) as err:
        parse_model_name(name, task)
    assert f"model {name!r}" in str(err.value) and base in str(err.value)


def test_an_adversary_of_a_guided_model_is_refused():
    """`{encoder}-guided-` binds first, so the adversary suffix belongs to the guide: the name is a
    guided model of an adversary (below), never an adversary of a guided model."""
    spec = parse_model_name("average-guided-lstm-tanh-adversary-1e-3", "binary")
    assert not spec.is_adversary and spec.attention == "guided"
    for name in ("average-guided-lstm-uniform-adversary-1e-3", "average-guided-han-rnn-adversary-1e-3"):
        with pytest.raises(ValueError, match="an adversary imitates"):
            parse_model_name(name, "binary")
    with pytest.raises(ValueError, match="not a λ in name form"):
        parse_model_name("average-guided-lstm-tanh-adversary-0.001", "binary")


def test_a_guided_model_of_an_adversary():
    spec = parse_model_name("average-guided-lstm-tanh-adversary-1e-3", "binary")
    assert spec == ModelSpec(
        "average-guided-lstm-tanh-adversary-1e-3", "flat", "average", "guided", guide="lstm-tanh-adversary-1e-3"
    )
    assert spec.guide == adversary_name("lstm-tanh", 1e-3)
    assert spec.imposed_attention and not spec.has_own_attention and not spec.imitable and not spec.is_adversary
    assert spec.imitates is None and spec.adversary_lambda is None  # the guide's λ is not the guided model's
    assert parse_model_name(spec.guide, "binary").is_adversary
    with pytest.raises(ValueError, match="classification"):
        parse_model_name("average-guided-lstm-tanh-adversary-1e-3", "qa")


@pytest.mark.parametrize(
    "name",
    [
        "lstm-tanh-adversary-1e-3",
        "cnn-dot-adversary-2p5e-2",
        "average-tanh-adversary-1e1",
        "average-guided-lstm-tanh-adversary-1e-4",
    ],
)
def test_record_round_trip_of_adversaries_and_their_guided_models(name):
    spec = parse_model_name(name, "binary")
    record = spec.record()
    assert set(record) == {
        "name",
        "family",
        "encoder",
        "attention",
        "architecture",
        "guide",
        "imitates",
        "adversary_lambda",
    }
    stored = json.loads(json.dumps(record))
    assert ModelSpec.from_record(stored) == spec
    restored = ModelSpec.from_record(stored)
    assert (restored.is_adversary, restored.imitates, restored.adversary_lambda, restored.guide) == (
        spec.is_adversary,
        spec.imitates,
        spec.adversary_lambda,
        spec.guide,
    )


def test_adversary_record_by_hand():
    assert parse_model_name("lstm-tanh-adversary-2p5e-2", "binary").record() == {
        "name": "lstm-tanh-adversary-2p5e-2",
        "family": "flat",
        "encoder": "lstm",
        "attention": "tanh",
        "architecture": None,
        "guide": None,
        "imitates": "lstm-tanh",
        "adversary_lambda": 0.025,
    }


@pytest.mark.parametrize(
    "record",
    [
        {
            "name": "lstm-tanh",
            "family": "flat",
            "encoder": "lstm",
            "attention": "tanh",
            "architecture": None,
            "guide": None,
        },  # before W&P
        {
            "name": "average-guided-lstm-tanh",
            "family": "flat",
            "encoder": "average",
            "attention": "guided",
            "architecture": None,
            "guide": "lstm-tanh",
        },
        {"name": "lstm-tanh", "family": "flat", "encoder": "lstm", "attention": "tanh"},  # only the required keys
    ],
    ids=["pre-wp", "pre-wp-guided", "required-only"],
)
def test_from_record_loads_an_older_record_without_the_new_keys(record):
    spec = ModelSpec.from_record(record)
    assert spec == parse_model_name(record["name"], "binary")
    assert spec.imitates is None and spec.adversary_lambda is None and not spec.is_adversary
    assert spec.record() == {"architecture": None, "guide": None, **record, "imitates": None, "adversary_lambda": None}


@pytest.mark.parametrize(
    "change, named",
    [
        ({"lambda": 1e-3}, "'lambda'"),  # a near miss of adversary_lambda
        ({"imitate": "lstm-tanh"}, "'imitate'"),
    ],
)
def test_from_record_refuses_an_unknown_key_of_an_adversary_record(change, named):
    record = parse_model_name("lstm-tanh-adversary-1e-3", "binary").record() | change
    with pytest.raises(ValueError, match="a model spec record needs the keys") as err:
        ModelSpec.from_record(record)
    assert named in str(err.value) and "'adversary_lambda'" in str(err.value) and "'imitates'" in str(err.value)


@pytest.mark.parametrize("missing", ["name", "family", "encoder", "attention"])
def test_from_record_refuses_a_record_without_a_required_key(missing):
    record = parse_model_name("lstm-tanh-adversary-1e-3", "binary").record()
    del record[missing]
    with pytest.raises(ValueError, match="a model spec record needs the keys") as err:
        ModelSpec.from_record(record)
    assert "['attention', 'encoder', 'family', 'name']" in str(err.value)
