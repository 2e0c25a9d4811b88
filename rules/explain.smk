# Stage 4: per-instance explanations of the test split (issue 4): attention, gradient importance,
# leave-one-out and integrated gradients of every model the J&W experiments run on.


rule explain:
    input:
        unpack(model_files),
    output:
        "results/explain/{dataset}/{model}/seed{seed}/explanations.jsonl",
    log:
        "results/logs/explain/{dataset}/{model}/seed{seed}.log",
    conda:
        "../envs/attnexp.yaml"
    threads: config["train"]["threads"]
    params:
        data_dir="results/data/{dataset}",
        settings=config["explain"],
    script:
        "../scripts/explain.py"
