# attnexp: the attention-as-explanation debate, replicated from raw public data.
# Read top to bottom: the stages in pipeline order. Config keys: config.yaml; layout: README.md.
import os

from snakemake.utils import min_version

min_version("9.0")


# The project config, wherever the workflow runs from (--directory); overlays via --configfile.
configfile: os.path.join(workflow.basedir, "config.yaml")


report: os.path.join(workflow.basedir, "report", "workflow.rst")


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/embeddings.smk"
include: "rules/train.smk"
include: "rules/explain.smk"
include: "rules/jain_wallace.smk"
include: "rules/serrano_smith.smk"
include: "rules/wiegreffe_pinter.smk"
include: "rules/faithfulness.smk"
include: "rules/attention_attribution.smk"
include: "rules/zoo.smk"
include: "rules/debate_matrix.smk"
include: "rules/claims.smk"
include: "rules/publish.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(),


# Snakemake's timers for its next scheduling pass end with the run (attnexp.workflow.end_rescheduling_timers)
onsuccess:
    end_rescheduling_timers()


onerror:
    end_rescheduling_timers()


# Last, once every rule exists: a misspelt target gets the valid names.
check_targets()
