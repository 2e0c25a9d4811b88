"""Rule shifted_test: results/data/{dataset}/test_shifted.jsonl, the shifted test set of a generated task
(cues of both classes in every instance: only their counts tell the label) or of a planted dataset (the
base's test split planted again with labels independent of the original text)."""

from attnexp import io
from attnexp.data import planted, synthetic
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
dataset = snakemake.params.dataset
with fail_cleanly(ValueError, KeyError):
    if dataset["protocol"] == "planted":
        documents = planted.shifted_test(snakemake.input.base_test, dataset)
    else:
        documents = synthetic.shifted_test(dataset["generator"], dataset["split_seed"])
    io.write_jsonl(snakemake.output[0], (d.to_record() for d in documents), seal=True)
log(f"{len(documents)} shifted test instances")
