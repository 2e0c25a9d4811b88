"""Rule jw_ground_truth: attention, gradient, leave-one-out and integrated gradients scored against
the planted cues of the generated and planted datasets: a table and a figure."""

from attnexp.explanations import explanation_sets
from attnexp.papers.jain_wallace.plots import ground_truth_bars
from attnexp.papers.jain_wallace.tables import write_ground_truth
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    table = write_ground_truth(
        snakemake.input.explanations,
        snakemake.input.test,
        snakemake.input.metrics,
        snakemake.output.csv,
        snakemake.output.md,
        gates=snakemake.params.gates,
        max_dev_test_gap=snakemake.params.max_dev_test_gap,
        shifted_paths=snakemake.input.shifted,
    )
save_figure(ground_truth_bars(table), snakemake.output.pdf, snakemake.output.png)
log(f"{len(explanation_sets(snakemake.input.explanations))} models scored against the planted cues")
