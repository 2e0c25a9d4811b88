"""Rule zoo_tables: Mohankumar et al. 2020's measures of the zoo per trained model
(results/tables/zoo.{csv,md}) and their comparison with the published values and findings
(results/claims/zoo.csv)."""

from attnexp.papers.zoo.tables import write_tables
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    table = write_tables(
        snakemake.input.metrics,
        snakemake.input.explanations,
        snakemake.input.reference,
        snakemake.output,
        snakemake.params.performance_tolerance,
    )
log(f"{len(table)} models")
