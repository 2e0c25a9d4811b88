"""Tests for attnexp.data.archives.safe_extract and verify_unpacked on tiny archives built in
tmp_path."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import uuid
import zipfile
from pathlib import Path

import pytest

from attnexp.data.archives import (
    MANIFEST,
    ChangedUnpackedError,
    UnsafeArchiveError,
    safe_extract,
    verify_unpacked,
)

GOOD_FILES = {
    "README": b"tiny corpus\n",
    "data/train.tsv": b"1\tgood\n0\tbad\n",
    "data/test.tsv": b"1\tfine\n",
}
EXPECTED = sorted(GOOD_FILES)
# Outside tmp_path altogether; unique so a leftover from elsewhere cannot fake a failure.
OUTSIDE = f"/tmp/attnexp-evil-{uuid.uuid4().hex}"


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 3  # /dev/null
    return info, None


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def _zip_symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o120777 << 16  # S_IFLNK | 0777, as `zip --symlinks` writes it.
    return info, target.encode()


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """(folder for archives, destination path); the destination does not exist yet."""
    (tmp_path / "in").mkdir()
    return tmp_path / "in", tmp_path / "out" / "corpus"


# --------------------------------------------------------------------------- unsafe archives

GOOD_FIRST = [_file("ok.txt")]  # A harmless member first: proves nothing is written before the check.

UNSAFE_TARS = {
    "traversal": GOOD_FIRST + [_file("../evil")],
    "deep-traversal": GOOD_FIRST + [_file("data/../../../evil")],
    "absolute": GOOD_FIRST + [_file(OUTSIDE)],
    "windows-drive": [_file("C:\\evil")],
    "windows-backslash-traversal": [_file("..\\evil")],
    "symlink": GOOD_FIRST + [_special("link", tarfile.SYMTYPE, OUTSIDE)],
    "relative-symlink": [_special("link", tarfile.SYMTYPE, "ok.txt")],
    "hardlink": GOOD_FIRST + [_special("hard", tarfile.LNKTYPE, "ok.txt")],
    "char-device": [_special("null", tarfile.CHRTYPE)],
    "block-device": [_special("disk", tarfile.BLKTYPE)],
    "fifo": [_special("pipe", tarfile.FIFOTYPE)],
}

UNSAFE_ZIPS = {
    "traversal": [("ok.txt", b"x"), ("../evil", b"x")],
    "absolute": [("ok.txt", b"x"), (OUTSIDE, b"x")],
    "windows-drive": [("C:/evil", b"x")],
    "windows-backslash-traversal": [("..\\evil", b"x")],
    "symlink": [("ok.txt", b"x"), _zip_symlink("link", OUTSIDE)],
}


def _assert_refused(archive: Path, dest: Path, bad_name: str | None = None) -> None:
    root = archive.parent.parent
    before = _tree(root)
    with pytest.raises(UnsafeArchiveError) as caught:
        safe_extract(archive, dest)
    assert str(archive) in str(caught.value)
    if bad_name is not None:
        assert repr(bad_name) in str(caught.value)  # Quoted, so odd names stay readable.
    assert _tree(root) == before  # Not dest, not its parent, no staging folder, no ../evil.
    assert not os.path.lexists(OUTSIDE)
    assert not os.path.lexists(root.parent / "evil")


@pytest.mark.parametrize("case", sorted(UNSAFE_TARS))
def test_unsafe_tar_is_refused_before_extracting(layout: tuple[Path, Path], case: str) -> None:
    folder, dest = layout
    members = UNSAFE_TARS[case]
    archive = make_tar(folder / f"{case}.tar.gz", members)
    _assert_refused(archive, dest, members[-1][0].name)


@pytest.mark.parametrize("case", sorted(UNSAFE_ZIPS))
def test_unsafe_zip_is_refused_before_extracting(layout: tuple[Path, Path], case: str) -> None:
    folder, dest = layout
    entries = UNSAFE_ZIPS[case]
    archive = make_zip(folder / f"{case}.zip", entries)
    last = entries[-1][0]
    _assert_refused(archive, dest, last if isinstance(last, str) else last.filename)


def test_unsafe_archive_leaves_existing_dest_alone(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    dest.mkdir(parents=True)
    (dest / "old.txt").write_bytes(b"old")
    archive = make_tar(folder / "bad.tar.gz", UNSAFE_TARS["traversal"])
    with pytest.raises(UnsafeArchiveError):
        safe_extract(archive, dest)
    assert _tree(dest.parent) == {"corpus", "corpus/old.txt"}


# --------------------------------------------------------------------------- good archives


def _good_tar(path: Path, mode: str = "w:gz") -> Path:
    folder = tarfile.TarInfo("data")
    folder.type, folder.mode = tarfile.DIRTYPE, 0o755
    members = [(folder, None)] + [_file(name, data) for name, data in GOOD_FILES.items()]
    members[1] = _file("./README", GOOD_FILES["README"])  # "./" prefixes are common and harmless.
    return make_tar(path, members, mode)


def _assert_extracted(dest: Path, files: list[str]) -> None:
    assert files == EXPECTED
    for name, data in GOOD_FILES.items():
        assert (dest / name).read_bytes() == data
    assert sorted(p.name for p in dest.parent.iterdir()) == [dest.name]  # No staging leftovers.


@pytest.mark.parametrize(("name", "mode"), [("c.tar.gz", "w:gz"), ("c.tgz", "w:gz"), ("c.tar", "w"), ("c.bin", "w:xz")])
def test_good_tar_extracts(layout: tuple[Path, Path], name: str, mode: str) -> None:
    folder, dest = layout
    files = safe_extract(_good_tar(folder / name, mode), dest)
    _assert_extracted(dest, files)


def test_good_zip_extracts(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    entries = [("data/", b"")] + list(GOOD_FILES.items())
    files = safe_extract(make_zip(folder / "c.zip", entries), dest)
    _assert_extracted(dest, files)


def test_existing_dest_is_replaced(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    dest.mkdir(parents=True)
    (dest / "stale.txt").write_bytes(b"stale")
    files = safe_extract(_good_tar(folder / "c.tar.gz"), dest)
    _assert_extracted(dest, files)
    assert not (dest / "stale.txt").exists()


def test_tar_permissions_are_sanitised(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    archive = make_tar(folder / "p.tar.gz", [_file("tool", b"#!/bin/sh\n", mode=0o4777)])
    assert safe_extract(archive, dest) == ["tool"]
    mode = stat.S_IMODE((dest / "tool").stat().st_mode)
    assert not mode & (stat.S_ISUID | stat.S_IWOTH)


def test_not_an_archive_is_a_value_error(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    bogus = folder / "corpus.tar.gz"
    bogus.write_bytes(b"<html>rate limited</html>")
    with pytest.raises(ValueError, match="corpus.tar.gz") as caught:
        safe_extract(bogus, dest)
    assert not isinstance(caught.value, UnsafeArchiveError)
    assert not dest.parent.exists()


# --------------------------------------------------------------------------- the manifest


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_manifest_records_every_member_and_the_archive(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    archive = _good_tar(folder / "c.tar.gz")
    assert safe_extract(archive, dest) == EXPECTED  # the manifest is not a member
    manifest = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    assert manifest == {
        "archive": "c.tar.gz",
        "archive_sha256": _sha256(archive.read_bytes()),
        "members": {name: [len(data), _sha256(data)] for name, data in GOOD_FILES.items()},
    }
    (dest / ".snakemake_timestamp").touch()  # Snakemake's marker in a directory() output
    assert verify_unpacked(dest, _sha256(archive.read_bytes())) == [dest / n for n in EXPECTED]


def test_a_member_named_like_the_manifest_is_refused(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    archive = make_zip(folder / "m.zip", [("ok.txt", b"x"), (MANIFEST, b"{}")])
    with pytest.raises(UnsafeArchiveError, match=repr(MANIFEST)):
        safe_extract(archive, dest)
    assert not dest.parent.exists()


def _flip_one_byte(dest: Path) -> None:
    data = bytearray((dest / "data/train.tsv").read_bytes())
    data[2] ^= 0x20  # one letter's case: same size
    (dest / "data/train.tsv").write_bytes(bytes(data))


def _link_to_a_folder(dest: Path) -> None:
    (dest / "data/more").symlink_to(dest.parent.parent / "in", target_is_directory=True)


def _linked_member(dest: Path) -> None:
    """A member replaced by a link to a file of the same content, outside the folder."""
    copy = dest.parent.parent / "in" / "copy.tsv"
    copy.write_bytes(GOOD_FILES["data/test.tsv"])
    (dest / "data/test.tsv").unlink()
    (dest / "data/test.tsv").symlink_to(copy)


TRAIN, TEST = GOOD_FILES["data/train.tsv"], GOOD_FILES["data/test.tsv"]
# case -> (how the unpacked folder is changed, the member named, the rest of the one line)
CHANGES = {
    "changed-byte": (_flip_one_byte, "data/train.tsv", "changed since it was unpacked (sha256 "),
    "truncated": (
        lambda d: (d / "data/train.tsv").write_bytes(TRAIN[:-1]),
        "data/train.tsv",
        f"changed since it was unpacked ({len(TRAIN) - 1} bytes, expected {len(TRAIN)})",
    ),
    "missing": (
        lambda d: (d / "data/test.tsv").unlink(),
        "data/test.tsv",
        f"missing, expected {len(TEST)} bytes with sha256 {_sha256(TEST)}",
    ),
    "extra": (
        lambda d: (d / "data/dev.tsv").write_bytes(b"1\tnew\n"),
        "data/dev.tsv",
        "not a member of c.tar.gz, expected only the 3 files its .attnexp-members.json lists",
    ),
    "extra-hidden": (lambda d: (d / ".notes").write_bytes(b""), ".notes", "not a member of c.tar.gz"),
    "extra-link-to-a-folder": (_link_to_a_folder, "data/more", "not a member of c.tar.gz"),
    "member-made-a-link": (
        _linked_member,
        "data/test.tsv",
        f"changed since it was unpacked (not a plain file; expected {len(TEST)} bytes, sha256 {_sha256(TEST)})",
    ),
    "no-manifest": (
        lambda d: (d / MANIFEST).unlink(),
        "",
        f"no {MANIFEST} in it, the digests of its files recorded when it was unpacked",
    ),
    "manifest-garbled": (
        lambda d: (d / MANIFEST).write_text('{"members": 3}'),
        "",
        f"its {MANIFEST} is not the manifest attnexp writes",
    ),
}


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_a_changed_unpacked_folder_is_refused_in_one_line_and_removed(layout: tuple[Path, Path], case: str) -> None:
    folder, dest = layout
    archive = _good_tar(folder / "c.tar.gz")
    sha256 = _sha256(archive.read_bytes())
    safe_extract(archive, dest, sha256)
    change, member, problem = CHANGES[case]
    change(dest)
    with pytest.raises(ChangedUnpackedError) as caught:
        verify_unpacked(dest, sha256)
    message = str(caught.value)
    named = f"{dest / member}: " if member else f"{dest}: "
    assert message.startswith(named + problem), message
    assert message.endswith("; the folder was removed, the next run unpacks the archive again")
    assert "\n" not in message
    assert sorted(p.name for p in dest.parent.iterdir()) == []  # removed, nothing left aside
    safe_extract(archive, dest, sha256)  # what the next run does
    assert verify_unpacked(dest, sha256) == [dest / n for n in EXPECTED]


def test_a_folder_unpacked_from_another_archive_is_refused(layout: tuple[Path, Path]) -> None:
    folder, dest = layout
    archive = _good_tar(folder / "c.tar.gz")
    safe_extract(archive, dest)
    other = "0" * 64
    with pytest.raises(ChangedUnpackedError) as caught:
        verify_unpacked(dest, other)
    assert str(caught.value).startswith(
        f"{dest}: unpacked from an archive with sha256 {_sha256(archive.read_bytes())}, "
        f"expected the verified c.tar.gz with sha256 {other}"
    )
    assert not dest.exists()
