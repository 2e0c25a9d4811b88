# Config validation, target lists and input functions. Input functions live here and nowhere else.
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

from attnexp.config import validate_config
from attnexp.data.embeddings import plan_embeddings
from attnexp.data.sources import digest_of, input_paths, resolve_sources

validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")

DATASETS = sorted(config["datasets"])
ENABLED = [name for name in DATASETS if config["datasets"][name]["enabled"]]


wildcard_constraints:
    dataset="|".join(DATASETS),
    file=r"[^/]+",


@cache
def sources_of(dataset):
    """The resolved source files of a dataset (canonical, or labelled stand-ins from the mirror)."""
    return resolve_sources(
        dataset, config["datasets"][dataset], config["mirror"], config["substitutes"]
    )


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
    """Bring-your-own files (MIMIC-III), read where they are."""
    return config["datasets"][wildcards.dataset]["local_files"]


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
    if plan["kind"] == "pretrained":
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


# Published numbers the tables compare against (references/README.md)
PUBLISHED = Path(workflow.basedir) / "references"


def data_targets():
    return expand("results/data/{dataset}/stats.json", dataset=ENABLED) + [
        "results/tables/datasets.csv",
        "results/tables/datasets.md",
    ]


def all_targets():
    return data_targets() + embedding_targets()
