"""Rules download_source and download_vectors: one file, from the mirror or its URL, checksum-verified."""

from attnexp.data.download import DownloadError, find_in_mirror, obtain, offline_hint, record_verified
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
source, download = snakemake.params.source, snakemake.params.download
algorithm, expected = source["digest"]

with fail_cleanly(DownloadError):
    if expected is None:
        raise DownloadError(
            f"no checksum is configured for {source['file']} ({source['url']}), and none is published: "
            f"compute the sha256 of a copy you trust and set it in config.yaml under {source['config_key']}"
        )
    if source["url"] is None and snakemake.params.mirror is None:
        raise DownloadError(
            f"{source['file']} is a mirror-only substitute (it has no URL), but no mirror is configured: put it in a folder and pass --config mirror=DIR"
        )
    if source["url"] is None and find_in_mirror(snakemake.params.mirror, source["file"]) is None:
        raise DownloadError(
            f"{source['file']} is a mirror-only substitute (it has no URL). {offline_hint(source['file'], snakemake.params.mirror)}"
        )
    result = obtain(
        source["url"] or f"mirror-only:{source['file']}",
        snakemake.output[0],
        filename=source["file"],
        mirror=snakemake.params.mirror,
        **{algorithm: expected},
        timeout=download["timeout"],
        retries=download["retries"],
        backoff=download["backoff"],
        log=log,
    )
    record_verified(snakemake.output[0], (algorithm, expected))
    log(f"{result['file']}: from {result['origin']}, sha256 {result['sha256']}")
