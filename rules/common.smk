# Config validation, target lists, what the papers make, and the input functions several rule files
# share; a rule file's own input functions are defined beside its rules.
import os
import sys
from functools import cache
from pathlib import Path

# The library lives in src/; make it importable here and in every rule script, installed or not.
SRC = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SRC)
# Rule scripts run in fresh interpreters (possibly in a conda env): hand them the same import path.
os.environ.update(
    PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
)

from attnexp.config import (
    ConfigError,
    config_origins,
    training_selection,
    training_settings,
    validate_config,
)
from attnexp.scorecard import same_data_stand_ins
from attnexp.data.documents import SPLITS, changed_since_written
from attnexp.data.embeddings import plan_embeddings
from attnexp.data.sources import (
    digest_of,
    disagreeing_sources,
    input_paths,
    resolve_sources,
)
from attnexp.plan import (
    RANKING_METHODS,
    RunKey,
    carries_rationale,
    has_shifted_test,
    explanation_files,
    experiment_runs,
    model_spec,
    ranking_methods,
    run_dirs,
    training_seeds,
    wiegreffe_pinter_companions,
)
from attnexp.papers import PAPERS
from attnexp.workflow import (
    check_papers_included,
    command_line_dry_run,
    command_line_targets,
    end_rescheduling_timers,
    progress_display,
    unknown_targets,
)
from snakemake.logging import logger as snakemake_logger

# The console of a run shows progress and errors; Snakemake's per-job chatter stays in its log. First,
# so that a refused configuration reaches the console as its message alone
progress_display(snakemake_logger, dry_run=command_line_dry_run(sys.argv[1:]))
# A refused key is named with the file and line that set it (config.yaml, an overlay, or --config)
validate_config(
    config,
    Path(workflow.basedir) / "schemas" / "config.schema.yaml",
    origins=config_origins(
        [Path(workflow.basedir) / "config.yaml", *workflow.overwrite_configfiles],
        workflow.config_settings.config,
    ),
)

# Jobs that run a model request a GPU only where the config pins `device: cuda`: with `auto` they
# use one when their node has it, and must not keep a CPU-only cluster waiting for a GPU slot.
GPUS = 1 if config["device"] == "cuda" else 0

DATASETS = sorted(config["datasets"])
ENABLED = [name for name in DATASETS if config["datasets"][name]["enabled"]]


@cache
def sources_of(dataset):
    """The resolved source files of a dataset (canonical, or labelled stand-ins from the mirror)."""
    return resolve_sources(
        dataset, config["datasets"][dataset], config["mirror"], config["substitutes"]
    )


# Refused here, before Snakemake plans a job that deletes a good file: a fetched file the config now
# gives another checksum (its download would rerun), and a preprocessed split changed after it was
# written (every job reading it would rerun, its outputs deleted first)
if problems := [p for d in ENABLED for p in disagreeing_sources(sources_of(d))] + [
    p for d in ENABLED for p in changed_since_written(f"results/data/{d}")
]:
    raise ConfigError("\n".join(problems))


wildcard_constraints:
    dataset="|".join(DATASETS),
    file=r"[^/]+",
    model=r"[a-z0-9]+(-[a-z0-9]+)+",
    seed=r"\d+",


def preprocessing_config(dataset):
    """A dataset's config without its training keys, so that adding a model or changing a training
    setting never re-runs preprocessing."""
    return {
        key: value
        for key, value in config["datasets"][dataset].items()
        if key not in ("models", "train", "enabled")
    }


def source_record(wildcards):
    for source in sources_of(wildcards.dataset):
        if source.file == wildcards.file:
            return source.as_record() | {
                "config_key": f"datasets.{source.dataset}.sources"
            }
    raise ValueError(
        f"{wildcards.file!r} is not a source of dataset {wildcards.dataset!r}"
    )


def downloaded_files(wildcards):
    return [f"resources/{s.dataset}/{s.file}" for s in sources_of(wildcards.dataset)]


def readable_inputs(wildcards):
    """Extracted archive folders and plain downloaded files."""
    return input_paths(sources_of(wildcards.dataset))


def local_files(wildcards):
    """Bring-your-own files, read where they are: MIMIC-III's, or the tables of a dataset from files."""
    ds = config["datasets"][wildcards.dataset]
    tables = [ds["files"][split] for split in SPLITS if ds.get("files", {}).get(split)]
    return ds["local_files"] + tables


def planted_base(wildcards):
    """A planted dataset's base: its preprocessed splits."""
    ds = config["datasets"][wildcards.dataset]
    if ds["protocol"] != "planted":
        return []
    return [
        f"results/data/{ds['planted']['base']}/{s}.jsonl"
        for s in ("train", "dev", "test")
    ]


def planted_base_test(wildcards):
    """A planted dataset's base test split, which its shifted test set plants again (none otherwise)."""
    ds = config["datasets"][wildcards.dataset]
    if ds["protocol"] != "planted":
        return []
    return f"results/data/{ds['planted']['base']}/test.jsonl"


@cache
def embedding_plan(dataset):
    """Which vectors a dataset gets (D-EMB); None for random initialisation."""
    return plan_embeddings(
        config["datasets"][dataset], config["embeddings"], config["mirror"]
    )


def embedding_inputs(wildcards):
    plan = embedding_plan(wildcards.dataset)
    if plan is None:
        raise ValueError(
            f"dataset {wildcards.dataset!r} uses random word vectors: nothing to build"
        )
    splits = plan["word2vec"]["corpus"] if plan["kind"] == "word2vec" else []
    inputs = {
        "vocab": f"results/data/{wildcards.dataset}/vocab.txt",
        "corpus": [f"results/data/{wildcards.dataset}/{s}.jsonl" for s in splits],
    }
    # a pretrained file; the GloVe package's files are checked by the job itself
    if "path" in plan:
        inputs["vectors"] = plan["path"]
    return inputs


def vector_file_record(wildcards):
    for name, entry in config["embeddings"]["vectors"].items():
        if entry["file"] == wildcards.file:
            return dict(
                file=entry["file"],
                url=entry["url"],
                digest=list(digest_of(entry)),
                config_key=f"embeddings.vectors.{name}",
            )
    raise ValueError(f"{wildcards.file!r} is not a configured vector file")


def embedding_targets():
    return [
        f"results/embeddings/{dataset}/{name}"
        for dataset in ENABLED
        if embedding_plan(dataset) is not None
        for name in ("vectors.npy", "vectors.json")
    ]


def dataset_files(dataset):
    return {
        split: f"results/data/{dataset}/{split}.jsonl"
        for split in ("train", "dev", "test")
    } | {
        "vocab": f"results/data/{dataset}/vocab.txt",
        "stats": f"results/data/{dataset}/stats.json",
    }


def guide_attention(wildcards):
    """A guided model's imposed weights: its source model's exported attention, same seed."""
    guide = model_spec(config, wildcards.dataset, wildcards.model).guide
    if guide is None:
        return {}
    return {
        "guide": f"results/models/{wildcards.dataset}/{guide}/seed{wildcards.seed}/attention.jsonl"
    }


def imitated_run(wildcards):
    """A W&P adversary's base model: its exported predictions and attention, same seed."""
    base = model_spec(config, wildcards.dataset, wildcards.model).imitates
    if base is None:
        return {}
    return {
        "guide": f"results/models/{wildcards.dataset}/{base}/seed{wildcards.seed}/attention.jsonl"
    }


def training_inputs(wildcards):
    inputs = (
        dataset_files(wildcards.dataset)
        | guide_attention(wildcards)
        | imitated_run(wildcards)
    )
    uses_vectors = model_spec(config, wildcards.dataset, wildcards.model).word_vectors
    if uses_vectors and embedding_plan(wildcards.dataset) is not None:
        inputs["vectors"] = f"results/embeddings/{wildcards.dataset}/vectors.npy"
        inputs["vectors_meta"] = f"results/embeddings/{wildcards.dataset}/vectors.json"
    return inputs


def attention_export_inputs(wildcards):
    model_dir = (
        f"results/models/{wildcards.dataset}/{wildcards.model}/seed{wildcards.seed}"
    )
    return (
        dataset_files(wildcards.dataset)
        | guide_attention(wildcards)
        | {"model": f"{model_dir}/model.pt"}
    )


def model_targets(filename):
    return [
        f"results/models/{dataset}/{model}/seed{seed}/{filename}"
        for dataset in ENABLED
        for model in config["datasets"][dataset]["models"]
        for seed in training_seeds(config, dataset)
    ]


# Published numbers the tables compare against (references/README.md)
PUBLISHED = Path(workflow.basedir) / "references"


def data_targets():
    return expand("results/data/{dataset}/stats.json", dataset=ENABLED) + [
        "results/tables/datasets.csv",
        "results/tables/datasets.md",
    ]


def performance_targets():
    if not model_targets("metrics.json"):
        return []
    return ["results/tables/performance.csv", "results/tables/performance.md"]


# Each stage's rule file registers what it finally makes (TARGETS[stage] = [...]); `all` builds them all.
TARGETS = {}


def all_targets():
    return [path for stage in TARGETS.values() for path in stage]


# What the papers make, read by the rule files included after theirs (claims.smk, debate_matrix.smk and
# report.smk) — every paper found in `attnexp.papers` whose rule file recorded targets, with what its descriptor
# names by convention (its claims file, its debate cells, its report tables).
def papers_made(reader):
    """The registered papers that run in this config, each rule file included before `reader`."""
    check_papers_included(PAPERS, TARGETS, reader)
    return [paper for paper in PAPERS.values() if TARGETS[paper.key]]


def model_files(wildcards):
    """A trained model with the data it was trained on."""
    run = f"results/models/{wildcards.dataset}/{wildcards.model}/seed{wildcards.seed}"
    return dataset_files(wildcards.dataset) | {
        "model": f"{run}/model.pt",
        "metrics": f"{run}/metrics.json",
    }


def ff_explanations(wildcards):
    """The faithfulness battery ranks by a model's explanations where it has attributable input;
    HAN and FLAN are ranked by their own attention and leave-one-unit-out (no explanations).
    """
    spec = model_spec(config, wildcards.dataset, wildcards.model)
    if not spec.attributable_input:
        return {}
    run = RunKey(wildcards.dataset, wildcards.model, int(wildcards.seed))
    methods = ranking_methods(config["faithfulness"]["rankings"], spec)
    return {"explanations": explanation_files(run, methods)}


def every_method(run):
    """Every explanation method a run's model has (rollout, attattr: self-attention models only)."""
    return ranking_methods(RANKING_METHODS, model_spec(config, run.dataset, run.model))


# Wiegreffe & Pinter: each base run's companion runs (attnexp.plan.wiegreffe_pinter_companions)
WP_COMPANIONS = {
    run: wiegreffe_pinter_companions(config, run)
    for run in experiment_runs(config, "wiegreffe_pinter")
}


def wp_companions(wildcards):
    return WP_COMPANIONS[
        RunKey(wildcards.dataset, wildcards.model, int(wildcards.seed))
    ]


def exported(run):
    return f"{run.path('results/models')}/attention.jsonl"


def trained(run):
    return f"{run.path('results/models')}/metrics.json"


def wp_lambdas(wildcards):
    return sorted(wp_companions(wildcards).adversaries)


def check_targets():
    """A misspelt target, named like a rule but none, gets the closest rule name and the workflow's
    aggregate targets in one line each, instead of Snakemake's "No rule to produce"."""
    aggregates = sorted(
        r.name for r in workflow.rules if not r.output and not r.has_wildcards()
    )
    unknown_targets(
        command_line_targets(sys.argv[1:]), [r.name for r in workflow.rules], aggregates
    )
