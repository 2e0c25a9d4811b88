"""Rule export_attention: results/models/{dataset}/{model}/seed{seed}/attention.jsonl, the selected
model's attention and probabilities for every instance of every split (id, split, length)."""

from attnexp.runtime import CheckpointError, DeviceError, export_attention, resolve_device
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    log(f"device: {resolve_device(snakemake.params.device)} (setting {snakemake.params.device!r})")  # what `auto` chose
    export_attention(
        snakemake.input.model,
        snakemake.params.data_dir,
        snakemake.output[0],
        batch_size=snakemake.params.batch_size,
        guide_path=snakemake.input.get("guide"),
        device=snakemake.params.device,
    )
log(f"attention exported to {snakemake.output[0]}")
