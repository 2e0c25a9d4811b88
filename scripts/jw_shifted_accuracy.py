"""Rule jw_shifted_accuracy: results/jain_wallace/{dataset}/{model}/seed{seed}/shifted_test.json, a
model's accuracy on its generated or planted dataset's shifted test set (the ground-truth table shows it
beside test accuracy: a model that learnt a shortcut rather than the cues falls there)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.jain_wallace.experiment import write_shifted_accuracy
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    result = write_shifted_accuracy(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.input.shifted,
        snakemake.output[0],
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        device=logged_device(snakemake.params.device, log),
    )
log(f"shifted test accuracy {result['accuracy']:.4f} on {result['n']} instances")
