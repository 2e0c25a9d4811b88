"""Rule zoo_comparison: results/tables/zoo_comparison.{csv,md}, each zoo model against the vanilla BiLSTM
on every directional test of the debate matrix."""

from attnexp import io
from attnexp.papers.zoo.comparison import comparison_markdown, zoo_comparison
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    matrix = io.read_table(snakemake.input.matrix, dtype={"measure": str, "reading": str})
    table = zoo_comparison(matrix, snakemake.params.models)
    io.write_csv(snakemake.output.csv, table, seal=True)
    io.write_text(snakemake.output.md, comparison_markdown(table))
log(f"{len(table)} comparisons")
