"""Rule debate_matrix: every paper's test on every model, side by side
(results/tables/debate_matrix.{csv,md})."""

from attnexp.experiments.debate_matrix import write_debate_matrix
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
inputs = snakemake.input
with fail_cleanly(ValueError, KeyError):
    matrix = write_debate_matrix(
        {kind: list(inputs[kind]) for kind in snakemake.params.kinds},
        inputs.get("uniform"),
        inputs.get("diagnostic"),
        inputs.get("adversary"),
        snakemake.output.csv,
        snakemake.output.md,
        cells=list(inputs.cells),
    )
log(f"{matrix.groupby(['dataset', 'model', 'seed']).ngroups} models, {len(matrix)} numbers")
