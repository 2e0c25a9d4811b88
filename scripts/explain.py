"""Rule explain: results/explain/{dataset}/{model}/seed{seed}/{method}.jsonl, one explanation method's
scores for every test instance (attnexp.explain)."""

from attnexp.data.documents import DataFiles
from attnexp.explain import write_explanations
from attnexp.runtime import CheckpointError, DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_explanations(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output[0],
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        method=snakemake.wildcards.method,
        log=log,
        device=logged_device(snakemake.params.device, log),
    )
log(f"explanations written to {snakemake.output[0]}")
