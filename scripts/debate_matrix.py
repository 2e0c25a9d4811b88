"""Rule debate_matrix: every paper's test on every model, side by side, from the papers' debate cells
(results/tables/debate_matrix.{csv,md})."""

from attnexp.experiments.debate_matrix import write_debate_matrix
from attnexp.papers import DEBATE_MEASURES
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    matrix = write_debate_matrix(
        list(snakemake.input.cells), DEBATE_MEASURES, snakemake.output.csv, snakemake.output.md
    )
log(f"{matrix.groupby(['dataset', 'model', 'seed']).ngroups} models, {len(matrix)} numbers")
