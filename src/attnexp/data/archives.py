"""Unpacking downloaded tar and zip archives without trusting their contents.

Every member is inspected before anything is written: absolute paths, '..' components, links,
devices and FIFOs are refused outright rather than silently rewritten, because an archive that
contains them is not the file we meant to download. Extraction goes into a temporary folder
beside `dest` that is renamed into place only when complete, so `dest` is never half-filled.
"""

from __future__ import annotations

import glob
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PureWindowsPath
from typing import Callable

from attnexp.io import DIR_MODE

__all__ = ["UnsafeArchiveError", "safe_extract"]


class UnsafeArchiveError(ValueError):
    """An archive member could write outside the destination or create a non-regular file."""


def _path_problem(name: str) -> str | None:
    """Why member name `name` is unsafe, or None.

    PureWindowsPath treats both '/' and '\\' as separators and knows drive letters and UNC
    shares, so one check covers POSIX and Windows spellings of absolute paths and traversal.
    """
    path = PureWindowsPath(name)
    if path.anchor:
        return "absolute path"
    if ".." in path.parts:
        return "'..' path component"
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
    return next(
        (kind for matched, kind in kinds if matched), f"unsupported member type {member.type!r}"
    )


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


def _extract_tar(archive: Path, dest: Path) -> list[str]:
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
        _check_tar(archive, members)
        # filter="data" is a second line of defence and drops setuid bits, ownership and
        # unusual permissions that the archive might carry.
        try:
            return _stage(dest, lambda into: tar.extractall(into, members=members, filter="data"))
        except tarfile.FilterError as error:  # Only if tarfile is stricter than our checks.
            raise UnsafeArchiveError(f"{archive}: {error}") from error


def _extract_zip(archive: Path, dest: Path) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        _check_zip(archive, infos)
        return _stage(dest, lambda into: zf.extractall(into, members=infos))


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
        Path(folder, name).relative_to(root).as_posix()
        for folder, _dirs, files in os.walk(root)
        for name in files
    )


def _stage(dest: Path, fill: Callable[[Path], object]) -> list[str]:
    """Let `fill` populate a fresh folder beside `dest`, then rename it onto `dest`.

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


def safe_extract(archive: str | os.PathLike, dest: str | os.PathLike) -> list[str]:
    """Extract tar or zip `archive` into folder `dest`; return the sorted relative file paths.

    Raises UnsafeArchiveError, before writing anything, if any member is unsafe; ValueError if
    `archive` is neither tar nor zip. An existing `dest` is replaced as a whole.
    """
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: archive not found")
    extract = {"tar": _extract_tar, "zip": _extract_zip}[_kind(archive)]
    return extract(archive, dest)
