"""Rule ss_debate_cells: Serrano & Smith's numbers of the debate matrix (results/debate_cells/serrano_smith.csv)."""

from attnexp.experiments.debate_matrix import write_debate_cells
from attnexp.papers.serrano_smith.debate import debate_cells
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    cells = write_debate_cells(
        snakemake.output[0], debate_cells(list(snakemake.input.erasure), list(snakemake.input.removal))
    )
log(f"{len(cells)} numbers")
