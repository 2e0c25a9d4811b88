"""Run selection (attnexp.plan), on small configs derived from the real config.yaml: which (dataset,
model, seed) runs each experiment gets, the one-line errors for a selection that asks for a model
without a needed capability, RunKey paths, and that planning never imports torch."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from attnexp.config import ConfigError, validate_config
from attnexp.plan import (
    REQUIREMENTS,
    CapabilityError,
    RunKey,
    experiment_runs,
    missing_capabilities,
    model_spec,
    require,
    run_dirs,
    selection_problems,
)
from attnexp.spec import ModelSpec, parse_model_name

ROOT = Path(__file__).resolve().parents[1]

SYNTHETIC = ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh", "lstm-uniform", "average-guided-lstm-tanh", "han-rnn", "flan-conv"]
SYNTHETIC_QA = ["cnn-dot", "average-tanh"]


@pytest.fixture(scope="module")
def raw_config():
    return yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


@pytest.fixture
def small(raw_config):
    """Only `synthetic` (binary) and `synthetic_qa` (QA) enabled, with their models spelled out here
    (so the expectations below do not drift with config.yaml), two seeds."""
    config = copy.deepcopy(raw_config)
    for name, ds in config["datasets"].items():
        ds["enabled"] = name in ("synthetic", "synthetic_qa")
    config["datasets"]["synthetic"]["models"] = list(SYNTHETIC)
    config["datasets"]["synthetic_qa"]["models"] = list(SYNTHETIC_QA)
    config["train"]["seeds"] = [10, 11]
    return validate_config(config)


def runs(*triples):
    return [RunKey(d, m, s) for d, m, s in triples]


# --------------------------------------------------------------------------------------------------
# runs per experiment


def test_jain_wallace_runs_flat_and_qa_models_with_their_own_attention(small):
    expected = [(d, m, s) for d, models in (("synthetic", ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh"]), ("synthetic_qa", SYNTHETIC_QA)) for m in models for s in (10, 11)]
    assert experiment_runs(small, "jain_wallace") == runs(*expected)  # sorted by dataset, then config order, then seed
    # not: lstm-uniform (no own attention), the guided model (imposed), han-rnn / flan-conv (no attributable input)


def test_serrano_smith_runs_han_flan_and_flat_tanh_dot_but_no_uniform_guided_or_qa(small):
    expected = [("synthetic", m, s) for m in ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh", "han-rnn", "flan-conv"] for s in (10, 11)]
    assert experiment_runs(small, "serrano_smith") == runs(*expected)
    assert not any(r.dataset == "synthetic_qa" for r in experiment_runs(small, "serrano_smith"))  # QA: not linear


def test_runs_are_narrowed_by_datasets_and_models(small):
    small["jain_wallace"] |= {"datasets": ["synthetic"], "models": ["average-tanh", "lstm-tanh"]}
    assert experiment_runs(small, "jain_wallace") == runs(
        ("synthetic", "lstm-tanh", 10), ("synthetic", "lstm-tanh", 11), ("synthetic", "average-tanh", 10), ("synthetic", "average-tanh", 11)
    )
    small["serrano_smith"] |= {"models": ["flan-conv", "average-tanh"]}  # average-tanh: flat on synthetic, QA on synthetic_qa
    assert experiment_runs(small, "serrano_smith") == runs(
        ("synthetic", "average-tanh", 10), ("synthetic", "average-tanh", 11), ("synthetic", "flan-conv", 10), ("synthetic", "flan-conv", 11)
    )
    assert selection_problems(small, "serrano_smith") == []  # runnable on synthetic: no error for synthetic_qa's QA model


def test_disabled_datasets_take_no_part(small):
    small["datasets"]["synthetic_qa"]["enabled"] = False
    assert {r.dataset for r in experiment_runs(small, "jain_wallace")} == {"synthetic"}


def test_run_dirs(small):
    small["serrano_smith"] |= {"models": ["han-rnn"]}
    assert run_dirs(small, "serrano_smith", "results/models") == ["results/models/synthetic/han-rnn/seed10", "results/models/synthetic/han-rnn/seed11"]


def test_the_real_config_plans_both_papers(raw_config):
    config = validate_config(copy.deepcopy(raw_config))
    jw, ss = experiment_runs(config, "jain_wallace"), experiment_runs(config, "serrano_smith")
    assert {"lstm-tanh", "average-tanh", "cnn-dot"} <= {r.model for r in jw if r.dataset == "sst"}
    assert RunKey("babi1", "lstm-tanh", 10) in jw  # QA models take part, over passage tokens
    assert RunKey("20news20", "han-rnn", 10) in ss and RunKey("sst", "lstm-tanh", 10) in ss
    assert not any(model_spec(config, r.dataset, r.model).family == "qa" for r in ss)
    assert not any(r.model.startswith(("han-", "flan-")) or r.model.endswith("-uniform") or "-guided-" in r.model for r in jw)
    assert all(config["datasets"][r.dataset]["enabled"] for r in jw + ss)


# --------------------------------------------------------------------------------------------------
# capabilities and their errors


def test_missing_capabilities_and_require():
    assert missing_capabilities(parse_model_name("lstm-tanh", "binary"), "serrano_smith") == []
    assert missing_capabilities(parse_model_name("han-rnn", "binary"), "jain_wallace") == [
        "an encoder over replaceable input embeddings (a flat or QA/NLI model)"
    ]
    assert REQUIREMENTS["explain"] == REQUIREMENTS["jain_wallace"]
    require(parse_model_name("cnn-dot", "qa"), "jain_wallace")  # no error
    with pytest.raises(CapabilityError) as err:
        require(parse_model_name("cnn-dot", "qa"), "serrano_smith")
    assert str(err.value) == (
        "model 'cnn-dot': the Serrano & Smith experiments need an output layer linear in the attention "
        "(a classifier, not a QA/NLI model), which it lacks"
    )
    both = ModelSpec("odd", "qa", "lstm", "uniform")  # lacks two things: both are named
    with pytest.raises(CapabilityError, match="need its own trained attention and an output layer linear"):
        require(both, "serrano_smith")
    with pytest.raises(ValueError, match="unknown experiment 'wiegreffe'"):
        missing_capabilities(both, "wiegreffe")


def test_asking_serrano_smith_for_lstm_uniform_is_a_one_line_error(small):
    small["serrano_smith"]["models"] = ["lstm-uniform"]
    assert selection_problems(small, "serrano_smith") == [
        "config key 'serrano_smith.models.0': model 'lstm-uniform': the Serrano & Smith experiments need its own trained attention, which it lacks"
    ]
    config = copy.deepcopy(small)
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    problems = [line for line in str(err.value).splitlines() if "config key" in line]
    assert problems == [
        "  config key 'serrano_smith.models.0': model 'lstm-uniform': the Serrano & Smith experiments need its own trained attention, which it lacks"
    ]


def test_asking_serrano_smith_for_a_qa_only_model_names_the_linear_readout(small):
    small["serrano_smith"] |= {"datasets": ["synthetic_qa"], "models": ["cnn-dot"]}
    assert selection_problems(small, "serrano_smith") == [
        "config key 'serrano_smith.models.0': model 'cnn-dot': the Serrano & Smith experiments need an output layer "
        "linear in the attention (a classifier, not a QA/NLI model), which it lacks"
    ]


def test_a_model_runnable_on_one_selected_dataset_is_not_an_error(raw_config):
    """`lstm-tanh` is a QA model on babi1 and a classifier on sst: asked of S&S with both datasets
    selected, it runs on sst and is not refused because babi1 sorts first."""
    config = validate_config(copy.deepcopy(raw_config))
    config["serrano_smith"] |= {"datasets": ["babi1", "sst"], "models": ["lstm-tanh"]}
    assert selection_problems(config, "serrano_smith") == []
    assert experiment_runs(config, "serrano_smith") == [RunKey("sst", "lstm-tanh", 10)]


def test_jain_wallace_selection_errors(small):
    small["jain_wallace"]["models"] = ["han-rnn", "lstm-tanh", "lstm-tanhh"]
    assert selection_problems(small, "jain_wallace") == [
        "config key 'jain_wallace.models.0': model 'han-rnn': the Jain & Wallace experiments need an encoder over "
        "replaceable input embeddings (a flat or QA/NLI model), which it lacks",
        "config key 'jain_wallace.models.2': 'lstm-tanhh' is not listed under `models` of a selected, enabled dataset",
    ]
    small["jain_wallace"] |= {"models": None, "datasets": ["sst", "nope"]}
    assert selection_problems(small, "jain_wallace") == [
        "config key 'jain_wallace.datasets.0': dataset 'sst' is not enabled",
        "config key 'jain_wallace.datasets.1': unknown dataset 'nope'",
    ]


# --------------------------------------------------------------------------------------------------
# RunKey


def test_run_key_path_and_of_file():
    key = RunKey("synthetic", "lstm-tanh", 10)
    assert key.path("results/models") == "results/models/synthetic/lstm-tanh/seed10"
    assert RunKey.of_file("results/explain/synthetic/lstm-tanh/seed10/explanations.jsonl") == key
    assert RunKey.of_file(Path("/abs/results/models/synthetic_qa/average-guided-lstm-tanh/seed7/model.pt")) == RunKey("synthetic_qa", "average-guided-lstm-tanh", 7)
    assert RunKey.of_file(key.path("x") + "/metrics.json") == key  # round trip
    assert RunKey.of_file("a\\b\\sst\\cnn-dot\\seed3\\metrics.json") == RunKey("sst", "cnn-dot", 3)
    assert key._asdict() == {"dataset": "synthetic", "model": "lstm-tanh", "seed": 10}


@pytest.mark.parametrize("path", ["results/synthetic/lstm-tanh/model.pt", "seed10/model.pt", "a/b/seedx/f", "synthetic/lstm-tanh/seed/f"])
def test_run_key_of_file_refuses_other_paths(path):
    with pytest.raises(ValueError, match="not a per-run file"):
        RunKey.of_file(path)


# --------------------------------------------------------------------------------------------------
# torch-free


def test_planning_and_config_validation_never_import_torch():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    code = "import attnexp.plan, attnexp.config, attnexp.spec, sys; assert 'torch' not in sys.modules, 'torch imported'"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
