# Stage 5b: Serrano & Smith 2019. Per model: single-weight erasure and removal until the
# decision flips, decode-only on cached states of the attention layer closest to the output; then the
# tables, claims and figures (ΔJS per model across datasets, the removal boxes per dataset).

from attnexp.papers.serrano_smith import INTERVENTION_SETTINGS

SS = config["serrano_smith"]
SS_RUN = "{dataset}/{model}/seed{seed}"
SS_RUNS = experiment_runs(config, "serrano_smith")
SS_TABLES = ("erasure", "removal", "flip_sooner")
# The runs `serrano_smith.left_out` keeps from training (D-SS-BUDGET): claims listed as not compared
SS_LEFT_OUT = [
    {"dataset": dataset, "model": model, "seed": seed}
    for dataset, models in SS["left_out"].items()
    for model in models
    for seed in training_seeds(config, dataset)
]


# The runs of each ΔJS figure (one model across datasets) and each removal figure (one dataset)
SS_BY_MODEL = {
    (m, s): [run for run in SS_RUNS if (run.model, run.seed) == (m, s)]
    for m, s in {(run.model, run.seed) for run in SS_RUNS}
}
SS_BY_DATASET = {
    (d, s): [run for run in SS_RUNS if (run.dataset, run.seed) == (d, s)]
    for d, s in {(run.dataset, run.seed) for run in SS_RUNS}
}


rule ss_interventions:
    input:
        unpack(model_files),
    output:
        erasure=f"results/serrano_smith/{SS_RUN}/single_erasure.csv",
        removal=f"results/serrano_smith/{SS_RUN}/removal.csv",
    log:
        f"results/logs/serrano_smith/interventions/{SS_RUN}.log",
    benchmark:
        "results/benchmarks/ss_interventions/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    # one thread: after one forward pass everything is small decode-only work, so jobs run side by side
    threads: 1
    resources:
        gpu=GPUS,
    params:
        settings=INTERVENTION_SETTINGS.of(config),
        device=config["device"],
    script:
        "../scripts/ss_interventions.py"


rule ss_delta_js_figure:
    input:
        lambda w: [
            f"{run.path('results/serrano_smith')}/single_erasure.csv"
            for run in SS_BY_MODEL[(w.model, int(w.seed))]
        ],
    output:
        pdf="results/figures/serrano_smith/delta_js/{model}/seed{seed}.pdf",
        png=report(
            "results/figures/serrano_smith/delta_js/{model}/seed{seed}.png",
            caption="../report/serrano_smith_delta_js.rst",
            category="Serrano & Smith 2019",
            subcategory="single-weight erasure",
            labels={"model": "{model}", "seed": "{seed}"},
        ),
    log:
        "results/logs/serrano_smith/delta_js/{model}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        datasets=lambda w: [run.dataset for run in SS_BY_MODEL[(w.model, int(w.seed))]],
        plot=SS["plot"],
        seed=SS["seed"],
    script:
        "../scripts/ss_delta_js_figure.py"


rule ss_removal_figures:
    input:
        lambda w: [
            f"{run.path('results/serrano_smith')}/removal.csv"
            for run in SS_BY_DATASET[(w.dataset, int(w.seed))]
        ],
    output:
        **{
            f"{name}_{ext}": report(
                f"results/figures/serrano_smith/{{dataset}}/seed{{seed}}/{name}.{ext}",
                caption="../report/serrano_smith_removal_figures.rst",
                category="Serrano & Smith 2019",
                subcategory="removal until the decision flips",
                labels={"dataset": "{dataset}", "seed": "{seed}", "figure": name},
            )
            for name in ("removal_fraction", "removed_mass")
            for ext in ("pdf", "png")
        },
    log:
        "results/logs/serrano_smith/removal_figures/{dataset}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        models=lambda w: [run.model for run in SS_BY_DATASET[(w.dataset, int(w.seed))]],
    script:
        "../scripts/ss_removal_figures.py"


rule ss_tables:
    input:
        erasure=[
            f"{run.path('results/serrano_smith')}/single_erasure.csv"
            for run in SS_RUNS
        ],
        removal=[f"{run.path('results/serrano_smith')}/removal.csv" for run in SS_RUNS],
        metrics=[f"{run.path('results/models')}/metrics.json" for run in SS_RUNS],
        published=PUBLISHED / "serrano_smith_flip_sooner.csv",
    output:
        **{
            f"{name}_{ext}": f"results/tables/serrano_smith_{name}.{ext}"
            for name in SS_TABLES
            for ext in ("csv", "md")
        },
        claims="results/claims/serrano_smith.csv",
    log:
        "results/logs/serrano_smith/tables.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        reference_datasets=SS["reference_datasets"],
        left_out=SS_LEFT_OUT,
        findings=SS["findings"],
    script:
        "../scripts/ss_tables.py"


TARGETS["serrano_smith"] = (
    [
        f"results/figures/serrano_smith/delta_js/{model}/seed{seed}.{ext}"
        for model, seed in sorted(SS_BY_MODEL)
        for ext in ("pdf", "png")
    ]
    + [
        f"results/figures/serrano_smith/{dataset}/seed{seed}/{name}.{ext}"
        for dataset, seed in sorted(SS_BY_DATASET)
        for name in ("removal_fraction", "removed_mass")
        for ext in ("pdf", "png")
    ]
    + (
        expand(
            "results/tables/serrano_smith_{name}.{ext}",
            name=SS_TABLES,
            ext=["csv", "md"],
        )
        if SS_RUNS
        else []
    )
)


rule ss_debate_cells:
    input:
        erasure=[
            f"{run.path('results/serrano_smith')}/single_erasure.csv"
            for run in sorted(SS_RUNS)
        ],
        removal=[
            f"{run.path('results/serrano_smith')}/removal.csv"
            for run in sorted(SS_RUNS)
        ],
    output:
        "results/debate_cells/serrano_smith.csv",
    log:
        "results/logs/serrano_smith/debate_cells.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/ss_debate_cells.py"


rule serrano_smith:
    input:
        TARGETS["serrano_smith"],
