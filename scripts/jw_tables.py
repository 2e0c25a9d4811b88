"""Rule jw_tables: Table 2 beside J&W's numbers, the tolerances it uses with their basis, the
correlation summary of every model, the claims (Table 2, J&W's committed means, the correlation,
permutation and adversarial findings on every seed), and the encoder comparison figure."""

from attnexp.papers.jain_wallace.plots import encoder_comparison
from attnexp.papers.jain_wallace.tables import write_tables
from attnexp.papers.jain_wallace.tolerances import write_tolerances
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    summary = write_tables(
        snakemake.input.correlations,
        snakemake.input.metrics,
        snakemake.input.published,
        significance=snakemake.params.significance,
        tolerance=snakemake.params.tolerance,
        loo_op=snakemake.params.loo_op,
        out=snakemake.output,
        mean_tau_path=snakemake.input.mean_tau,
        permutation_paths=snakemake.input.permutation,
        adversarial_paths=snakemake.input.adversarial,
        findings=snakemake.params.findings,
    )
    write_tolerances(
        snakemake.input.states,
        snakemake.params.tolerance,
        snakemake.output.tolerances_csv,
        snakemake.output.tolerances_md,
    )
save_figure(encoder_comparison(summary), snakemake.output.encoders_pdf, snakemake.output.encoders_png)
log(f"{len(snakemake.input.correlations)} models tabulated")
