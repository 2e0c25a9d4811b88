"""Obtaining raw source files: over HTTP or from an offline mirror, always checksum-verified.

Every path here writes into a temporary file beside the destination and renames it into place
only after the checksum matched, so `dest` is either absent or complete and verified; a crashed or
failed run never leaves a half-written file that a later run could mistake for a good one.

Transient network trouble (timeouts, resets, truncated bodies, HTTP 5xx/429) is retried with
exponential backoff; failures that another attempt cannot fix (HTTP 4xx, checksum mismatch) are not.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from attnexp.io import file_digest, file_digests, temp_beside

__all__ = [
    "ChecksumError",
    "DamagedResourceError",
    "DownloadError",
    "fetch",
    "file_digest",
    "find_in_mirror",
    "obtain",
    "offline_hint",
    "verify_checksum",
    "verify_resource",
]

Log = Callable[[str], None]

CHUNK_SIZE = 1 << 20  # 1 MiB: few syscalls, bounded memory.
OFFLINE_HINT = "To run offline, put the file in a folder and pass --config mirror=DIR."


def offline_hint(name: str | None = None, mirror: str | os.PathLike | None = None) -> str:
    """What to do when a download failed: with no mirror configured, how to give one; with one, the
    file it lacks (a mirror was passed, so asking for one again would not help)."""
    if mirror is not None:
        return f"The mirror {mirror} has no file named {name}: put it there (any subfolder) and rerun."
    return OFFLINE_HINT.replace("the file", name) if name else OFFLINE_HINT


class DownloadError(RuntimeError):
    """A source file could not be obtained (network, mirror or checksum trouble)."""


class ChecksumError(DownloadError):
    """The obtained file's digest differs from the expected one."""

    def __init__(self, origin: str, algorithm: str, expected: str, actual: str) -> None:
        super().__init__(
            f"Checksum mismatch for {origin}: expected {algorithm} {expected}, got {actual}. "
            "The file is corrupt or the source changed; it was not kept."
        )
        self.origin = origin
        self.algorithm = algorithm
        self.expected = expected
        self.actual = actual


class _Truncated(Exception):
    """The body ended before Content-Length bytes arrived (urllib does not flag this itself)."""


# --------------------------------------------------------------------------- checksums


def _expected_digest(sha256: str | None, md5: str | None, sha1: str | None = None) -> tuple[str, str]:
    """(algorithm, expected lower-case hex digest); exactly one must be given. sha256 is preferred;
    md5 and sha1 exist because for some canonical files only those are published."""
    given = {name: value for name, value in (("sha256", sha256), ("md5", md5), ("sha1", sha1)) if value is not None}
    if len(given) != 1:
        raise ValueError("pass exactly one of sha256=, md5= or sha1= (the expected digest of the file)")
    ((algorithm, value),) = given.items()
    return algorithm, value.strip().lower()


def verify_checksum(
    path: str | os.PathLike,
    *,
    sha256: str | None = None,
    md5: str | None = None,
    sha1: str | None = None,
    origin: str,
) -> str:
    """Check `path` against the expected digest; return its actual sha256.

    `origin` (the URL or mirror path the file came from) is named in the error, since the
    temporary `path` means nothing to the user. The sha256 is returned even when md5 was the
    check, so callers can always record a strong digest.
    """
    algorithm, expected = _expected_digest(sha256, md5, sha1)
    actual = file_digests(path, {algorithm, "sha256"})
    if actual[algorithm] != expected:
        raise ChecksumError(origin, algorithm, expected, actual[algorithm])
    return actual["sha256"]


class DamagedResourceError(DownloadError):
    """A source file that was verified when it arrived no longer matches its digest."""


def verify_resource(path: str | os.PathLike, digest: tuple[str, str | None]) -> str:
    """Check a source file already in place (in `resources/`) against its configured digest before a
    job reads it; return its sha256. A file that no longer matches was damaged after it was verified
    (a disk fault, an edit, a partial copy): it is removed, so that the next run downloads or copies
    it again, and DamagedResourceError says so."""
    algorithm, expected = digest
    path = Path(path)
    actual = file_digests(path, {algorithm, "sha256"})
    if expected is not None and actual[algorithm] != expected.strip().lower():
        path.unlink(missing_ok=True)
        raise DamagedResourceError(
            f"{path}: damaged since it was verified ({algorithm} {actual[algorithm]}, expected {expected}); "
            "removed, the next run downloads or copies it again"
        )
    return actual["sha256"]


# --------------------------------------------------------------------------- atomic install


def _install(
    dest: Path,
    fill: Callable[[Path], None],
    *,
    sha256: str | None,
    md5: str | None,
    sha1: str | None = None,
    origin: str,
) -> str:
    """Let `fill` write a temp file beside `dest`, verify it, rename it onto `dest`; return sha256.

    The temp file is in dest's folder so the final os.replace is an atomic rename on one
    filesystem; it is dot-prefixed so globs and Snakemake do not pick it up; it is removed on
    every failure path.
    """
    tmp = temp_beside(dest, f".{dest.name}.", ".part")
    try:
        fill(tmp)
        digest = verify_checksum(tmp, sha256=sha256, md5=md5, sha1=sha1, origin=origin)
        os.replace(tmp, dest)
        return digest
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- HTTP


def _stream(url: str, tmp: Path, timeout: float) -> None:
    """Copy the body at `url` into `tmp`, insisting on the full Content-Length when one is sent."""
    request = urllib.request.Request(url, headers={"User-Agent": "attnexp-downloader"})
    with urllib.request.urlopen(request, timeout=timeout) as response, open(tmp, "wb") as out:
        expected = _content_length(response)
        received = 0
        while chunk := response.read(CHUNK_SIZE):
            out.write(chunk)
            received += len(chunk)
    # http.client's read(amt) returns b"" on a closed connection instead of raising, so a
    # truncated body would otherwise pass silently (and then fail the checksum, unretried).
    if expected is not None and received != expected:
        raise _Truncated(f"body truncated: got {received} of {expected} bytes")


def _content_length(response) -> int | None:
    value = response.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # A malformed header is no evidence either way; the checksum still guards.


def _is_transient(error: BaseException) -> bool:
    """Whether another attempt could plausibly succeed."""
    if isinstance(error, urllib.error.HTTPError):  # Checked first: HTTPError is a URLError.
        return error.code >= 500 or error.code == 429
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, socket.gaierror):
        return False  # The host name does not resolve: offline, or a wrong URL; waiting rarely helps.
    return isinstance(
        error,
        (
            urllib.error.URLError,  # Refused connections, DNS trouble, wrapped timeouts.
            TimeoutError,  # A read timing out after the connection was made.
            ConnectionError,  # Resets, aborts, RemoteDisconnected.
            http.client.HTTPException,  # Garbled status lines, IncompleteRead.
            _Truncated,
        ),
    )


def _describe(error: BaseException) -> str:
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return f"{type(error.reason).__name__}: {error.reason}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def fetch(
    url: str,
    dest: str | os.PathLike,
    *,
    sha256: str | None = None,
    md5: str | None = None,
    sha1: str | None = None,
    timeout: float = 60.0,
    retries: int = 4,
    backoff: float = 1.0,
    log: Log | None = None,
    hint: str = OFFLINE_HINT,
) -> str:
    """Download `url` to `dest` atomically, verify its checksum, return its sha256.

    Up to `retries` extra attempts are made for transient failures, sleeping
    `backoff * 2**attempt` seconds in between. Raises ChecksumError on a digest mismatch and
    DownloadError on any other failure, ending with `hint` (what to do instead: `offline_hint`).
    """
    _expected_digest(sha256, md5, sha1)  # Fail on a bad call before touching the network.
    dest = Path(dest)
    say = log or (lambda line: None)
    attempts = max(retries, 0) + 1
    for attempt in range(attempts):
        say(f"GET {url} (attempt {attempt + 1}/{attempts})")
        try:
            return _install(
                dest,
                lambda tmp: _stream(url, tmp, timeout),
                sha256=sha256,
                md5=md5,
                sha1=sha1,
                origin=url,
            )
        except ChecksumError:
            raise  # Same bytes would come again; already names the URL and digests.
        except (OSError, http.client.HTTPException, _Truncated, ValueError) as error:
            # OSError covers URLError, timeouts and resets; ValueError is urllib's "unknown url".
            last = error
            if isinstance(error, urllib.error.HTTPError):
                error.close()  # It holds the open response; don't leak the socket.
            say(f"failed: {_describe(error)}")
            if not _is_transient(error):
                break
            if attempt + 1 < attempts:
                delay = backoff * 2**attempt
                say(f"retrying in {delay:g}s")
                time.sleep(delay)
    tries = f" after {attempt + 1} attempts" if attempt else ""
    raise DownloadError(f"Could not download {url}{tries}: {_describe(last)}. {hint}") from last


# --------------------------------------------------------------------------- mirror


def find_in_mirror(mirror: str | os.PathLike, filename: str) -> Path | None:
    """The file called `filename` anywhere under folder `mirror`, or None if there is none.

    Identical copies in several subfolders are fine (the first in sorted order is returned);
    copies that differ are an error, since silently picking one would make runs depend on
    the folder layout.
    """
    mirror = Path(mirror)
    if not filename or filename in {".", ".."} or "/" in filename or os.sep in filename:
        raise ValueError(f"expected a bare file name to look up in the mirror, got {filename!r}")
    if not mirror.is_dir():
        raise DownloadError(f"Mirror folder {mirror} does not exist or is not a folder.")
    matches = sorted(
        Path(root, filename)
        for root, _dirs, files in os.walk(mirror)
        if filename in files and Path(root, filename).is_file()
    )
    if len(matches) > 1 and len({file_digest(path) for path in matches}) > 1:
        listing = ", ".join(str(path) for path in matches)
        raise DownloadError(
            f"Mirror {mirror} holds several different files named {filename}: {listing}. Keep only the right one."
        )
    return matches[0] if matches else None


def _url_filename(url: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])


def _copy_from_mirror(source: Path, dest: Path, *, sha256: str | None, md5: str | None, sha1: str | None = None) -> str:
    try:
        return _install(
            dest,
            lambda tmp: shutil.copyfile(source, tmp),
            sha256=sha256,
            md5=md5,
            sha1=sha1,
            origin=str(source),
        )
    except ChecksumError:
        raise
    except OSError as error:
        raise DownloadError(f"Could not copy {source} from the mirror to {dest}: {error}") from error


def obtain(
    url: str,
    dest: str | os.PathLike,
    *,
    filename: str | None = None,
    mirror: str | os.PathLike | None = None,
    sha256: str | None = None,
    md5: str | None = None,
    sha1: str | None = None,
    timeout: float = 60.0,
    retries: int = 4,
    backoff: float = 1.0,
    log: Log | None = None,
) -> dict:
    """Put the verified source file at `dest`, from `mirror` when it holds it, else from `url`.

    `filename` is the name looked up in the mirror (default: the last component of the URL's
    path). Returns {"file": dest's name, "origin": URL or mirror path, "sha256": digest}.
    """
    _expected_digest(sha256, md5, sha1)
    dest = Path(dest)
    say = log or (lambda line: None)
    name = filename or _url_filename(url)
    if mirror is not None:
        if not name:
            raise ValueError(f"cannot tell which file to look up in the mirror for {url}; pass filename=")
        source = find_in_mirror(mirror, name)
        if source is not None:
            say(f"copying {source} from the mirror")
            digest = _copy_from_mirror(source, dest, sha256=sha256, md5=md5, sha1=sha1)
            return {"file": dest.name, "origin": str(source), "sha256": digest}
        say(f"{name} is not in mirror {mirror}; downloading {url}")
    digest = fetch(
        url,
        dest,
        sha256=sha256,
        md5=md5,
        sha1=sha1,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        log=log,
        hint=offline_hint(name, mirror),
    )
    return {"file": dest.name, "origin": url, "sha256": digest}


def _verified_path(path: str | os.PathLike) -> Path:
    """Beside a fetched file: the configured digest it was verified against (`record_verified`)."""
    return Path(f"{path}.verified")


def record_verified(path: str | os.PathLike, digest: tuple[str, str]) -> None:
    """Write `<path>.verified`: `<algorithm> <digest>` the config gave when `path` was fetched, so that
    a later change of the configured digest is seen before Snakemake reruns the download
    (`attnexp.data.sources.disagreeing_sources`)."""
    from attnexp import io

    algorithm, expected = digest
    io.write_text(_verified_path(path), f"{algorithm} {expected.lower()}\n")


def read_verified(path: str | os.PathLike) -> tuple[str, str] | None:
    """(algorithm, digest) of `<path>.verified`, or None where there is none (or it is unreadable)."""
    try:
        algorithm, expected = _verified_path(path).read_text(encoding="utf-8").split()
    except (OSError, ValueError):
        return None
    return algorithm, expected
