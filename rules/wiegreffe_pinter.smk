# Stage 5c: Wiegreffe & Pinter 2019. Each base run brings its companions, every one an
# ordinary training job (attnexp.plan.wiegreffe_pinter_companions): the uniform twin, the seed
# models, the diagnostic MLPs and one model-consistent adversary per λ. Per base run: the seed
# variance (Figure 2), the adversaries' frontier (Figure 4, Table 4) and the figures; then Tables
# 2-4 and the claims across runs.

WP = config["wiegreffe_pinter"]
WP_RUN = "{dataset}/{model}/seed{seed}"
# Base runs with every experiment (the others: Table 2 only)
WP_FULL = {run: c for run, c in WP_COMPANIONS.items() if c.full}
WP_FIGURES = (
    "seeds_violin",
    "seeds_scatter",
    "jw_adversary_violin",
    "jw_adversary_scatter",
    "frontier",
    "example",
)


rule wp_seed_variance:
    input:
        base=lambda w: exported(wp_companions(w).base),
        seeds=lambda w: [exported(run) for run in wp_companions(w).seeds],
        jw_adversary=f"results/jain_wallace/{WP_RUN}/adversarial_attention.jsonl",
    output:
        f"results/wiegreffe_pinter/{WP_RUN}/seed_variance.csv",
    log:
        f"results/logs/wiegreffe_pinter/seed_variance/{WP_RUN}.log",
    benchmark:
        "results/benchmarks/wp_seed_variance/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    params:
        seeds=lambda w: [run.seed for run in wp_companions(w).seeds],
    script:
        "../scripts/wp_seed_variance.py"


rule wp_frontier:
    input:
        base=lambda w: exported(wp_companions(w).base),
        uniform=lambda w: exported(wp_companions(w).uniform),
        adversaries=lambda w: [
            exported(wp_companions(w).adversaries[lam]) for lam in wp_lambdas(w)
        ],
        adversary_metrics=lambda w: [
            trained(wp_companions(w).adversaries[lam]) for lam in wp_lambdas(w)
        ],
        variance=f"results/wiegreffe_pinter/{WP_RUN}/seed_variance.csv",
        # the gold test labels, in the training split's class order
        train="results/data/{dataset}/train.jsonl",
        test="results/data/{dataset}/test.jsonl",
    output:
        frontier=f"results/wiegreffe_pinter/{WP_RUN}/frontier.csv",
        epochs=f"results/wiegreffe_pinter/{WP_RUN}/adversary_epochs.csv",
    log:
        f"results/logs/wiegreffe_pinter/frontier/{WP_RUN}.log",
    benchmark:
        "results/benchmarks/wp_frontier/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    params:
        lambdas=wp_lambdas,
    script:
        "../scripts/wp_frontier.py"


rule wp_figures:
    input:
        variance=f"results/wiegreffe_pinter/{WP_RUN}/seed_variance.csv",
        frontier=f"results/wiegreffe_pinter/{WP_RUN}/frontier.csv",
        base=lambda w: exported(wp_companions(w).base),
        adversary=lambda w: exported(
            wp_companions(w).adversaries[WP["adversary"]["table_lambda"]]
        ),
        test="results/data/{dataset}/test.jsonl",
    output:
        **{
            f"{name}_{ext}": report(
                f"results/figures/wiegreffe_pinter/{WP_RUN}/{name}.{ext}",
                caption="../report/wiegreffe_pinter_figures.rst",
                category="Wiegreffe & Pinter 2019",
                subcategory="{dataset}",
                labels={"model": "{model}", "seed": "{seed}", "figure": name},
            )
            for name in WP_FIGURES
            for ext in ("pdf", "png")
        },
    log:
        f"results/logs/wiegreffe_pinter/figures/{WP_RUN}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        edges=WP["max_attention_bins"],
        table_lambda=WP["adversary"]["table_lambda"],
        example_max_tokens=WP["example_max_tokens"],
    script:
        "../scripts/wp_figures.py"


WP_TABLES = ("uniform", "seeds", "diagnostic", "adversary")


rule wp_tables:
    input:
        base=[trained(c.base) for c in WP_COMPANIONS.values()],
        uniform=[trained(c.uniform) for c in WP_COMPANIONS.values()],
        # GUIDES order of attnexp.papers.wiegreffe_pinter.tables, per base run
        full_base=[trained(c.base) for c in WP_FULL.values()],
        diagnostic=[
            trained(c.diagnostic[guide])
            for c in WP_FULL.values()
            for guide in ("uniform", "trained", "base", "adversary")
        ],
        variance=[
            f"{run.path('results/wiegreffe_pinter')}/seed_variance.csv"
            for run in WP_FULL
        ],
        frontier=[
            f"{run.path('results/wiegreffe_pinter')}/frontier.csv" for run in WP_FULL
        ],
        published=PUBLISHED / "performance.csv",
    output:
        **{
            f"{name}_{ext}": f"results/tables/wiegreffe_pinter_{name}.{ext}"
            for name in WP_TABLES
            for ext in ("csv", "md")
        },
        claims="results/claims/wiegreffe_pinter.csv",
    log:
        "results/logs/wiegreffe_pinter/tables.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        table_lambda=WP["adversary"]["table_lambda"],
        tolerance=config["claims"]["performance_tolerance"],
    script:
        "../scripts/wp_tables.py"


TARGETS["wiegreffe_pinter"] = [
    f"{run.path('results/figures/wiegreffe_pinter')}/{name}.{ext}"
    for run in WP_FULL
    for name in WP_FIGURES
    for ext in ("pdf", "png")
] + (
    expand(
        "results/tables/wiegreffe_pinter_{name}.{ext}",
        name=WP_TABLES,
        ext=["csv", "md"],
    )
    if WP_COMPANIONS
    else []
)


# the W&P tables hold every base run's numbers (the uniform twin for each; MLPs and adversary for full ones)
rule wp_debate_cells:
    input:
        **{
            name: (
                [f"results/tables/wiegreffe_pinter_{name}.csv"]
                if (WP_FULL if name != "uniform" else WP_COMPANIONS)
                else []
            )
            for name in ("uniform", "diagnostic", "adversary")
        },
    output:
        "results/debate_cells/wiegreffe_pinter.csv",
    log:
        "results/logs/wiegreffe_pinter/debate_cells.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/wp_debate_cells.py"


rule wiegreffe_pinter:
    input:
        TARGETS["wiegreffe_pinter"],
