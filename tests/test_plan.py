"""Run selection (attnexp.plan), on small configs derived from the real config.yaml: which (dataset,
model, seed) runs each experiment gets, the one-line errors for a selection that asks for a model
without a needed capability, RunKey paths, and that planning never imports torch."""

from __future__ import annotations

import ast
import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_tasks import full_grid_raw

from attnexp.config import ConfigError, validate_config
from attnexp.plan import (
    REQUIREMENTS,
    CapabilityError,
    Companions,
    RunKey,
    experiment_runs,
    explanation_files,
    missing_capabilities,
    model_spec,
    ranking_methods,
    require,
    run_dirs,
    selection_problems,
    training_seeds,
    wiegreffe_pinter_companions,
)
from attnexp.spec import ModelSpec, parse_model_name

ROOT = Path(__file__).resolve().parents[1]

SYNTHETIC = [
    "lstm-tanh",
    "lstm-dot",
    "cnn-tanh",
    "average-tanh",
    "lstm-uniform",
    "average-guided-lstm-tanh",
    "han-rnn",
    "flan-conv",
]
SYNTHETIC_QA = ["cnn-dot", "average-tanh"]


@pytest.fixture(scope="module")
def raw_config():
    return full_grid_raw()


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
    config["wiegreffe_pinter"]["models"] = ["lstm-tanh"]  # the default's transformer-cls is not trained here
    return validate_config(config)


def runs(*triples):
    return [RunKey(d, m, s) for d, m, s in triples]


# --------------------------------------------------------------------------------------------------
# runs per experiment


def test_jain_wallace_runs_flat_and_qa_models_with_their_own_attention(small):
    expected = [
        (d, m, s)
        for d, models in (
            ("synthetic", ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh"]),
            ("synthetic_qa", SYNTHETIC_QA),
        )
        for m in models
        for s in (10, 11)
    ]
    assert experiment_runs(small, "jain_wallace") == runs(*expected)  # sorted by dataset, then config order, then seed
    # not: lstm-uniform (no own attention), the guided model (imposed), han-rnn / flan-conv (no attributable input)


def test_serrano_smith_runs_han_flan_and_flat_tanh_dot_but_no_uniform_guided_or_qa(small):
    expected = [
        ("synthetic", m, s)
        for m in ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh", "han-rnn", "flan-conv"]
        for s in (10, 11)
    ]
    assert experiment_runs(small, "serrano_smith") == runs(*expected)
    assert not any(r.dataset == "synthetic_qa" for r in experiment_runs(small, "serrano_smith"))  # QA: not linear


def test_runs_are_narrowed_by_datasets_and_models(small):
    small["jain_wallace"] |= {"datasets": ["synthetic"], "models": ["average-tanh", "lstm-tanh"]}
    assert experiment_runs(small, "jain_wallace") == runs(
        ("synthetic", "lstm-tanh", 10),
        ("synthetic", "lstm-tanh", 11),
        ("synthetic", "average-tanh", 10),
        ("synthetic", "average-tanh", 11),
    )
    small["serrano_smith"] |= {
        "models": ["flan-conv", "average-tanh"]
    }  # average-tanh: flat on synthetic, QA on synthetic_qa
    assert experiment_runs(small, "serrano_smith") == runs(
        ("synthetic", "average-tanh", 10),
        ("synthetic", "average-tanh", 11),
        ("synthetic", "flan-conv", 10),
        ("synthetic", "flan-conv", 11),
    )
    assert (
        selection_problems(small, "serrano_smith") == []
    )  # runnable on synthetic: no error for synthetic_qa's QA model


def test_a_dataset_trains_its_own_seeds_in_place_of_train_seeds(small):
    small["datasets"]["synthetic_qa"]["seeds"] = [12]
    small["jain_wallace"] |= {"models": ["average-tanh"]}
    assert training_seeds(small, "synthetic") == [10, 11] and training_seeds(small, "synthetic_qa") == [12]
    assert experiment_runs(small, "jain_wallace") == runs(
        ("synthetic", "average-tanh", 10), ("synthetic", "average-tanh", 11), ("synthetic_qa", "average-tanh", 12)
    )


def test_disabled_datasets_take_no_part(small):
    small["datasets"]["synthetic_qa"]["enabled"] = False
    assert {r.dataset for r in experiment_runs(small, "jain_wallace")} == {"synthetic"}


def test_run_dirs(small):
    small["serrano_smith"] |= {"models": ["han-rnn"]}
    assert run_dirs(small, "serrano_smith", "results/models") == [
        "results/models/synthetic/han-rnn/seed10",
        "results/models/synthetic/han-rnn/seed11",
    ]


def test_the_real_config_plans_both_papers(raw_config):
    config = validate_config(copy.deepcopy(raw_config))
    jw, ss = experiment_runs(config, "jain_wallace"), experiment_runs(config, "serrano_smith")
    assert {"lstm-tanh", "average-tanh", "cnn-dot"} <= {r.model for r in jw if r.dataset == "sst"}
    assert RunKey("babi1", "lstm-tanh", 10) in jw  # QA models take part, over passage tokens
    assert RunKey("20news20", "han-rnn", 10) in ss and RunKey("sst", "lstm-tanh", 10) in ss
    assert not any(model_spec(config, r.dataset, r.model).family == "qa" for r in ss)
    assert not any(
        r.model.startswith(("han-", "flan-")) or r.model.endswith("-uniform") or "-guided-" in r.model for r in jw
    )
    assert all(config["datasets"][r.dataset]["enabled"] for r in jw + ss)


# --------------------------------------------------------------------------------------------------
# capabilities and their errors


def test_missing_capabilities_and_require():
    assert missing_capabilities(parse_model_name("lstm-tanh", "binary"), "serrano_smith") == []
    assert missing_capabilities(parse_model_name("han-rnn", "binary"), "jain_wallace") == [
        "an encoder over replaceable input embeddings (a flat, QA/NLI or Transformer model)"
    ]
    assert REQUIREMENTS["explain"] == REQUIREMENTS["jain_wallace"][:2]
    transformer = parse_model_name("transformer-cls", "binary")
    # the debate matrix: every paper's experiments run on the Transformer through the same code
    for experiment in ("explain", "faithfulness", "jain_wallace", "serrano_smith", "attention_attribution"):
        assert missing_capabilities(transformer, experiment) == [], experiment
    # the battery ranks HAN/FLAN by their own attention and leave-one-unit-out; only attention is needed
    for name in ("han-rnn", "flan-conv"):
        assert missing_capabilities(parse_model_name(name, "binary"), "faithfulness") == []
        assert missing_capabilities(parse_model_name(name, "binary"), "explain") != []
    assert missing_capabilities(parse_model_name("lstm-uniform", "binary"), "faithfulness") == [
        "its own trained attention"
    ]
    require(parse_model_name("cnn-dot", "qa"), "jain_wallace")  # no error
    with pytest.raises(CapabilityError) as err:
        require(parse_model_name("cnn-dot", "qa"), "serrano_smith")
    assert str(err.value) == (
        "model 'cnn-dot': the Serrano & Smith experiments need a document classifier (not a QA/NLI model), which it lacks"
    )
    both = ModelSpec("odd", "qa", "lstm", "uniform")  # lacks two things: both are named
    with pytest.raises(CapabilityError, match="need its own trained attention and a document classifier"):
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
    assert str(err.value) == (
        "invalid configuration: config key 'serrano_smith.models.0': model 'lstm-uniform': the Serrano & Smith "
        "experiments need its own trained attention, which it lacks"
    )


def test_asking_serrano_smith_for_a_qa_only_model_names_what_it_lacks(small):
    small["serrano_smith"] |= {"datasets": ["synthetic_qa"], "models": ["cnn-dot"]}
    assert selection_problems(small, "serrano_smith") == [
        "config key 'serrano_smith.models.0': model 'cnn-dot': the Serrano & Smith experiments need a document "
        "classifier (not a QA/NLI model), which it lacks"
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
        "replaceable input embeddings (a flat, QA/NLI or Transformer model), which it lacks",
        "config key 'jain_wallace.models.2': 'lstm-tanhh' is not listed under `models` of a selected, enabled dataset; "
        f"did you mean 'lstm-tanh'? (models: {', '.join(sorted({m for d in ('synthetic', 'synthetic_qa') for m in small['datasets'][d]['models']}))})",
    ]
    small["jain_wallace"] |= {"models": None, "datasets": ["sst", "nope"]}
    problems = selection_problems(small, "jain_wallace")
    assert problems[0] == "config key 'jain_wallace.datasets.0': dataset 'sst' is not enabled"
    assert problems[1].startswith(
        "config key 'jain_wallace.datasets.1': unknown dataset 'nope' (datasets: 20news, 20news20, "
    )  # no close match
    assert len(problems) == 2


# --------------------------------------------------------------------------------------------------
# RunKey


def test_run_key_path_and_of_file():
    key = RunKey("synthetic", "lstm-tanh", 10)
    assert key.path("results/models") == "results/models/synthetic/lstm-tanh/seed10"
    assert RunKey.of_file("results/explain/synthetic/lstm-tanh/seed10/explanations.jsonl") == key
    assert RunKey.of_file(Path("/abs/results/models/synthetic_qa/average-guided-lstm-tanh/seed7/model.pt")) == RunKey(
        "synthetic_qa", "average-guided-lstm-tanh", 7
    )
    assert RunKey.of_file(key.path("x") + "/metrics.json") == key  # round trip
    assert RunKey.of_file("a\\b\\sst\\cnn-dot\\seed3\\metrics.json") == RunKey("sst", "cnn-dot", 3)
    assert key._asdict() == {"dataset": "synthetic", "model": "lstm-tanh", "seed": 10}


@pytest.mark.parametrize(
    "path", ["results/synthetic/lstm-tanh/model.pt", "seed10/model.pt", "a/b/seedx/f", "synthetic/lstm-tanh/seed/f"]
)
def test_run_key_of_file_refuses_other_paths(path):
    with pytest.raises(ValueError, match="not a per-run file"):
        RunKey.of_file(path)


def test_shifted_test_sets_exist_for_the_generated_binary_task_and_planted_datasets():
    from attnexp.plan import has_shifted_test

    assert has_shifted_test({"protocol": "generated", "generator": {"question": False}})
    assert not has_shifted_test({"protocol": "generated", "generator": {"question": True}})
    assert has_shifted_test({"protocol": "planted"})
    assert not has_shifted_test({"protocol": "jain_wallace", "files": {"rationale": "span"}})


# --------------------------------------------------------------------------------------------------
# torch-free


def test_planning_and_config_validation_never_import_torch():
    """Nor does any module the Snakefile and its rule files import: every Snakemake start (a dry run, each
    run of a workflow) would pay torch's seconds of import."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    workflow = [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]
    imported = sorted(
        {m for path in workflow for m in re.findall(r"^(?:from|import) (attnexp[\w.]*)", path.read_text(), re.M)}
    )
    assert "attnexp.papers.zoo" in imported  # the pattern finds them
    code = (
        f"import attnexp.plan, attnexp.config, attnexp.spec, {', '.join(imported)}, sys; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr


# The rule scripts that run a model (or compare distributions with the differentiable metrics of
# attnexp.metrics); every other script only reads and writes tables and figures.
TORCH_SCRIPTS = {
    "attention_attribution_graphs",
    "attention_attribution_heads",
    "explain",
    "export_attention",
    "faithfulness_eraser",
    "jw_adversarial",
    "jw_permutation",
    "jw_shifted_accuracy",
    "ss_interventions",
    "train_model",
    "wp_figures",  # Table 1's instance: the largest JSD between base and adversary attention
    "wp_frontier",
    "wp_seed_variance",
    "zoo_tables",  # JSD between attention and gradient
}


def test_scripts_that_run_no_model_never_import_torch():
    """A job that only reads tables pays no torch import (2-4 s on 2 cores, in every table and figure
    job): what those scripts import, the summaries included, stays torch-free. One interpreter imports
    every script's imports with torch blocked and names each script whose imports reached it."""
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    assert TORCH_SCRIPTS <= {path.stem for path in scripts}
    imports = {  # every import statement of the script, at any depth (a lazy import pays as much)
        path.name: [
            ast.unparse(node)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.Import, ast.ImportFrom))
        ]
        for path in scripts
        if path.stem not in TORCH_SCRIPTS
    }
    code = f"""
import importlib.abc, sys
class BlockTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            raise ImportError("torch imported")
sys.meta_path.insert(0, BlockTorch())
for script, lines in {imports!r}.items():
    try:
        exec("\\n".join(lines))
    except ImportError as error:
        print(script, error)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "", result.stdout


# --------------------------------------------------------------------------------------------------
# Wiegreffe & Pinter: binary datasets only, and the companion runs of each base run


@pytest.fixture
def real(raw_config):
    """The real config.yaml, validated (a fresh copy per test: tests change it)."""
    return validate_config(copy.deepcopy(raw_config))


def test_wiegreffe_pinter_runs_its_bases_on_the_enabled_binary_datasets_only(real):
    wp = experiment_runs(real, "wiegreffe_pinter")
    binary = sorted(name for name, ds in real["datasets"].items() if ds["enabled"] and ds["task"] == "binary")
    assert binary == ["20news", "agnews", "imdb", "sst", "synthetic"]
    wanted = real["wiegreffe_pinter"]["models"]  # the full grid: lstm-tanh, the Transformer and the zoo
    assert {"lstm-tanh", "transformer-cls", "lstm-diversity-tanh", "lstm-sparsemax"} <= set(wanted)
    bases = [
        (d, m, s) for d in binary for m in real["datasets"][d]["models"] if m in wanted for s in real["train"]["seeds"]
    ]
    assert wp == runs(*bases) and {d for d, m, _ in bases if m == "transformer-cls"} == {"imdb", "sst", "synthetic"}
    datasets = {r.dataset for r in wp}
    assert not datasets & {"babi1", "babi2", "babi3", "snli", "20news20", "imdb_ratings"}  # QA, NLI, multiclass
    assert not datasets & {"diabetes", "anemia", "yelp"}  # disabled
    assert selection_problems(real, "wiegreffe_pinter") == []


def test_wiegreffe_pinter_open_model_selection_takes_every_imitable_model_with_its_own_attention(small):
    small["datasets"]["synthetic"]["models"] = [
        *SYNTHETIC,
        "lstm-tanh-adversary-1e-3",
        "average-guided-lstm-tanh-adversary-1e-3",
    ]
    small["wiegreffe_pinter"]["models"] = None
    assert experiment_runs(small, "wiegreffe_pinter") == runs(
        *[("synthetic", m, s) for m in ["lstm-tanh", "lstm-dot", "cnn-tanh", "average-tanh"] for s in (10, 11)]
    )  # not: uniform, guided (of a base or of an adversary), an adversary, han/flan; nothing of synthetic_qa


def test_wiegreffe_pinter_asked_for_an_adversary_or_uniform_model_names_what_it_lacks(small):
    small["datasets"]["synthetic"]["models"] = [*SYNTHETIC, "lstm-tanh-adversary-1e-3"]
    small["wiegreffe_pinter"]["models"] = ["lstm-tanh-adversary-1e-3", "lstm-uniform", "lstm-tanh"]
    assert selection_problems(small, "wiegreffe_pinter") == [
        "config key 'wiegreffe_pinter.models.0': model 'lstm-tanh-adversary-1e-3': the Wiegreffe & Pinter experiments need "
        "a flat or Transformer classifier of its own (uniform, guided and adversarial counterparts exist for it), which it lacks",
        "config key 'wiegreffe_pinter.models.1': model 'lstm-uniform': the Wiegreffe & Pinter experiments need its own trained attention, which it lacks",
    ]
    with pytest.raises(
        CapabilityError,
        match="model 'lstm-tanh-adversary-1e-3': the Wiegreffe & Pinter experiments need a flat or Transformer classifier",
    ):
        require(parse_model_name("lstm-tanh-adversary-1e-3", "binary"), "wiegreffe_pinter")


@pytest.mark.parametrize("dataset, task", [("20news20", "multiclass"), ("babi1", "qa"), ("snli", "nli")])
def test_wiegreffe_pinter_on_a_non_binary_dataset_is_a_config_error_naming_the_key(raw_config, dataset, task):
    config = copy.deepcopy(raw_config)
    config["wiegreffe_pinter"]["datasets"] = ["sst", dataset]
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    assert str(err.value) == (
        f"invalid configuration: config key 'wiegreffe_pinter.datasets.1': dataset {dataset!r} is a {task} task; "
        "the Wiegreffe & Pinter experiments need binary"
    )


def test_wiegreffe_pinter_companions_of_the_real_config(real):
    base = RunKey("sst", "lstm-tanh", 10)
    companions = wiegreffe_pinter_companions(real, base)
    assert isinstance(companions, Companions) and companions.base == base
    run = lambda model, seed=10: RunKey("sst", model, seed)  # noqa: E731
    assert companions.uniform == run("lstm-uniform")
    assert companions.seeds == [run("lstm-tanh", s) for s in [50, 257, 500231, 100078, 12504, 90754789, 8988812, 2]]
    assert companions.adversaries == {
        1e-4: run("lstm-tanh-adversary-1e-4"),
        1e-3: run("lstm-tanh-adversary-1e-3"),
        1e-2: run("lstm-tanh-adversary-1e-2"),
        0.1: run("lstm-tanh-adversary-1e-1"),
        1.0: run("lstm-tanh-adversary-1e0"),
        10.0: run("lstm-tanh-adversary-1e1"),
    }
    assert list(companions.adversaries) == real["wiegreffe_pinter"]["adversary"]["lambdas"]  # config order
    assert real["wiegreffe_pinter"]["adversary"]["table_lambda"] == 1e-3
    assert companions.diagnostic == {
        "uniform": run("average-uniform"),
        "trained": run("average-tanh"),
        "base": run("average-guided-lstm-tanh"),
        "adversary": run("average-guided-lstm-tanh-adversary-1e-3"),
    }
    assert companions.full is True
    every = companions.all()
    assert every == [
        base,
        run("lstm-uniform"),
        *companions.seeds,
        *companions.adversaries.values(),
        *companions.diagnostic.values(),
    ]
    assert len(every) == 1 + 1 + 8 + 6 + 4 == len(set(every))
    for r in every:  # every companion is a model name of the dataset's task, with the spec the names promise
        spec = model_spec(real, r.dataset, r.model)
        assert spec.name == r.model
    assert all(model_spec(real, "sst", r.model).imitates == "lstm-tanh" for r in companions.adversaries.values())
    assert {lam: model_spec(real, "sst", r.model).adversary_lambda for lam, r in companions.adversaries.items()} == {
        lam: lam for lam in companions.adversaries
    }
    assert model_spec(real, "sst", companions.diagnostic["adversary"].model).guide == companions.adversaries[1e-3].model


def test_wiegreffe_pinter_companions_follow_the_base_model_and_the_config(small):
    small["wiegreffe_pinter"] |= {"seeds": [3, 11, 4], "diagnostic_encoder": "cnn"}
    small["wiegreffe_pinter"]["adversary"] |= {"lambdas": [0.025, 1.0], "table_lambda": 0.025}
    companions = wiegreffe_pinter_companions(small, RunKey("synthetic", "average-dot", 11))
    run = lambda model, seed=11: RunKey("synthetic", model, seed)  # noqa: E731
    assert companions.uniform == run("average-uniform")
    assert companions.seeds == [run("average-dot", 3), run("average-dot", 4)]  # the base's own seed 11 left out
    assert companions.adversaries == {0.025: run("average-dot-adversary-2p5e-2"), 1.0: run("average-dot-adversary-1e0")}
    assert companions.diagnostic == {
        "uniform": run("cnn-uniform"),
        "trained": run("cnn-dot"),
        "base": run("cnn-guided-average-dot"),
        "adversary": run("cnn-guided-average-dot-adversary-2p5e-2"),
    }


def test_wiegreffe_pinter_companions_of_the_transformer(real):
    """The debate matrix: W&P's uniform twin, seeds, adversaries and diagnostic MLPs of the
    Transformer are ordinary models of the vocabulary, trained by the same jobs."""
    companions = wiegreffe_pinter_companions(real, RunKey("sst", "transformer-cls", 10))
    run = lambda model, seed=10: RunKey("sst", model, seed)  # noqa: E731
    assert companions.uniform == run("transformer-uniform")
    assert companions.seeds[0] == run("transformer-cls", 50)
    assert companions.adversaries[1e-3] == run("transformer-cls-adversary-1e-3")
    assert companions.diagnostic == {
        "uniform": run("average-uniform"),
        "trained": run("average-tanh"),  # the MLP's own additive attention (the base's is `[CLS]` self-attention)
        "base": run("average-guided-transformer-cls"),
        "adversary": run("average-guided-transformer-cls-adversary-1e-3"),
    }
    for companion in companions.all():
        model_spec(real, "sst", companion.model)  # every name parses


def test_wiegreffe_pinter_companion_seeds_keep_every_seed_when_the_base_seed_is_not_listed(real):
    seeds = real["wiegreffe_pinter"]["seeds"]
    assert 10 not in seeds
    assert [r.seed for r in wiegreffe_pinter_companions(real, RunKey("sst", "lstm-tanh", 10)).seeds] == seeds
    assert [r.seed for r in wiegreffe_pinter_companions(real, RunKey("sst", "lstm-tanh", 257)).seeds] == [
        s for s in seeds if s != 257
    ]
    assert len(seeds) - 1 == len(wiegreffe_pinter_companions(real, RunKey("sst", "lstm-tanh", 2)).seeds)


def test_wiegreffe_pinter_dataset_seeds_override_the_seed_list_for_that_dataset_only(real):
    real["wiegreffe_pinter"]["dataset_seeds"] = {"imdb": [7, 10, 8]}
    imdb = wiegreffe_pinter_companions(real, RunKey("imdb", "lstm-tanh", 10))
    assert imdb.seeds == [RunKey("imdb", "lstm-tanh", 7), RunKey("imdb", "lstm-tanh", 8)]
    sst = wiegreffe_pinter_companions(real, RunKey("sst", "lstm-tanh", 10))
    assert [r.seed for r in sst.seeds] == real["wiegreffe_pinter"]["seeds"]
    real["wiegreffe_pinter"]["dataset_seeds"] = {"imdb": []}  # no seed models on imdb
    assert wiegreffe_pinter_companions(real, RunKey("imdb", "lstm-tanh", 10)).seeds == []


def test_wiegreffe_pinter_table2_only_datasets_run_only_the_base_and_its_uniform_twin(real):
    real["wiegreffe_pinter"]["table2_only"] = ["imdb"]
    imdb = wiegreffe_pinter_companions(real, RunKey("imdb", "lstm-tanh", 10))
    assert imdb.full is False
    assert imdb.all() == [RunKey("imdb", "lstm-tanh", 10), RunKey("imdb", "lstm-uniform", 10)]
    sst = wiegreffe_pinter_companions(real, RunKey("sst", "lstm-tanh", 10))
    assert sst.full is True and len(sst.all()) == 20


@pytest.mark.parametrize(
    "base, lacks",
    [
        (RunKey("sst", "lstm-uniform", 10), "its own trained attention"),
        (RunKey("babi1", "lstm-tanh", 10), "a flat or Transformer classifier of its own"),
    ],
)
def test_wiegreffe_pinter_companions_refuse_a_base_without_the_capabilities(real, base, lacks):
    with pytest.raises(CapabilityError, match=f"model {base.model!r}: the Wiegreffe & Pinter experiments need {lacks}"):
        wiegreffe_pinter_companions(real, base)


def test_explanation_files_name_one_job_per_method_attention_first():
    run = RunKey("sst", "lstm-tanh", 10)
    assert explanation_files(run, ["loo", "gradient"]) == [
        "results/explain/sst/lstm-tanh/seed10/attention.jsonl",
        "results/explain/sst/lstm-tanh/seed10/gradient.jsonl",
        "results/explain/sst/lstm-tanh/seed10/loo.jsonl",
    ]
    with pytest.raises(ValueError, match=r"unknown explanation methods \['shap'\]"):
        explanation_files(run, ["shap"])


def test_ranking_methods_read_self_attention_methods_only_for_self_attention_models():
    rankings = ["attention_x_gradient", "ig", "rollout", "attattr"]
    assert ranking_methods(rankings, parse_model_name("lstm-tanh", "binary")) == ("attention", "gradient", "ig")
    assert ranking_methods(rankings, parse_model_name("transformer-cls", "binary")) == (
        "attention",
        "gradient",
        "ig",
        "rollout",
        "attattr",
    )
