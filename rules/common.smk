# Config validation, target lists and input functions. Input functions live here and nowhere else.
from functools import cache
from pathlib import Path

from attnexp.config import validate_config
from attnexp.data.sources import input_paths, resolve_sources


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
            return source.as_record()
    raise ValueError(
        f"{wildcards.file!r} is not a source of dataset {wildcards.dataset!r}"
    )


def downloaded_files(wildcards):
    return [f"resources/{s.dataset}/{s.file}" for s in sources_of(wildcards.dataset)]


def readable_inputs(wildcards):
    """Extracted archive folders and plain files, plus bring-your-own files (MIMIC-III)."""
    return input_paths(sources_of(wildcards.dataset)) + list(
        config["datasets"][wildcards.dataset]["local_files"]
    )


def data_targets():
    return expand("results/data/{dataset}/stats.json", dataset=ENABLED) + [
        "results/tables/datasets.csv",
        "results/tables/datasets.md",
    ]


def all_targets():
    return data_targets()
