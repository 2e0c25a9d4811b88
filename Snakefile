# attnexp: the attention-as-explanation debate, replicated from raw public data.
# Read top to bottom: the stages in pipeline order. Config keys: config.yaml; layout: README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"


rule all:
    input:
        all_targets(),
    default_target: True
