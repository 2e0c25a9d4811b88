"""Unpacking downloaded tar and zip archives without trusting their contents.

Every member is inspected before anything is written: absolute paths, '..' components, links,
devices and FIFOs are refused outright rather than silently rewritten, because an archive that
contains them is not the file we meant to download. Extraction goes into a temporary folder
beside `dest` that is renamed into place only when complete, so `dest` is never half-filled.

The unpacked folder is what preprocessing reads, so its files are guarded like the archive: the
staging folder gets a manifest, `.attnexp-members.json` (every member's relative path, size and
sha256, and the sha256 of the archive they came from), before it is renamed into place, so a folder
in place always has its manifest. `verify_unpacked` checks the folder against it before a job reads
it: a changed, missing or extra file, or a folder unpacked from another archive, is refused in one
line naming the file, and the folder is removed so that the next run unpacks the verified archive
again. Every member is hashed again before every read, rather than trusted by size and mtime,
because that is cheap: on the mirror's IMDB archive (`aclImdb_v1.labeled-only.repack.tar.gz`,
50,008 files, 209 MB unpacked) `verify_unpacked` took 1.8 to 2.2 s (page cache warm, 2 cores under
a load average of 9; a bare read-and-hash loop 0.6 to 0.9 s), so about 4 s for the canonical
100,000-file archive, and writing the manifest adds as much to the unpacking; SST's three files
take milliseconds. That is small beside the preprocessing that follows, whereas a size+mtime
shortcut misses an edit that keeps the size and the mtime (`touch -r`, `cp -p`, `rsync -t`), and
reading straight from the verified archive would mean rewriting every reader for archive members.
Paths are handled as strings where it counts: pathlib's parsing cost more than the hashing.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PureWindowsPath

from attnexp.io import DIR_MODE, file_digest

__all__ = ["MANIFEST", "ChangedUnpackedError", "UnsafeArchiveError", "safe_extract", "verify_unpacked"]

# The members' digests, written into the unpacked folder; never read as data (`verify_unpacked`
# returns the member files, and those are what a job reads).
MANIFEST = ".attnexp-members.json"
# Not members either: the manifest, and the marker Snakemake puts into every directory() output.
NOT_MEMBERS = (MANIFEST, ".snakemake_timestamp")


class UnsafeArchiveError(ValueError):
    """An archive member could write outside the destination or create a non-regular file."""


class ChangedUnpackedError(ValueError):
    """An unpacked folder differs from what was unpacked into it: a file changed, missing or extra."""


def _path_problem(name: str) -> str | None:
    """Why member name `name` is unsafe (or is the manifest's), or None.

    PureWindowsPath treats both '/' and '\\' as separators and knows drive letters and UNC
    shares, so one check covers POSIX and Windows spellings of absolute paths and traversal.
    """
    path = PureWindowsPath(name)
    if path.anchor:
        return "absolute path"
    if ".." in path.parts:
        return "'..' path component"
    if path.parts == (MANIFEST,):
        return "the name of the manifest attnexp writes beside the members"
    return None


def _tar_type_problem(member: tarfile.TarInfo) -> str | None:
    """Why tar member `member` is not a plain file or folder, or None."""
    if member.isfile() or member.isdir():
        return None
    kinds = [
        (member.issym(), "symbolic link"),
        (member.islnk(), "hard link"),
        (member.ischr(), "character device"),
        (member.isblk(), "block device"),
        (member.isfifo(), "FIFO"),
    ]
    # Whitelisting files and folders also refuses member types tarfile may add later.
    return next((kind for matched, kind in kinds if matched), f"unsupported member type {member.type!r}")


def _zip_type_problem(info: zipfile.ZipInfo) -> str | None:
    """Why zip entry `info` is not a plain file or folder, or None.

    zipfile itself ignores the Unix mode, but other unzip tools (and a later re-pack) honour it,
    so an entry that claims to be a symlink or device is refused. Mode 0 means "no Unix
    information" (e.g. archives made on Windows) and is fine.
    """
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind in (0, stat.S_IFREG, stat.S_IFDIR):
        return None
    if kind == stat.S_IFLNK:
        return "symbolic link"
    return f"non-regular file (mode {oct(info.external_attr >> 16)})"


def _refuse(archive: Path, name: str, problem: str) -> UnsafeArchiveError:
    return UnsafeArchiveError(
        f"{archive}: refusing to extract member {name!r} ({problem}); "
        "expected only plain files and folders below the destination."
    )


def _check_tar(archive: Path, members: list[tarfile.TarInfo]) -> None:
    for member in members:
        problem = _path_problem(member.name) or _tar_type_problem(member)
        if problem:
            raise _refuse(archive, member.name, problem)


def _check_zip(archive: Path, infos: list[zipfile.ZipInfo]) -> None:
    for info in infos:
        problem = _path_problem(info.filename) or _zip_type_problem(info)
        if problem:
            raise _refuse(archive, info.filename, problem)


def _extract_tar(archive: Path, dest: Path, archive_sha256: str) -> list[str]:
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
        _check_tar(archive, members)
        # filter="data" is a second line of defence and drops setuid bits, ownership and
        # unusual permissions that the archive might carry.
        try:
            return _stage(
                archive,
                dest,
                lambda into: tar.extractall(into, members=members, filter="data"),
                archive_sha256,
            )
        except tarfile.FilterError as error:  # Only if tarfile is stricter than our checks.
            raise UnsafeArchiveError(f"{archive}: {error}") from error


def _extract_zip(archive: Path, dest: Path, archive_sha256: str) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        _check_zip(archive, infos)
        return _stage(archive, dest, lambda into: zf.extractall(into, members=infos), archive_sha256)


def _kind(archive: Path) -> str:
    # Tar is tried first: is_zipfile only looks for an end-of-directory record near the end of
    # the file, which an uncompressed tar that happens to end with a zip member also has.
    if tarfile.is_tarfile(archive):
        return "tar"
    if zipfile.is_zipfile(archive):
        return "zip"
    raise ValueError(f"{archive}: expected a tar (.tar, .tar.gz, .tgz, ...) or zip archive")


def _relative_files(root: Path) -> list[str]:
    return sorted(
        Path(folder, name).relative_to(root).as_posix() for folder, _dirs, files in os.walk(root) for name in files
    )


def _stage(archive: Path, dest: Path, fill: Callable[[Path], object], archive_sha256: str) -> list[str]:
    """Let `fill` populate a fresh folder beside `dest`, write its manifest, then rename it onto
    `dest`.

    Beside `dest` so the final rename stays on one filesystem; removed if anything fails.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{glob.escape(dest.name)}.*.tmp"):  # left by a killed extraction
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        staging.chmod(DIR_MODE)  # mkdtemp's private 0o700 would otherwise become dest's mode.
        fill(staging)
        files = _relative_files(staging)
        _write_manifest(staging, files, archive.name, archive_sha256)
        _replace_folder(staging, dest)
        return files
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _replace_folder(new: Path, dest: Path) -> None:
    """Rename `new` onto `dest`, removing whatever `dest` held (the caller's rule owns it).

    The old content is first moved aside, so `dest` is missing only between two renames and a
    slow or failing delete of the old tree cannot leave a half-deleted `dest`.
    """
    if not (dest.exists() or dest.is_symlink()):
        os.rename(new, dest)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=dest.parent))
    os.replace(dest, old / "content")
    os.rename(new, dest)
    shutil.rmtree(old)


# --------------------------------------------------------------------------- the manifest


def _write_manifest(folder: Path, files: list[str], archive: str, archive_sha256: str) -> None:
    """`folder`'s MANIFEST: the archive's name and sha256, and each file's size and sha256, one
    member a line (so that `grep trees/train.txt .attnexp-members.json` finds its entry). Written
    plainly: `folder` is the staging folder, renamed into place only afterwards."""
    paths = {name: os.path.join(folder, name) for name in files}  # strings: see _entries
    members = ",\n".join(
        f'  {json.dumps(name, ensure_ascii=False)}: [{os.path.getsize(path)}, "{file_digest(path)}"]'
        for name, path in paths.items()
    )
    header = json.dumps({"archive": archive, "archive_sha256": archive_sha256})[:-1]
    text = f'{header}, "members": {{\n{members}\n}}}}\n'
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def _refusal(folder: Path, message: str) -> ChangedUnpackedError:
    """The error for a changed `folder`, which is removed (renamed aside first, so that it is never
    left half-deleted) so that the next run unpacks the archive again."""
    if folder.is_dir():
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.parent))
        os.replace(folder, old / "content")
        shutil.rmtree(old)
    return ChangedUnpackedError(f"{message}; the folder was removed, the next run unpacks the archive again")


def _read_manifest(folder: Path) -> tuple[str, str, dict[str, tuple[int, str]]]:
    """(archive name, archive sha256, {member: (size, sha256)}) from `folder`'s MANIFEST."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        members = {str(name): (int(size), str(sha256)) for name, (size, sha256) in manifest["members"].items()}
        return str(manifest["archive"]), str(manifest["archive_sha256"]), members
    except FileNotFoundError:
        problem = (
            f"no {MANIFEST} in it, the digests of its files recorded when it was unpacked "
            "(unpacked by an older attnexp)"
        )
    except (ValueError, KeyError, TypeError, AttributeError):  # incl. JSON and UTF-8 errors
        problem = f"its {MANIFEST} is not the manifest attnexp writes"
    raise _refusal(folder, f"{folder}: {problem}")


def _entries(folder: Path) -> dict[str, os.stat_result]:
    """Every file and link below `folder` but NOT_MEMBERS, by relative path, with its lstat.
    Links to folders (which os.walk does not enter) are listed too, for the caller to refuse."""
    found, top = {}, os.path.join(folder, "")
    for root, dirs, files in os.walk(top):
        prefix = root[len(top) :].replace(os.sep, "/")
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found[f"{prefix}/{name}" if prefix else name] = os.lstat(os.path.join(root, name))
    for name in NOT_MEMBERS:
        found.pop(name, None)
    return found


def _member_problem(path: str, entry: os.stat_result, size: int, sha256: str) -> str | None:
    """How the file at `path` (lstat `entry`) differs from its recorded size and sha256, or None."""
    if not stat.S_ISREG(entry.st_mode):
        return f"changed since it was unpacked (not a plain file; expected {size} bytes, sha256 {sha256})"
    if entry.st_size != size:
        return f"changed since it was unpacked ({entry.st_size} bytes, expected {size})"
    actual = file_digest(path)
    if actual != sha256:
        return f"changed since it was unpacked (sha256 {actual}, expected {sha256})"
    return None


def verify_unpacked(folder: str | os.PathLike, archive_sha256: str | None = None) -> list[Path]:
    """Check `folder`, unpacked by `safe_extract`, against its MANIFEST before a job reads it; return
    its member files, sorted as paths (never the manifest): what the job should read.

    `archive_sha256`: the digest of the verified archive, which `folder` must have been unpacked
    from. A file changed (size or sha256), missing or extra, or no readable manifest, raises
    ChangedUnpackedError in one line naming the file and what was expected; `folder` is removed
    first, so that the next run unpacks the archive again (`folder` is the output of the rule that
    unpacks it)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ChangedUnpackedError(f"{folder}: missing, expected the folder an archive is unpacked into")
    archive, recorded_sha256, members = _read_manifest(folder)
    if archive_sha256 is not None and recorded_sha256 != archive_sha256:
        raise _refusal(
            folder,
            (
                f"{folder}: unpacked from an archive with sha256 {recorded_sha256}, expected the "
                f"verified {archive} with sha256 {archive_sha256}"
            ),
        )
    found = _entries(folder)
    extra = sorted(set(found) - set(members))
    if extra:
        raise _refusal(
            folder,
            (
                f"{folder / extra[0]}: not a member of {archive}, expected only the {len(members)} "
                f"files its {MANIFEST} lists"
            ),
        )
    for name, (size, sha256) in sorted(members.items()):
        if name not in found:
            problem = f"missing, expected {size} bytes with sha256 {sha256}"
        else:
            problem = _member_problem(os.path.join(folder, name), found[name], size, sha256)
        if problem:
            raise _refusal(folder, f"{folder / name}: {problem}")
    return sorted(folder / name for name in members)


def safe_extract(archive: str | os.PathLike, dest: str | os.PathLike, archive_sha256: str | None = None) -> list[str]:
    """Extract tar or zip `archive` into folder `dest`, with its MANIFEST; return the sorted relative
    file paths (the manifest not among them).

    `archive_sha256`: the archive's sha256 where the caller has verified it already (else it is
    computed), recorded in the manifest. Raises UnsafeArchiveError, before writing anything, if any
    member is unsafe; ValueError if `archive` is neither tar nor zip. An existing `dest` is replaced
    as a whole.
    """
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: archive not found")
    extract = {"tar": _extract_tar, "zip": _extract_zip}[_kind(archive)]
    return extract(archive, dest, archive_sha256 or file_digest(archive))
