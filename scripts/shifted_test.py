"""Rule shifted_test: results/data/{dataset}/test_shifted.jsonl, the generated task's shifted test set
(cues of both classes in every instance: only their counts tell the label)."""

from attnexp import io
from attnexp.data.synthetic import shifted_test
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    documents = shifted_test(snakemake.params.generator, snakemake.params.seed)
    io.write_jsonl(snakemake.output[0], (d.to_record() for d in documents), seal=True)
log(f"{len(documents)} shifted test instances")
