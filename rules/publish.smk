# The run's own record, for the published results section (`python -m attnexp.publish`): the effective
# config (results/run/config.yaml) and results/run/run.json with its digest, the config files, the
# commit of the workflow's checkout and every target of `all` (what a partial run lacks). Re-made when
# any of them changes, so it names the commit that last brought the run up to date.
from importlib.metadata import version

from attnexp.publish.record import workflow_source


rule record_run:
    output:
        config="results/run/config.yaml",
        record="results/run/run.json",
    log:
        "results/logs/record_run.log",
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    params:
        config=config,
        source=workflow_source(
            workflow.basedir,
            workflow.overwrite_configfiles,
            workflow.config_settings.config,
        ),
        targets=all_targets(),
        snakemake=version("snakemake"),
    script:
        "../scripts/record_run.py"


TARGETS["run"] = ["results/run/config.yaml", "results/run/run.json"]
