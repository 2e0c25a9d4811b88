"""Rule jw_debate_cells: Jain & Wallace's numbers of the debate matrix (results/debate_cells/jain_wallace.csv)."""

from attnexp.experiments.debate_matrix import write_debate_cells
from attnexp.papers.jain_wallace.debate import debate_cells
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
inputs = snakemake.input
with fail_cleanly(ValueError, KeyError):
    cells = write_debate_cells(
        snakemake.output[0], debate_cells(list(inputs.correlations), list(inputs.permutation), list(inputs.adversarial))
    )
log(f"{len(cells)} numbers")
