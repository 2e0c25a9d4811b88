"""Rule attention_attribution_heads: results/attention_attribution/{dataset}/{model}/seed{seed}/
heads.json (head importance by attention attribution and by max attention) and pruning.csv (test
accuracy per head order and pruned fraction), Hao et al. 2021."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.attention_attribution.experiment import write_head_pruning
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_head_pruning(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output.heads,
        snakemake.output.pruning,
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        log=log,
        device=logged_device(snakemake.params.device, log),
    )
log(f"head importance and pruning curves written to {snakemake.output.heads}, {snakemake.output.pruning}")
