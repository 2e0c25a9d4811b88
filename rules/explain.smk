# Stage 4: per-instance explanations of the test split, one cached job per method
# (attnexp.explain): attention (with the prediction), gradient importance, leave-one-out, integrated
# gradients, and rollout / attention attribution for self-attention models. A consumer names the methods
# it reads (explanation_files), so each method runs only where something needs it. The settings each
# method's job depends on are declared in attnexp.plan.EXPLAIN_SETTINGS: changing IG's re-runs IG alone.

from attnexp.plan import EXPLAIN_SETTINGS


rule explain:
    input:
        unpack(model_files),
    output:
        "results/explain/{dataset}/{model}/seed{seed}/{method}.jsonl",
    log:
        "results/logs/explain/{dataset}/{model}/seed{seed}/{method}.log",
    benchmark:
        "results/benchmarks/explain/{dataset}/{model}/seed{seed}/{method}.tsv"
    wildcard_constraints:
        method="|".join(EXPLAIN_SETTINGS),
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    resources:
        gpu=GPUS,
    params:
        torch_threads=config["train"]["threads"],
        settings=lambda w: EXPLAIN_SETTINGS[w.method].of(config),
        device=config["device"],
    script:
        "../scripts/explain.py"
