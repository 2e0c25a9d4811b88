"""Rule wp_debate_cells: Wiegreffe & Pinter's numbers of the debate matrix, from their tables
(results/debate_cells/wiegreffe_pinter.csv)."""

from attnexp import io
from attnexp.experiments.debate_matrix import write_debate_cells
from attnexp.papers.wiegreffe_pinter.debate import debate_cells
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
inputs = snakemake.input
with fail_cleanly(ValueError, KeyError):
    # the diagnostic and adversary tables exist where a base run has every experiment (none: not made)
    tables = {
        name: io.read_table(inputs[name][0]) if inputs[name] else None
        for name in ("uniform", "diagnostic", "adversary")
    }
    cells = write_debate_cells(snakemake.output[0], debate_cells(**tables))
log(f"{len(cells)} numbers")
