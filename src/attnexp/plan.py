"""Run selection, torch-free: config -> the (dataset, model, seed) runs each experiment runs on.

Each experiment states the capabilities it needs (`REQUIREMENTS`, asked of the model's spec, never
of its name). A run is selected when its dataset is enabled and its model is configured for that
dataset, has every capability, and passes the experiment's `datasets` / `models` narrowing in the
config. A model without a needed capability is skipped silently when the selection is open, and is
an error naming the model and what it lacks when the config asks for it by name.

The Snakefile and the rule files call this; so does config validation, so a selection that names
nothing runnable fails before any job is planned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from attnexp.messages import close_match
from attnexp.papers import JobSettings, RegistryView
from attnexp.papers.faithfulness import RANKINGS as FAITHFULNESS_RANKINGS
from attnexp.papers.jain_wallace import JAIN_WALLACE
from attnexp.spec import ModelSpec, adversary_name, parse_model_name

__all__ = [
    "RunKey",
    "REQUIREMENTS",
    "CapabilityError",
    "model_spec",
    "training_seeds",
    "carries_rationale",
    "has_shifted_test",
    "missing_capabilities",
    "require",
    "experiment_runs",
    "run_dirs",
    "selection_problems",
    "Companions",
    "wiegreffe_pinter_companions",
    "EXPLAIN_SETTINGS",
    "EXPLANATION_METHODS",
    "explained_together",
    "explain_settings",
    "SELF_ATTENTION_METHODS",
    "RANKING_METHODS",
    "explanation_files",
    "ranking_methods",
]

# experiment -> (spec capability, what it means) it needs: each paper's own (`attnexp.papers`), and
# the explanations (the J&W inputs), which need attention to read and input embeddings to attribute to
REQUIREMENTS: Mapping[str, tuple[tuple[str, str], ...]] = RegistryView(
    lambda papers: {
        **{key: paper.requirements for key, paper in papers.items()},
        "explain": JAIN_WALLACE.requirements[:2],
    }
)
TITLES: Mapping[str, str] = RegistryView(
    lambda papers: {**{key: paper.title for key, paper in papers.items()}, "explain": "explanation"}
)
# Explanation methods, one cached job each (`attnexp.explain`), with the settings each job depends on
# (changing IG's settings re-runs IG alone): `attention` carries the prediction every other file is
# read with; rollout and attention attribution exist for self-attention models only.
EXPLAIN_SETTINGS = {
    method: JobSettings("explain", ("batch_size", *keys))
    for method, keys in (
        ("attention", ()),
        ("gradient", ()),
        ("loo", ("loo_op",)),
        ("ig", ("ig_target", "ig_baseline", "ig_method", "ig_steps", "ig_max_steps", "ig_tolerance")),
        ("rollout", ("rollout_readout",)),
        ("attattr", ("attattr_steps", "attattr_riemann")),
    )
}
EXPLANATION_METHODS = tuple(EXPLAIN_SETTINGS)
SELF_ATTENTION_METHODS = ("rollout", "attattr")
# faithfulness ranking -> the explanation methods it is computed from (its record, `attnexp.papers.faithfulness`)
RANKING_METHODS = {name: methods for name, (_, methods) in FAITHFULNESS_RANKINGS.items() if methods}
# experiment -> the dataset tasks it is defined for (absent: every task)
TASKS: Mapping[str, tuple[str, ...]] = RegistryView(
    lambda papers: {key: paper.tasks for key, paper in papers.items() if paper.tasks is not None}
)


def explained_together(config: dict) -> tuple[str, ...]:
    """The methods one job per model computes (`explain.together`), in `EXPLANATION_METHODS` order:
    by default attention, gradient and leave-one-out, each a fraction of a second to a few seconds on a
    J&W test split, less than the start-up (Python, torch, the model) a job of its own adds."""
    together = set(config["explain"]["together"])
    return tuple(method for method in EXPLANATION_METHODS if method in together)


def explain_settings(config: dict, methods) -> dict:
    """The settings the explain job of `methods` depends on: each method's declared keys, once."""
    return {key: value for method in methods for key, value in EXPLAIN_SETTINGS[method].of(config).items()}


class RunKey(NamedTuple):
    dataset: str
    model: str
    seed: int

    def path(self, root: str) -> str:
        """`{root}/{dataset}/{model}/seed{seed}` (DESIGN.md paths)."""
        return f"{root}/{self.dataset}/{self.model}/seed{self.seed}"

    @classmethod
    def of_file(cls, path) -> RunKey:
        """The run of a per-run file `.../{dataset}/{model}/seed{seed}/<file>`."""
        parts = str(path).replace("\\", "/").split("/")
        if len(parts) < 4 or not parts[-2].startswith("seed") or not parts[-2][4:].isdigit():
            raise ValueError(f"{path}: not a per-run file .../{{dataset}}/{{model}}/seed{{seed}}/<file>")
        return cls(parts[-4], parts[-3], int(parts[-2][4:]))


class CapabilityError(ValueError):
    """A model lacks what an experiment needs."""


def model_spec(config: dict, dataset: str, model: str) -> ModelSpec:
    """The spec of a configured model name on a dataset (the name is parsed here and in names.py only)."""
    return parse_model_name(model, config["datasets"][dataset]["task"])


def training_seeds(config: dict, dataset: str) -> list[int]:
    """The seeds a dataset's models train with: its own `seeds` where set (a smaller budget), else
    `train.seeds`."""
    return config["datasets"][dataset].get("seeds") or config["train"]["seeds"]


def carries_rationale(dataset_config: dict) -> bool:
    """Whether a dataset's test records mark the tokens that decide the label (`rationale`): the
    generated and planted datasets, and a dataset from files with a rationale column."""
    return dataset_config["protocol"] in ("generated", "planted") or bool(
        (dataset_config.get("files") or {}).get("rationale")
    )


def has_shifted_test(dataset_config: dict) -> bool:
    """Whether a dataset has a shifted test set (rule shifted_test): the generated binary task (cues of
    both classes per instance) and the planted datasets (labels independent of the original text)."""
    protocol = dataset_config["protocol"]
    return protocol == "planted" or (protocol == "generated" and not dataset_config["generator"].get("question"))


def missing_capabilities(spec: ModelSpec, experiment: str) -> list[str]:
    if experiment not in REQUIREMENTS:
        raise ValueError(f"unknown experiment {experiment!r}: expected one of {sorted(REQUIREMENTS)}")
    return [meaning for capability, meaning in REQUIREMENTS[experiment] if not getattr(spec, capability)]


def require(spec: ModelSpec, experiment: str) -> None:
    """One-line refusal naming the model and what it lacks."""
    missing = missing_capabilities(spec, experiment)
    if missing:
        raise CapabilityError(
            f"model {spec.name!r}: the {TITLES[experiment]} experiments need {' and '.join(missing)}, which it lacks"
        )


def _selection(config: dict, experiment: str) -> dict:
    """`config[experiment]` with its `datasets` / `models` narrowing (explanations have none: they
    follow the J&W runs)."""
    if experiment not in config or "models" not in config[experiment]:
        raise ValueError(f"experiment {experiment!r} has no `datasets` / `models` selection in the config")
    return config[experiment]


def _selected_datasets(config: dict, experiment: str) -> list[str]:
    wanted = _selection(config, experiment)["datasets"]
    tasks = TASKS.get(experiment)
    return [
        name
        for name, ds in sorted(config["datasets"].items())
        if ds["enabled"] and (wanted is None or name in wanted) and (tasks is None or ds["task"] in tasks)
    ]


def experiment_runs(config: dict, experiment: str) -> list[RunKey]:
    """Every (dataset, model, seed) the experiment runs on, sorted by dataset then config order."""
    wanted = _selection(config, experiment)["models"]
    return [
        RunKey(dataset, model, seed)
        for dataset in _selected_datasets(config, experiment)
        for model in config["datasets"][dataset].get("models", [])
        if (wanted is None or model in wanted)
        and not missing_capabilities(model_spec(config, dataset, model), experiment)
        for seed in training_seeds(config, dataset)
    ]


def explanation_files(run: RunKey, methods) -> list[str]:
    """The explanation files of a run for these methods, `attention.jsonl` always first (it carries the
    prediction); each method once, in `EXPLANATION_METHODS` order."""
    unknown = sorted(set(methods) - set(EXPLANATION_METHODS))
    if unknown:
        raise ValueError(f"unknown explanation methods {unknown}; expected some of {EXPLANATION_METHODS}")
    wanted = {"attention", *methods}
    return [f"{run.path('results/explain')}/{m}.jsonl" for m in EXPLANATION_METHODS if m in wanted]


def ranking_methods(rankings, spec: ModelSpec) -> tuple[str, ...]:
    """The explanation methods the faithfulness rankings of one model read (a self-attention method
    only for a model with self-attention)."""
    needed = {m for r in rankings if r in RANKING_METHODS for m in RANKING_METHODS[r]}
    return tuple(
        m for m in EXPLANATION_METHODS if m in needed and (spec.self_attention or m not in SELF_ATTENTION_METHODS)
    )


def run_dirs(config: dict, experiment: str, root: str) -> list[str]:
    """`{root}/{dataset}/{model}/seed{seed}` of every run of the experiment."""
    return [run.path(root) for run in experiment_runs(config, experiment)]


def selection_problems(config: dict, experiment: str) -> list[str]:
    """What is wrong with `config[experiment].datasets / .models`, one line per problem naming the
    key: an unknown or disabled dataset, a model no selected dataset trains, a model that lacks a
    capability the experiment needs."""
    selected, problems = _selection(config, experiment), []
    for i, name in enumerate(selected["datasets"] or []):
        if name not in config["datasets"]:
            problems.append(
                f"config key '{experiment}.datasets.{i}': unknown dataset {name!r}{close_match(name, config['datasets'])}"
            )
        elif not config["datasets"][name]["enabled"]:
            problems.append(f"config key '{experiment}.datasets.{i}': dataset {name!r} is not enabled")
        elif experiment in TASKS and config["datasets"][name]["task"] not in TASKS[experiment]:
            task = config["datasets"][name]["task"]
            problems.append(
                f"config key '{experiment}.datasets.{i}': dataset {name!r} is a {task} task; the {TITLES[experiment]} experiments need {' or '.join(TASKS[experiment])}"
            )
    if problems or selected["models"] is None:
        return problems
    datasets = _selected_datasets(config, experiment)
    for i, model in enumerate(selected["models"]):
        hosts = [d for d in datasets if model in config["datasets"][d].get("models", [])]
        if not hosts:
            listed = sorted({m for d in datasets for m in config["datasets"][d].get("models", [])})
            problems.append(
                f"config key '{experiment}.models.{i}': {model!r} is not listed under `models` of a selected, enabled dataset"
                f"{close_match(model, listed, 'models')}"
            )
            continue
        # a name can mean different models on different datasets (flat on sst, QA on babi1): it is an
        # error only when it runs on none of them
        lacking = [missing_capabilities(model_spec(config, d, model), experiment) for d in hosts]
        if all(lacking):
            missing = lacking[0]
            problems.append(
                f"config key '{experiment}.models.{i}': model {model!r}: the {TITLES[experiment]} experiments need {' and '.join(missing)}, which it lacks"
            )
    return problems


# ---------------------------------------------------------------------------------------------
# Wiegreffe & Pinter: the models each base run needs, all ordinary training jobs


class Companions(NamedTuple):
    """The runs W&P compare with one base run (same dataset; W&P §3-§4)."""

    base: RunKey
    uniform: RunKey  # §3.2: the same encoder trained end to end with 1/n attention
    seeds: list[RunKey]  # §3.3: the base model on the other seeds
    adversaries: dict[float, RunKey]  # §4: λ -> the model-consistent adversary
    diagnostic: dict[str, RunKey]  # §3.4: guide -> the diagnostic MLP imposed with it
    full: bool  # False: only Table 2 runs on this dataset (`wiegreffe_pinter.table2_only`)

    def all(self) -> list[RunKey]:
        if not self.full:
            return [self.base, self.uniform]
        return [self.base, self.uniform, *self.seeds, *self.adversaries.values(), *self.diagnostic.values()]


def wiegreffe_pinter_companions(config: dict, base: RunKey) -> Companions:
    """Names follow the model vocabulary (attnexp.spec): `lstm-uniform`, `lstm-tanh-adversary-1e-3`,
    `average-guided-lstm-tanh`, and for the Transformer `transformer-uniform`,
    `transformer-cls-adversary-1e-3`, `average-guided-transformer-cls`, ... Seed models use
    `wiegreffe_pinter.seeds` (the base's own seed left out; `dataset_seeds` may give a dataset its own
    list); every other companion uses the base's seed."""
    wp = config["wiegreffe_pinter"]
    spec = model_spec(config, base.dataset, base.model)
    require(spec, "wiegreffe_pinter")
    run = lambda model, seed=base.seed: RunKey(base.dataset, model, seed)  # noqa: E731
    adversaries = {lam: run(adversary_name(spec.name, lam)) for lam in wp["adversary"]["lambdas"]}
    mlp = wp["diagnostic_encoder"]
    diagnostic = {
        "uniform": run(f"{mlp}-uniform"),
        "trained": run(spec.diagnostic_trained(mlp)),
        "base": run(f"{mlp}-guided-{spec.name}"),
        "adversary": run(f"{mlp}-guided-{adversaries[wp['adversary']['table_lambda']].model}"),
    }
    return Companions(
        base=base,
        uniform=run(spec.uniform_twin),
        seeds=[
            run(spec.name, seed) for seed in wp["dataset_seeds"].get(base.dataset, wp["seeds"]) if seed != base.seed
        ],
        adversaries=adversaries,
        diagnostic=diagnostic,
        full=base.dataset not in wp["table2_only"],
    )
