"""Rule jw_adversarial: results/jain_wallace/{dataset}/{model}/seed{seed}/adversarial.csv (ε-max JSD
per test instance, J&W §5.5) and adversarial_attention.jsonl (the chosen candidates, D-JWEXPORT)."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.jain_wallace.experiment import write_adversarial
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_adversarial(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.output.table,
        snakemake.output.attention,
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        log=log,
        device=logged_device(snakemake.params.device, log),
    )
log(f"adversarial attention written to {snakemake.output.table}")
