"""Rule jw_correlations: results/jain_wallace/{dataset}/{model}/seed{seed}/correlations.csv, Kendall
τ-b and p-value per test instance and pair of explanations (J&W §5.3)."""

from attnexp.papers.jain_wallace.correlations import write_correlations
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError):
    write_correlations(list(snakemake.input), snakemake.output[0])
log(f"correlations written to {snakemake.output[0]}")
