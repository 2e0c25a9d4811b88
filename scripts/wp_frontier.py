"""Rule wp_frontier: results/wiegreffe_pinter/{dataset}/{model}/seed{seed}/frontier.csv (per λ the
adversary's mean test TVD, JSD, KL and F1, plus Figure 4's reference points) and adversary_epochs.csv
(each adversary's per-epoch log, W&P §4)."""

from attnexp.data.documents import DataFiles
from attnexp.papers.wiegreffe_pinter.experiment import write_frontier
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    table = write_frontier(
        snakemake.input.base,
        snakemake.input.uniform,
        list(snakemake.input.adversaries),
        list(snakemake.input.adversary_metrics),
        snakemake.params.lambdas,
        snakemake.input.variance,
        DataFiles.of(snakemake.input),
        snakemake.output.frontier,
        snakemake.output.epochs,
    )
log(table.to_string())
