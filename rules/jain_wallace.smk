# Stage 5a: Jain & Wallace 2019. Per model: correlations of the explanations, permutation
# and adversarial attention on cached encoder states; then Table 2, the figures, and the ground-truth
# check on generated data.

from attnexp.papers.jain_wallace import ADVERSARY_SETTINGS, PERMUTATION_SETTINGS

JW = config["jain_wallace"]
JW_RUN = "{dataset}/{model}/seed{seed}"
JW_RUNS = experiment_runs(config, "jain_wallace")
# Binary datasets with per-instance `rationale` (generated, planted, a user's rationale column): the
# ground-truth check
JW_GROUND_TRUTH = sorted(
    {
        run.dataset
        for run in JW_RUNS
        if carries_rationale(config["datasets"][run.dataset])
        and config["datasets"][run.dataset]["task"] == "binary"
    }
)
# ... scored for every explained model there, each once: the J&W models and the Transformer (rollout, attribution)
JW_GROUND_TRUTH_RUNS = [
    run
    for run in dict.fromkeys(JW_RUNS + experiment_runs(config, "attention_attribution"))
    if run.dataset in JW_GROUND_TRUTH
]
# ... and where a dataset has a shifted test set (the generated binary task, planted datasets:
# attnexp.plan.has_shifted_test), each model's accuracy on it
JW_SHIFTED_RUNS = [
    run
    for run in JW_GROUND_TRUTH_RUNS
    if has_shifted_test(config["datasets"][run.dataset])
]


JW_MODEL_FIGURES = (
    "tau_histograms",
    "tau_densities",
    "tau_differences",
    "permutation",
    "adversarial_histogram",
    "adversarial_violin",
)


rule jw_correlations:
    input:
        lambda w: explanation_files(
            RunKey(w.dataset, w.model, int(w.seed)), JW["measures"]
        ),
    output:
        f"results/jain_wallace/{JW_RUN}/correlations.csv",
    log:
        f"results/logs/jain_wallace/correlations/{JW_RUN}.log",
    benchmark:
        "results/benchmarks/jw_correlations/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/jw_correlations.py"


rule jw_permutation:
    input:
        unpack(model_files),
    output:
        f"results/jain_wallace/{JW_RUN}/permutation.csv",
    log:
        f"results/logs/jain_wallace/permutation/{JW_RUN}.log",
    benchmark:
        "results/benchmarks/jw_permutation/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=PERMUTATION_SETTINGS.of(config),
        device=config["device"],
    script:
        "../scripts/jw_permutation.py"


rule jw_shifted_accuracy:
    input:
        unpack(model_files),
        shifted="results/data/{dataset}/test_shifted.jsonl",
    output:
        f"results/jain_wallace/{JW_RUN}/shifted_test.json",
    log:
        f"results/logs/jain_wallace/shifted_test/{JW_RUN}.log",
    priority: 1  # as soon as its model is trained (rule shifted_test)
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        device=config["device"],
    script:
        "../scripts/jw_shifted_accuracy.py"


rule jw_adversarial:
    input:
        unpack(model_files),
    output:
        table=f"results/jain_wallace/{JW_RUN}/adversarial.csv",
        attention=f"results/jain_wallace/{JW_RUN}/adversarial_attention.jsonl",
    log:
        f"results/logs/jain_wallace/adversarial/{JW_RUN}.log",
    benchmark:
        "results/benchmarks/jw_adversarial/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=ADVERSARY_SETTINGS.of(config),
        device=config["device"],
    script:
        "../scripts/jw_adversarial.py"


rule jw_model_figures:
    input:
        correlations=f"results/jain_wallace/{JW_RUN}/correlations.csv",
        permutation=f"results/jain_wallace/{JW_RUN}/permutation.csv",
        adversarial=f"results/jain_wallace/{JW_RUN}/adversarial.csv",
        metrics=f"results/models/{JW_RUN}/metrics.json",  # the class names of the legends
    output:
        **{
            f"{name}_{ext}": report(
                f"results/figures/jain_wallace/{JW_RUN}/{name}.{ext}",
                caption="../report/jain_wallace_figures.rst",
                category="Jain & Wallace 2019",
                subcategory="{dataset}",
                labels={"model": "{model}", "seed": "{seed}", "figure": name},
            )
            for name in JW_MODEL_FIGURES
            for ext in ("pdf", "png")
        },
    log:
        f"results/logs/jain_wallace/figures/{JW_RUN}.log",
    benchmark:
        "results/benchmarks/jw_model_figures/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/jw_model_figures.py"


rule jw_tables:
    input:
        correlations=[
            f"{run.path('results/jain_wallace')}/correlations.csv" for run in JW_RUNS
        ],
        metrics=[f"{run.path('results/models')}/metrics.json" for run in JW_RUNS],
        permutation=[
            f"{run.path('results/jain_wallace')}/permutation.csv" for run in JW_RUNS
        ],
        adversarial=[
            f"{run.path('results/jain_wallace')}/adversarial.csv" for run in JW_RUNS
        ],
        published=PUBLISHED / "jain_wallace_table2.csv",
        mean_tau=PUBLISHED / "jain_wallace_mean_tau.csv",
        states=PUBLISHED / "jain_wallace_table2_states.csv",
    output:
        table2_csv="results/tables/jain_wallace_table2.csv",
        table2_md="results/tables/jain_wallace_table2.md",
        tolerances_csv="results/tables/jain_wallace_tolerances.csv",
        tolerances_md="results/tables/jain_wallace_tolerances.md",
        summary_csv="results/tables/jain_wallace_correlations.csv",
        summary_md="results/tables/jain_wallace_correlations.md",
        encoders_pdf="results/figures/jain_wallace/encoder_comparison.pdf",
        encoders_png=report(
            "results/figures/jain_wallace/encoder_comparison.png",
            caption="../report/jain_wallace_encoders.rst",
            category="Jain & Wallace 2019",
            subcategory="figures across models",
            labels={"figure": "encoder comparison"},
        ),
        claims="results/claims/jain_wallace.csv",
    log:
        "results/logs/jain_wallace/tables.log",
    benchmark:
        "results/benchmarks/jw_tables/all.tsv"
    conda:
        "../envs/attnexp.yaml"
    params:
        significance=JW["significance"],
        tolerance=JW["table2_tolerance"],
        loo_op=config["explain"]["loo_op"],
        findings=JW["findings"],
    script:
        "../scripts/jw_tables.py"


rule jw_ground_truth:
    input:
        explanations=[
            path
            for run in JW_GROUND_TRUTH_RUNS
            for path in explanation_files(run, every_method(run))
        ],
        test=[f"results/data/{d}/test.jsonl" for d in JW_GROUND_TRUTH],
        metrics=[trained(run) for run in JW_GROUND_TRUTH_RUNS],
        shifted=[
            f"{run.path('results/jain_wallace')}/shifted_test.json"
            for run in JW_SHIFTED_RUNS
        ],
    output:
        csv="results/tables/ground_truth.csv",
        md="results/tables/ground_truth.md",
        pdf="results/figures/jain_wallace/ground_truth.pdf",
        png=report(
            "results/figures/jain_wallace/ground_truth.png",
            caption="../report/ground_truth.rst",
            category="Jain & Wallace 2019",
            subcategory="figures across models",
            labels={"figure": "ground truth"},
        ),
    log:
        "results/logs/jain_wallace/ground_truth.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        gates={
            d: JW["planted_min_dev_accuracy"]
            for d in JW_GROUND_TRUTH
            if config["datasets"][d]["protocol"] == "planted"
        },
        max_dev_test_gap=JW["planted_max_dev_test_gap"],
    script:
        "../scripts/jw_ground_truth.py"


TARGETS["jain_wallace"] = (
    [
        f"{run.path('results/figures/jain_wallace')}/{name}.{ext}"
        for run in JW_RUNS
        for name in JW_MODEL_FIGURES
        for ext in ("pdf", "png")
    ]
    + [
        f"{run.path('results/jain_wallace')}/adversarial_attention.jsonl"
        for run in JW_RUNS
    ]
    + (
        expand(
            "results/tables/{name}.{ext}",
            name=["jain_wallace_table2", "jain_wallace_correlations"],
            ext=["csv", "md"],
        )
        + expand(
            "results/figures/jain_wallace/encoder_comparison.{ext}", ext=["pdf", "png"]
        )
        if JW_RUNS
        else []
    )
    + (
        expand(
            "results/{kind}/{name}.{ext}",
            zip,
            kind=["tables", "tables", "figures/jain_wallace", "figures/jain_wallace"],
            name=["ground_truth"] * 4,
            ext=["csv", "md", "pdf", "png"],
        )
        if JW_GROUND_TRUTH
        else []
    )
)


rule jw_debate_cells:
    input:
        **{
            kind: [
                f"{run.path('results/jain_wallace')}/{kind}.csv"
                for run in sorted(JW_RUNS)
            ]
            for kind in ("correlations", "permutation", "adversarial")
        },
    output:
        "results/debate_cells/jain_wallace.csv",
    log:
        "results/logs/jain_wallace/debate_cells.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/jw_debate_cells.py"


rule jain_wallace:
    input:
        TARGETS["jain_wallace"],
