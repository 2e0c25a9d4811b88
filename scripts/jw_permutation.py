"""Rule jw_permutation: results/jain_wallace/{dataset}/{model}/seed{seed}/permutation.csv, the median
output change under random permutations of the attention per test instance (J&W §5.4)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.jain_wallace.experiment import write_permutation
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_permutation(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output[0],
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        device=logged_device(snakemake.params.device, log),
    )
log(f"permutation results written to {snakemake.output[0]}")
