"""Rule ss_tables: the S&S summary tables (erasure, removal, flip sooner) and their claims."""

from attnexp.papers.serrano_smith.tables import write_tables
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    write_tables(
        snakemake.input.erasure,
        snakemake.input.removal,
        snakemake.input.metrics,
        snakemake.input.published,
        reference_datasets=snakemake.params.reference_datasets,
        left_out=snakemake.params.left_out,
        rarely=snakemake.params.findings["rarely"],
        out=snakemake.output,
    )
log(f"{len(snakemake.input.removal)} S&S runs tabulated")
