# Stage 6: the debate matrix. Every paper's test on every model it ran on, side by side: each paper's
# debate cells (`Paper.debate_cells_file`, results/debate_cells/<paper>.csv: one number per run and
# test, the Transformer beside the recurrent models) merged. Every run any of them covers is shown,
# blank where a stage did not run it.

DEBATE_CELLS = [
    paper.debate_cells_file
    for paper in papers_made("rules/debate_matrix.smk")
    if paper.debate_cells_file
]


rule debate_matrix:
    input:
        cells=DEBATE_CELLS,
    output:
        csv="results/tables/debate_matrix.csv",
        md="results/tables/debate_matrix.md",
    log:
        "results/logs/debate_matrix.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/debate_matrix.py"


TARGETS["debate_matrix"] = (
    ["results/tables/debate_matrix.csv", "results/tables/debate_matrix.md"]
    if DEBATE_CELLS
    else []
)


rule debate:
    input:
        TARGETS["debate_matrix"],
