"""Rule export_attention: results/models/{dataset}/{model}/seed{seed}/attention.jsonl, the selected
model's attention and probabilities for every instance of every split (id, split, length)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.runs import export_attention
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    export_attention(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output[0],
        batch_size=snakemake.params.batch_size,
        guide_path=snakemake.input.get("guide"),
        device=logged_device(snakemake.params.device, log),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
    )
log(f"attention exported to {snakemake.output[0]}")
