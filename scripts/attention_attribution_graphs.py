"""Rule attention_attribution_graphs: results/attention_attribution/{dataset}/{model}/seed{seed}/
graphs.json, the attribution trees of a few test instances (Hao et al. 2021)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.attention_attribution.experiment import write_attribution_graphs
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_attribution_graphs(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output[0],
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        device=logged_device(snakemake.params.device, log),
    )
log(f"attribution graphs written to {snakemake.output[0]}")
