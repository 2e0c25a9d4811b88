"""Rule faithfulness_debate_cells: the battery's numbers of the debate matrix (results/debate_cells/faithfulness.csv)."""

from attnexp.experiments.debate_matrix import write_debate_cells
from attnexp.papers.faithfulness.debate import debate_cells
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    cells = write_debate_cells(snakemake.output[0], debate_cells(list(snakemake.input.eraser)))
log(f"{len(cells)} numbers")
