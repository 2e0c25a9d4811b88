"""Rule ss_interventions: results/serrano_smith/{dataset}/{model}/seed{seed}/single_erasure.csv and
removal.csv, S&S's two erasure experiments on one model's test split (per instance)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.serrano_smith.experiment import write_interventions
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_interventions(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output.erasure,
        snakemake.output.removal,
        settings=snakemake.params.settings,
        threads=snakemake.threads,
        expected_model=snakemake.wildcards.model,
        log=log,
        device=logged_device(snakemake.params.device, log),
    )
log(f"S&S interventions written to {snakemake.output.removal}")
