"""Rule attention_attribution_tables: results/tables/attention_attribution_{pruning,agreement}.{csv,md}
and results/claims/attention_attribution.csv (Hao et al. 2021 Figure 3; Abnar & Zuidema 2020)."""

from attnexp.papers.attention_attribution.tables import write_tables
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    write_tables(snakemake.input.pruning, snakemake.input.explanations, snakemake.output)
log(f"{len(snakemake.input.pruning)} runs tabulated")
