"""Rule tabulate_claims: every paper's claim rows stacked into results/tables/claims.{csv,md}."""

from attnexp import io
from attnexp.claims import claims_markdown, concatenate
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError):
    table = concatenate(list(snakemake.input), sealed=True)
io.write_csv(snakemake.output.csv, table, seal=True)
io.write_text(snakemake.output.md, claims_markdown(table))
log(f"{len(table)} claims from {len(snakemake.input)} files")
