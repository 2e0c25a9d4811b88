"""Rule debate_matrix: every paper's test on every model, side by side
(results/tables/debate_matrix.{csv,md})."""

from attnexp.experiments.debate_matrix import write_debate_matrix
from attnexp.workflow import fail_cleanly, log_to

WP_TABLES = ("uniform", "diagnostic", "adversary")

log = log_to(snakemake.log[0])
inputs = snakemake.input
with fail_cleanly(ValueError, KeyError):
    # the kinds the papers registered (rules/common.smk, DEBATE_INPUTS): per-run files, W&P's tables, cells
    kinds = snakemake.params.kinds
    table = {name: inputs[f"wp_{name}"][0] if f"wp_{name}" in kinds else None for name in WP_TABLES}
    matrix = write_debate_matrix(
        {kind: list(inputs[kind]) for kind in kinds if kind != "cells" and not kind.startswith("wp_")},
        table["uniform"],
        table["diagnostic"],
        table["adversary"],
        snakemake.output.csv,
        snakemake.output.md,
        cells=list(inputs["cells"]) if "cells" in kinds else [],
    )
log(f"{matrix.groupby(['dataset', 'model', 'seed']).ngroups} models, {len(matrix)} numbers")
