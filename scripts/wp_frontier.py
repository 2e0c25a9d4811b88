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
        adversary_exports=list(snakemake.input.adversaries),
        adversary_metrics=list(snakemake.input.adversary_metrics),
        lambdas=snakemake.params.lambdas,
        variance_csv=snakemake.input.variance,
        data=DataFiles.of(snakemake.input),
        out_frontier=snakemake.output.frontier,
        out_epochs=snakemake.output.epochs,
    )
log(table.to_string())
