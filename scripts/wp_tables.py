"""Rule wp_tables: W&P Tables 2-4 and the seed-variance summary across base runs, and their claims."""

from attnexp.papers.wiegreffe_pinter.tables import write_tables
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    write_tables(
        snakemake.input.base,
        snakemake.input.uniform,
        full_base_metrics=snakemake.input.full_base,
        diagnostic_metrics=list(snakemake.input.diagnostic),
        variances=snakemake.input.variance,
        frontiers=snakemake.input.frontier,
        published=snakemake.input.published,
        table_lambda=snakemake.params.table_lambda,
        tolerance=snakemake.params.tolerance,
        out=snakemake.output,
    )
log(f"{len(snakemake.input.base)} W&P base runs tabulated")
