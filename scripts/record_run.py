"""Rule record_run: results/run/config.yaml and results/run/run.json (`attnexp.publish.record.write_run_record`)."""

from attnexp.publish.record import write_run_record
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    params = snakemake.params
    record = write_run_record(
        params.config, params.source, params.targets, params.snakemake, snakemake.output.config, snakemake.output.record
    )
    log(f"config {record['config_digest'][:16]}, commit {record['commit']}, {len(record['targets'])} targets")
