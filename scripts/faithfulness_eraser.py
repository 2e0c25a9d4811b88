"""Rule faithfulness_eraser: results/faithfulness/{dataset}/{model}/seed{seed}/eraser.csv, ERASER
comprehensiveness and sufficiency per test instance, ranking and bin (DeYoung et al. 2020); HAN and FLAN
have no explanations and are ranked by their own attention and leave-one-unit-out. Beside it,
violation.csv: the violation test (Liu et al. 2022) per test instance and explainer."""

from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.papers.faithfulness.experiment import write_faithfulness
from attnexp.runtime import DeviceError
from attnexp.workflow import fail_cleanly, log_to, logged_device, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):
    write_faithfulness(
        snakemake.input.model,
        DataFiles.of(snakemake.input),
        snakemake.input.get("explanations"),
        snakemake.output.eraser,
        settings=snakemake.params.settings,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        device=logged_device(snakemake.params.device, log),
        violation_out=snakemake.output.violation,
    )
log(f"ERASER scores written to {snakemake.output.eraser}, the violation test to {snakemake.output.violation}")
