# Stage 1: raw sources -> verified files -> preprocessed splits -> the dataset table.


rule download_source:
    output:
        "resources/{dataset}/{file}",
    log:
        "results/logs/download_source/{dataset}/{file}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        source=source_record,
        mirror=config["mirror"],
        download=config["download"],
    script:
        "../scripts/download_source.py"


rule extract_archive:
    input:
        "resources/{dataset}/{file}",
    output:
        directory("resources/{dataset}/unpacked/{file}"),
    log:
        "results/logs/extract_archive/{dataset}/{file}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        source=source_record,
    script:
        "../scripts/extract_archive.py"


rule preprocess_dataset:
    input:
        downloaded=downloaded_files,
        readable=readable_inputs,
        local=local_files,
        base=planted_base,
    output:
        train="results/data/{dataset}/train.jsonl",
        dev="results/data/{dataset}/dev.jsonl",
        test="results/data/{dataset}/test.jsonl",
        vocab="results/data/{dataset}/vocab.txt",
        stats="results/data/{dataset}/stats.json",
    log:
        "results/logs/preprocess_dataset/{dataset}.log",
    benchmark:
        "results/benchmarks/preprocess_dataset/{dataset}.tsv"
    conda:
        "../envs/attnexp.yaml"
    params:
        dataset=lambda wildcards: preprocessing_config(wildcards.dataset),
        sources=lambda wildcards: [s.as_record() for s in sources_of(wildcards.dataset)],
        missing_bound=config["length_filter_missing_bound"],
    script:
        "../scripts/preprocess_dataset.py"


# The shifted test set of a generated or planted dataset (attnexp.data.synthetic / planted.shifted_test):
# the ground-truth table's check for a model that learnt a shortcut
rule shifted_test:
    input:
        base_test=planted_base_test,
    output:
        "results/data/{dataset}/test_shifted.jsonl",
    log:
        "results/logs/shifted_test/{dataset}.log",
    # a second's job on the ground-truth table's path: as soon as it can run, where the scheduler's
    # preference for larger inputs would leave it to the end of a run, the table waiting on it
    priority: 1
    conda:
        "../envs/attnexp.yaml"
    params:
        dataset=lambda wildcards: {
            "name": wildcards.dataset,
            **config["datasets"][wildcards.dataset],
        },
    script:
        "../scripts/shifted_test.py"


rule tabulate_datasets:
    input:
        stats=expand("results/data/{dataset}/stats.json", dataset=ENABLED),
        published=PUBLISHED / "jain_wallace_table1.csv",
    output:
        csv="results/tables/datasets.csv",
        md="results/tables/datasets.md",
    log:
        "results/logs/tabulate_datasets.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/tabulate_datasets.py"


rule data:
    input:
        data_targets(),


TARGETS["data"] = data_targets()
