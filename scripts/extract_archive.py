"""Rule extract_archive: unpack a verified archive, refusing unsafe members."""

from attnexp.data.archives import UnsafeArchiveError, safe_extract
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(UnsafeArchiveError):
    members = safe_extract(snakemake.input[0], snakemake.output[0])
log(f"{snakemake.input[0]}: {len(members)} files extracted")
