"""Rules explain and explain_together: results/explain/{dataset}/{model}/seed{seed}/{method}.jsonl, the
scores of one explanation method, or of several computed in one pass, for every test instance
(attnexp.explain)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.explain import write_explanations
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
outputs = dict(zip(snakemake.params.methods, snakemake.output))
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_explanations(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        outputs,
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        log=log,
        device=logged_device(snakemake.params.device, log),
    )
log(f"explanations written to {', '.join(outputs.values())}")
