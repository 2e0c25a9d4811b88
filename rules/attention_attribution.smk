# Stage 5e: attention attribution on the Transformer (Hao et al. 2021). Per
# model with self-attention in every layer: head importance and the head-pruning curve, attribution
# graphs of a few test instances, their figures; then the pruning summary, rollout's agreement with
# gradient and blank-out importance (Abnar & Zuidema 2020), and their claims.

from attnexp.papers.attention_attribution import ATTRIBUTION_SETTINGS

AA_RUN = "{dataset}/{model}/seed{seed}"
AA_RUNS = experiment_runs(config, "attention_attribution")
# rollout's agreement with |gradient| and leave-one-out (attnexp.papers.attention_attribution.tables)
AGREEMENT_METHODS = ("attention", "gradient", "loo", "rollout", "attattr")


rule attention_attribution_heads:
    input:
        unpack(model_files),
    output:
        heads=f"results/attention_attribution/{AA_RUN}/heads.json",
        pruning=f"results/attention_attribution/{AA_RUN}/pruning.csv",
    log:
        f"results/logs/attention_attribution/heads/{AA_RUN}.log",
    benchmark:
        "results/benchmarks/attention_attribution_heads/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=ATTRIBUTION_SETTINGS.of(config),
        device=config["device"],
    script:
        "../scripts/attention_attribution_heads.py"


rule attention_attribution_graphs:
    input:
        unpack(model_files),
    output:
        f"results/attention_attribution/{AA_RUN}/graphs.json",
    log:
        f"results/logs/attention_attribution/graphs/{AA_RUN}.log",
    benchmark:
        "results/benchmarks/attention_attribution_graphs/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=ATTRIBUTION_SETTINGS.of(config),
        device=config["device"],
    script:
        "../scripts/attention_attribution_graphs.py"


rule attention_attribution_figures:
    input:
        pruning=f"results/attention_attribution/{AA_RUN}/pruning.csv",
        graphs=f"results/attention_attribution/{AA_RUN}/graphs.json",
    output:
        pruning_pdf=f"results/figures/attention_attribution/{AA_RUN}/head_pruning.pdf",
        pruning_png=report(
            f"results/figures/attention_attribution/{AA_RUN}/head_pruning.png",
            caption="../report/attention_attribution_pruning.rst",
            category="Beyond - attention attribution",
            subcategory="head pruning",
            labels={"run": AA_RUN, "figure": "head pruning"},
        ),
        graphs_pdf=f"results/figures/attention_attribution/{AA_RUN}/graphs.pdf",
        graphs_png=report(
            f"results/figures/attention_attribution/{AA_RUN}/graphs.png",
            caption="../report/attention_attribution_graphs.rst",
            category="Beyond - attention attribution",
            subcategory="attribution graphs",
            labels={"run": AA_RUN, "figure": "attribution graphs"},
        ),
    log:
        f"results/logs/attention_attribution/figures/{AA_RUN}.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/attention_attribution_figures.py"


rule attention_attribution_tables:
    input:
        pruning=[
            f"{run.path('results/attention_attribution')}/pruning.csv"
            for run in AA_RUNS
        ],
        explanations=[
            path
            for run in AA_RUNS
            for path in explanation_files(run, AGREEMENT_METHODS)
        ],
    output:
        pruning_csv="results/tables/attention_attribution_pruning.csv",
        pruning_md="results/tables/attention_attribution_pruning.md",
        agreement_csv="results/tables/attention_attribution_agreement.csv",
        agreement_md="results/tables/attention_attribution_agreement.md",
        claims="results/claims/attention_attribution.csv",
    log:
        "results/logs/attention_attribution/tables.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/attention_attribution_tables.py"


TARGETS["attention_attribution"] = [
    f"{run.path('results/figures/attention_attribution')}/{name}.{ext}"
    for run in AA_RUNS
    for name in ("head_pruning", "graphs")
    for ext in ("pdf", "png")
] + (
    expand(
        "results/tables/attention_attribution_{name}.{ext}",
        name=["pruning", "agreement"],
        ext=["csv", "md"],
    )
    if AA_RUNS
    else []
)


rule attention_attribution:
    input:
        TARGETS["attention_attribution"],
