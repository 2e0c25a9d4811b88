# Stage 4: per-instance explanations of the test split, one cached job per method
# (attnexp.explain): attention (with the prediction), gradient importance, leave-one-out, integrated
# gradients, and rollout / attention attribution for self-attention models. A consumer names the methods
# it reads (explanation_files), so each method runs only where something needs it.

# The settings each method's job depends on: changing IG's settings re-runs IG alone.
EXPLAIN_SETTINGS = {
    "attention": (),
    "gradient": (),
    "loo": ("loo_op",),
    "ig": (
        "ig_target",
        "ig_baseline",
        "ig_method",
        "ig_steps",
        "ig_max_steps",
        "ig_tolerance",
    ),
    "rollout": ("rollout_readout",),
    "attattr": ("attattr_steps", "attattr_riemann"),
}


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
        settings=lambda w: {
            key: config["explain"][key]
            for key in ("batch_size", *EXPLAIN_SETTINGS[w.method])
        },
        device=config["device"],
    script:
        "../scripts/explain.py"
