"""Rule preprocess_dataset: sources -> {train,dev,test}.jsonl, vocab.txt, stats.json."""

from pathlib import Path

from attnexp.data.archives import verify_unpacked
from attnexp.data.download import DamagedResourceError, file_digest, verify_resource
from attnexp.data.preprocess import SplitSizeError, build_dataset
from attnexp.data.readers import SourceFiles
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(SplitSizeError, DamagedResourceError, ValueError):
    # Before anything is read or written: the downloaded files verified again (a damaged one is
    # removed), and an archive's unpacked folder against the digests recorded when it was unpacked
    # from that archive (a changed one is removed); only the verified members are read.
    sources, readable = [], []
    for s, path, read in zip(snakemake.params.sources, snakemake.input.downloaded, snakemake.input.readable):
        sha256 = verify_resource(path, s["digest"])
        sources.append(
            {
                "file": s["file"],
                "sha256": sha256,
                "substitute": s["substitute"],
                "splits_affected": s["splits_affected"],
            }
        )
        readable += verify_unpacked(read, sha256) if s["extract"] else [read]
    sources += [
        {"file": Path(path).name, "sha256": file_digest(path), "substitute": None, "splits_affected": []}
        for path in [*snakemake.input.local, *snakemake.input.base]
    ]
    log(f"{len(readable)} source files verified")
    build_dataset(
        snakemake.wildcards.dataset,
        snakemake.params.dataset,
        SourceFiles([*readable, *snakemake.input.local, *snakemake.input.base]),
        sources,
        Path(snakemake.output.stats).parent,
        missing_bound=snakemake.params.missing_bound,
        log=log,
    )
