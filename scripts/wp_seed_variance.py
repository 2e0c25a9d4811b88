"""Rule wp_seed_variance: results/wiegreffe_pinter/{dataset}/{model}/seed{seed}/seed_variance.csv, per
test instance the attention JSD and output TVD to the base model of its seed models (W&P §3.3) and of
J&W's per-instance adversary (D-JWEXPORT)."""

from attnexp.papers.wiegreffe_pinter.experiment import write_seed_variance
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    table = write_seed_variance(
        snakemake.input.base,
        list(snakemake.input.seeds),
        snakemake.params.seeds,
        snakemake.input.jw_adversary,
        snakemake.output[0],
    )
log(f"{len(snakemake.params.seeds)} seed models and J&W's adversary compared on {len(table) // 2} test instances")
