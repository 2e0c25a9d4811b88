# Stage 6: the debate matrix. Every paper's test on every model it ran on, side by side: what
# the J&W, S&S, W&P and faithfulness stages wrote per run, one number per test (the Transformer beside
# the recurrent models). Every run any of them covers is shown, blank where a stage did not run it (the
# W&P tables hold every W&P base run).

DEBATE_CELLS.close()  # read below: a paper's rule file included after this one fails loudly
DEBATE_FILES = {
    "jw_correlations": (JW_RUNS, "results/jain_wallace", "correlations.csv"),
    "jw_permutation": (JW_RUNS, "results/jain_wallace", "permutation.csv"),
    "jw_adversarial": (JW_RUNS, "results/jain_wallace", "adversarial.csv"),
    "ss_erasure": (SS_RUNS, "results/serrano_smith", "single_erasure.csv"),
    "ss_removal": (SS_RUNS, "results/serrano_smith", "removal.csv"),
    "ff_eraser": (FF_RUNS, "results/faithfulness", "eraser.csv"),
}
DEBATE_RUNS = (
    set(JW_RUNS)
    | set(SS_RUNS)
    | set(FF_RUNS)
    | set(WP_COMPANIONS)
    | {RunKey.of_file(path) for path in DEBATE_CELLS}
)
DEBATE_WP_TABLES = {
    name: f"results/tables/wiegreffe_pinter_{name}.csv"
    for name in ("uniform", "diagnostic", "adversary")
    if (WP_FULL if name != "uniform" else WP_COMPANIONS)
}


rule debate_matrix:
    input:
        **{
            kind: [f"{run.path(root)}/{name}" for run in sorted(runs)]
            for kind, (runs, root, name) in DEBATE_FILES.items()
        },
        **DEBATE_WP_TABLES,
        cells=DEBATE_CELLS,
    output:
        csv="results/tables/debate_matrix.csv",
        md="results/tables/debate_matrix.md",
    log:
        "results/logs/debate_matrix.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        kinds=list(DEBATE_FILES),
    script:
        "../scripts/debate_matrix.py"


TARGETS["debate_matrix"] = (
    ["results/tables/debate_matrix.csv", "results/tables/debate_matrix.md"]
    if DEBATE_RUNS
    else []
)


rule debate:
    input:
        TARGETS["debate_matrix"],
