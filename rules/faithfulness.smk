# Stage 5d: the faithfulness battery (DeYoung et al. 2020). Per model: ERASER comprehensiveness
# and sufficiency of every ranking of its explanations (HAN/FLAN: its own attention and leave-one-unit-
# out) and a random baseline, per bin, and the violation test of the signed ones (Liu et al. 2022); then
# AOPC and violation ratios per model and ranking beside the battery's claims. Per
# W&P base run with seed models: each explainer's agreement with itself across the seeds (the envelope).

from attnexp.papers.faithfulness import eraser_settings

FF_RUN = "{dataset}/{model}/seed{seed}"
FF_RUNS = experiment_runs(config, "faithfulness")
FF_BY_DATASET = {}
for run in FF_RUNS:
    FF_BY_DATASET.setdefault(run.dataset, []).append(run)
# W&P base runs with every experiment: their seed models give each explainer's envelope
FF_ENVELOPE_RUNS = [run for run, c in WP_COMPANIONS.items() if c.full and c.seeds]
# ... over the four J&W/IG measures (attnexp.papers.faithfulness.seed_envelopes)
SEED_ENVELOPE_MEASURES = ("attention", "gradient", "loo", "ig")


rule faithfulness_eraser:
    input:
        unpack(model_files),
        unpack(ff_explanations),
    output:
        eraser=f"results/faithfulness/{FF_RUN}/eraser.csv",
        violation=f"results/faithfulness/{FF_RUN}/violation.csv",
    log:
        f"results/logs/faithfulness/eraser/{FF_RUN}.log",
    benchmark:
        "results/benchmarks/faithfulness_eraser/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        device=config["device"],
        settings=lambda w: eraser_settings(
            config, model_spec(config, w.dataset, w.model)
        ),
    script:
        "../scripts/faithfulness_eraser.py"


rule faithfulness_figure:
    input:
        lambda w: [
            f"{run.path('results/faithfulness')}/eraser.csv"
            for run in FF_BY_DATASET[w.dataset]
        ],
    output:
        pdf="results/figures/faithfulness/{dataset}/aopc.pdf",
        png=report(
            "results/figures/faithfulness/{dataset}/aopc.png",
            caption="../report/faithfulness_figure.rst",
            category="Beyond - faithfulness",
            subcategory="perturbation curves",
            labels={"dataset": "{dataset}", "figure": "perturbation curves"},
        ),
    log:
        "results/logs/faithfulness/figure/{dataset}.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/faithfulness_figure.py"


rule faithfulness_seed_envelope:
    input:
        base=lambda w: explanation_files(
            RunKey(w.dataset, w.model, int(w.seed)), SEED_ENVELOPE_MEASURES
        ),
        seeds=lambda w: [
            path
            for run in wp_companions(w).seeds
            for path in explanation_files(run, SEED_ENVELOPE_MEASURES)
        ],
    output:
        f"results/faithfulness/{FF_RUN}/seed_envelope.csv",
    log:
        f"results/logs/faithfulness/seed_envelope/{FF_RUN}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        seeds=lambda w: [run.seed for run in wp_companions(w).seeds],
    script:
        "../scripts/faithfulness_seed_envelope.py"


rule faithfulness_tables:
    input:
        eraser=[f"{run.path('results/faithfulness')}/eraser.csv" for run in FF_RUNS],
        violation=[
            f"{run.path('results/faithfulness')}/violation.csv" for run in FF_RUNS
        ],
        violation_reference=PUBLISHED / "liu_2022_violation.csv",
        envelopes=[
            f"{run.path('results/faithfulness')}/seed_envelope.csv"
            for run in FF_ENVELOPE_RUNS
        ],
    output:
        aopc_csv="results/tables/faithfulness_aopc.csv",
        aopc_md="results/tables/faithfulness_aopc.md",
        envelopes_csv="results/tables/faithfulness_seed_envelopes.csv",
        envelopes_md="results/tables/faithfulness_seed_envelopes.md",
        violation_csv="results/tables/faithfulness_violation.csv",
        violation_md="results/tables/faithfulness_violation.md",
        claims="results/claims/faithfulness.csv",
    log:
        "results/logs/faithfulness/tables.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/faithfulness_tables.py"


TARGETS["faithfulness"] = [
    f"results/figures/faithfulness/{dataset}/aopc.{ext}"
    for dataset in sorted(FF_BY_DATASET)
    for ext in ("pdf", "png")
] + (
    expand(
        "results/tables/faithfulness_{name}.{ext}",
        name=["aopc", "seed_envelopes", "violation"],
        ext=["csv", "md"],
    )
    if FF_RUNS
    else []
)


rule faithfulness_debate_cells:
    input:
        eraser=[
            f"{run.path('results/faithfulness')}/eraser.csv" for run in sorted(FF_RUNS)
        ],
    output:
        "results/debate_cells/faithfulness.csv",
    log:
        "results/logs/faithfulness/debate_cells.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/faithfulness_debate_cells.py"


rule faithfulness:
    input:
        TARGETS["faithfulness"],
