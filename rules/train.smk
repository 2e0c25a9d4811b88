# Stage 3: train every model. One job per dataset x model x seed; per-epoch progress in
# the log beside the weights.


rule train_model:
    input:
        unpack(training_inputs),
    output:
        model="results/models/{dataset}/{model}/seed{seed}/model.pt",
        metrics="results/models/{dataset}/{model}/seed{seed}/metrics.json",
        timing="results/models/{dataset}/{model}/seed{seed}/timing.json",
    log:
        "results/models/{dataset}/{model}/seed{seed}/train.log",
    benchmark:
        "results/benchmarks/train_model/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=lambda wildcards: training_settings(
            config, wildcards.dataset, wildcards.model
        ),
        select_on=lambda wildcards: training_selection(
            config, wildcards.dataset, wildcards.model
        ),
        device=config["device"],
    script:
        "../scripts/train_model.py"


rule export_attention:
    input:
        unpack(attention_export_inputs),
    output:
        "results/models/{dataset}/{model}/seed{seed}/attention.jsonl",
    log:
        "results/logs/export_attention/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "results/benchmarks/export_attention/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        batch_size=128,
        device=config["device"],
    script:
        "../scripts/export_attention.py"


rule tabulate_performance:
    input:
        metrics=model_targets("metrics.json"),
        published=PUBLISHED / "performance.csv",
    output:
        csv="results/tables/performance.csv",
        md="results/tables/performance.md",
        claims="results/claims/performance.csv",
    log:
        "results/logs/tabulate_performance.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        tolerance=config["claims"]["performance_tolerance"],
    script:
        "../scripts/tabulate_performance.py"


rule models:
    input:
        model_targets("metrics.json"),
        "results/tables/performance.csv",
        "results/tables/performance.md",


TARGETS["models"] = model_targets("metrics.json") + performance_targets()
