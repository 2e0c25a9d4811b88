# Stage 6: the debate matrix. Every paper's test on every model it ran on, side by side: what each
# paper's stage registered in DEBATE_INPUTS (rules/common.smk), one number per test (the Transformer
# beside the recurrent models). Every run any of them covers is shown, blank where a stage did not run it.

DEBATE_INPUTS.close()  # read below: a paper's rule file included after this one fails loudly
DEBATE_KINDS = {kind: [] for kind, _ in DEBATE_INPUTS}
for kind, path in DEBATE_INPUTS:
    DEBATE_KINDS[kind].append(path)


rule debate_matrix:
    input:
        **DEBATE_KINDS,
    output:
        csv="results/tables/debate_matrix.csv",
        md="results/tables/debate_matrix.md",
    log:
        "results/logs/debate_matrix.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        kinds=list(DEBATE_KINDS),
    script:
        "../scripts/debate_matrix.py"


TARGETS["debate_matrix"] = (
    ["results/tables/debate_matrix.csv", "results/tables/debate_matrix.md"]
    if DEBATE_KINDS
    else []
)


rule debate:
    input:
        TARGETS["debate_matrix"],
