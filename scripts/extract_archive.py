"""Rule extract_archive: unpack an archive, verified again against its digest first (a file in
resources/ damaged since it arrived is removed and fetched again by the next run), refusing unsafe
members; the folder gets a manifest of its members' digests, checked before preprocessing reads it."""

from attnexp.data.archives import UnsafeArchiveError, safe_extract
from attnexp.data.download import DamagedResourceError, verify_resource
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(UnsafeArchiveError, DamagedResourceError):
    sha256 = verify_resource(snakemake.input[0], snakemake.params.source["digest"])
    members = safe_extract(snakemake.input[0], snakemake.output[0], sha256)
log(f"{snakemake.input[0]}: {len(members)} files extracted")
