# Stage 5b: Serrano & Smith 2019 (issue 11). Per model: single-weight erasure and removal until the
# decision flips, decode-only on cached states of the attention layer closest to the output; then the
# tables, claims and figures (F-dJS per model across datasets, F-box / F-mass per dataset).

SS = config["serrano_smith"]
SS_RUN = "{dataset}/{model}/seed{seed}"
SS_RUNS = experiment_runs(config, "serrano_smith")
# What the per-model job depends on: changing the figures or the selection never re-runs it
SS_SETTINGS = {
    key: SS[key]
    for key in (
        "seed",
        "random_item",
        "permutations",
        "attention_ascending",
        "max_tokens",
        "max_items",
    )
}
SS_TABLES = ("erasure", "removal", "flip_sooner")


def ss_runs_where(**fields):
    """The S&S runs whose dataset / model / seed equal the given wildcard values."""
    return [
        run
        for run in SS_RUNS
        if all(str(getattr(run, k)) == str(v) for k, v in fields.items())
    ]


rule ss_interventions:
    input:
        unpack(model_files),
    output:
        erasure=f"results/serrano_smith/{SS_RUN}/single_erasure.csv",
        removal=f"results/serrano_smith/{SS_RUN}/removal.csv",
    log:
        f"results/logs/serrano_smith/interventions/{SS_RUN}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    params:
        data_dir="results/data/{dataset}",
        settings=SS_SETTINGS,
    script:
        "../scripts/ss_interventions.py"


rule ss_delta_js_figure:
    input:
        lambda w: [
            f"{run.path('results/serrano_smith')}/single_erasure.csv"
            for run in ss_runs_where(model=w.model, seed=w.seed)
        ],
    output:
        pdf="results/figures/serrano_smith/delta_js/{model}/seed{seed}.pdf",
        png=report(
            "results/figures/serrano_smith/delta_js/{model}/seed{seed}.png",
            caption="../report/serrano_smith_delta_js.rst",
            category="Serrano & Smith",
            subcategory="single-weight erasure",
            labels={"model": "{model}", "seed": "{seed}"},
        ),
    log:
        "results/logs/serrano_smith/delta_js/{model}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        datasets=lambda w: [run.dataset for run in ss_runs_where(model=w.model, seed=w.seed)],
        plot=SS["plot"],
        seed=SS["seed"],
    script:
        "../scripts/ss_delta_js_figure.py"


rule ss_removal_figures:
    input:
        lambda w: [
            f"{run.path('results/serrano_smith')}/removal.csv"
            for run in ss_runs_where(dataset=w.dataset, seed=w.seed)
        ],
    output:
        **{
            f"{name}_{ext}": report(
                f"results/figures/serrano_smith/{{dataset}}/seed{{seed}}/{name}.{ext}",
                caption="../report/serrano_smith_removal_figures.rst",
                category="Serrano & Smith",
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
        models=lambda w: [run.model for run in ss_runs_where(dataset=w.dataset, seed=w.seed)],
    script:
        "../scripts/ss_removal_figures.py"


rule ss_tables:
    input:
        erasure=[
            f"{run.path('results/serrano_smith')}/single_erasure.csv" for run in SS_RUNS
        ],
        removal=[f"{run.path('results/serrano_smith')}/removal.csv" for run in SS_RUNS],
        metrics=[f"{run.path('results/models')}/metrics.json" for run in SS_RUNS],
        published=PUBLISHED / "serrano_smith_flip_sooner.csv",
    output:
        **{
            f"{name}_{ext}": (
                report(
                    f"results/tables/serrano_smith_{name}.{ext}",
                    caption=f"../report/serrano_smith_{name}.rst",
                    category="Serrano & Smith",
                    labels={"table": name},
                )
                if ext == "md"
                else f"results/tables/serrano_smith_{name}.{ext}"
            )
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
    script:
        "../scripts/ss_tables.py"


def serrano_smith_targets():
    if not SS_RUNS:
        return []
    models = sorted({(run.model, run.seed) for run in SS_RUNS})
    datasets = sorted({(run.dataset, run.seed) for run in SS_RUNS})
    figures = [
        f"results/figures/serrano_smith/delta_js/{model}/seed{seed}.{ext}"
        for model, seed in models
        for ext in ("pdf", "png")
    ] + [
        f"results/figures/serrano_smith/{dataset}/seed{seed}/{name}.{ext}"
        for dataset, seed in datasets
        for name in ("removal_fraction", "removed_mass")
        for ext in ("pdf", "png")
    ]
    return figures + expand(
        "results/tables/serrano_smith_{name}.{ext}", name=SS_TABLES, ext=["csv", "md"]
    )


TARGETS["serrano_smith"] = serrano_smith_targets()
if SS_RUNS:
    CLAIMS.append("results/claims/serrano_smith.csv")


rule serrano_smith:
    input:
        TARGETS["serrano_smith"],
