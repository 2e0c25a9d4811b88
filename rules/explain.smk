# Stage 4: per-instance explanations of the test split (attnexp.explain): attention (with the
# prediction), gradient importance and leave-one-out in one job per model (`explain.together`: seconds
# each, less than a job's start-up), integrated gradients, and rollout / attention attribution for
# self-attention models, each a job of its own. A consumer names the methods it reads
# (explanation_files), so a costly method runs only where something needs it. The settings each
# method depends on are declared in attnexp.plan.EXPLAIN_SETTINGS: changing IG's re-runs IG alone (the whole
# group, where `explain.together` adds IG to it).

from attnexp.plan import EXPLAIN_SETTINGS, explain_settings, explained_together

EXPLAIN_RUN = "{dataset}/{model}/seed{seed}"
EXPLAINED_TOGETHER = explained_together(config)


rule explain_together:
    input:
        unpack(model_files),
    output:
        [
            f"results/explain/{EXPLAIN_RUN}/{method}.jsonl"
            for method in EXPLAINED_TOGETHER
        ],
    log:
        f"results/logs/explain/{EXPLAIN_RUN}/together.log",
    benchmark:
        f"results/benchmarks/explain_together/{EXPLAIN_RUN}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        methods=EXPLAINED_TOGETHER,
        torch_threads=config["train"]["threads"],
        settings=explain_settings(config, EXPLAINED_TOGETHER),
        device=config["device"],
    script:
        "../scripts/explain.py"


rule explain:
    input:
        unpack(model_files),
    output:
        f"results/explain/{EXPLAIN_RUN}/{{method}}.jsonl",
    log:
        f"results/logs/explain/{EXPLAIN_RUN}/{{method}}.log",
    benchmark:
        f"results/benchmarks/explain/{EXPLAIN_RUN}/{{method}}.tsv"
    wildcard_constraints:
        method="|".join(m for m in EXPLAIN_SETTINGS if m not in EXPLAINED_TOGETHER),
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        methods=lambda w: (w.method,),
        torch_threads=config["train"]["threads"],
        settings=lambda w: explain_settings(config, (w.method,)),
        device=config["device"],
    script:
        "../scripts/explain.py"
