"""Rule preprocess_dataset: sources -> {train,dev,test}.jsonl, vocab.txt, stats.json."""

from pathlib import Path

from attnexp.data.download import DamagedResourceError, file_digest, verify_resource
from attnexp.data.preprocess import SplitSizeError, build_dataset
from attnexp.data.readers import SourceFiles
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(SplitSizeError, DamagedResourceError, ValueError):
    # the downloaded files verified again before they are read (a damaged one is removed)
    sources = [
        {"file": s["file"], "sha256": verify_resource(path, s["digest"]), "substitute": s["substitute"], "splits_affected": s["splits_affected"]}
        for s, path in zip(snakemake.params.sources, snakemake.input.downloaded)
    ] + [
        {"file": Path(path).name, "sha256": file_digest(path), "substitute": None, "splits_affected": []}
        for path in [*snakemake.input.local, *snakemake.input.base]
    ]
    build_dataset(
        snakemake.wildcards.dataset,
        snakemake.params.dataset,
        SourceFiles([*snakemake.input.readable, *snakemake.input.local, *snakemake.input.base]),
        sources,
        Path(snakemake.output.stats).parent,
        snakemake.params.missing_bound,
        log=log,
    )
