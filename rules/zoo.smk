# Stage 5f: the zoo (Mohankumar et al. 2020). On every dataset that trains a model built to make attention
# faithful (lstm-ortho-*, lstm-diversity-*, *-sparsemax, *-entmax15): per model of its LSTM family, test
# accuracy, conicity, and attention's agreement with gradients and integrated gradients, beside the published
# values; then each zoo model against the vanilla BiLSTM on every directional test of the debate matrix. The zoo's
# models also run through every paper's test as any flat model does.

from attnexp.papers.zoo import MEASURES as ZOO_MEASURES, in_zoo_table, is_zoo

ZOO_RUNS = [
    RunKey(dataset, model, seed)
    for dataset in ENABLED
    if any(
        is_zoo(model_spec(config, dataset, m))
        for m in config["datasets"][dataset].get("models", [])
    )
    for model in config["datasets"][dataset]["models"]
    if in_zoo_table(model_spec(config, dataset, model))
    for seed in training_seeds(config, dataset)
]


rule zoo_tables:
    input:
        metrics=[f"{run.path('results/models')}/metrics.json" for run in ZOO_RUNS],
        explanations=[
            path for run in ZOO_RUNS for path in explanation_files(run, ZOO_MEASURES)
        ],
        reference=PUBLISHED / "mohankumar_2020.csv",
    output:
        csv="results/tables/zoo.csv",
        md="results/tables/zoo.md",
        claims="results/claims/zoo.csv",
    log:
        "results/logs/zoo_tables.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        performance_tolerance=config["claims"]["performance_tolerance"],
    script:
        "../scripts/zoo_tables.py"


# ... and each zoo model against the vanilla BiLSTM on every directional test of the debate matrix
ZOO_MODELS = sorted(
    {
        run.model
        for run in ZOO_RUNS
        if is_zoo(model_spec(config, run.dataset, run.model))
    }
)


rule zoo_comparison:
    input:
        matrix="results/tables/debate_matrix.csv",
    output:
        csv="results/tables/zoo_comparison.csv",
        md="results/tables/zoo_comparison.md",
    log:
        "results/logs/zoo_comparison.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        models=ZOO_MODELS,
    script:
        "../scripts/zoo_comparison.py"


TARGETS["zoo"] = (
    [
        f"results/tables/{name}.{ext}"
        for name in ("zoo", "zoo_comparison")
        for ext in ("csv", "md")
    ]
    if ZOO_RUNS
    else []
)


rule zoo:
    input:
        TARGETS["zoo"],
