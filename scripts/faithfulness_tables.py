"""Rule faithfulness_tables: AOPC per model and ranking (results/tables/faithfulness_aopc.{csv,md}),
the seed envelopes (results/tables/faithfulness_seed_envelopes.{csv,md}), the violation test
(results/tables/faithfulness_violation.{csv,md}), and each ranking against the random baseline and Liu
et al.'s ordering of the violation ratios (results/claims/faithfulness.csv)."""

from attnexp.papers.faithfulness.tables import write_tables
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    table = write_tables(
        snakemake.input.eraser,
        snakemake.input.envelopes,
        snakemake.output,
        snakemake.input.violation,
        snakemake.input.violation_reference,
    )
log(f"{len(snakemake.input.eraser)} models, {len(table)} rows")
