"""Which file each dataset reads, and from where: the canonical URL, the mirror, or a labelled stand-in.

Resolution happens when the workflow is planned (it decides which download jobs exist):
- a canonical file present in the mirror (by name) is copied from there, else downloaded from its URL;
- when the mirror lacks it but holds every file of the source's `substitute`, and `substitutes: allow`,
  those stand-ins are used instead, and the choice is recorded in stats.json and the dataset table.
Either way every file is checksum-verified by the download step, and again before it is unpacked or
read; an archive's unpacked members are checked against the digests recorded when it was unpacked
(`attnexp.data.archives.verify_unpacked`) before preprocessing reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from attnexp.data.download import find_in_mirror, read_verified

__all__ = ["SourceFile", "resolve_sources", "digest_of", "disagreeing_sources"]


@dataclass(frozen=True)
class SourceFile:
    dataset: str
    file: str
    url: str | None  # None for a substitute: it only ever comes from the mirror
    digest: tuple[str, str | None]  # (algorithm, expected hex digest)
    extract: bool
    substitute: str | None  # the note saying what differs, or None for a canonical file
    splits_affected: tuple[str, ...] = ()  # splits whose published sizes the stand-in invalidates

    def as_record(self) -> dict:
        return {
            "file": self.file,
            "url": self.url,
            "digest": list(self.digest),
            "extract": self.extract,
            "substitute": self.substitute,
            "splits_affected": list(self.splits_affected),
        }


def digest_of(entry: dict) -> tuple[str, str | None]:
    for algorithm in ("sha256", "md5", "sha1"):
        if entry.get(algorithm):
            return algorithm, entry[algorithm]
    return "sha256", None


def resolve_sources(name: str, dataset: dict, mirror: str | None, substitutes: str) -> list[SourceFile]:
    resolved = []
    for source in dataset.get("sources", []):
        canonical = SourceFile(
            name, source["file"], source["url"], digest_of(source), source.get("extract", False), None
        )
        stand_in = source.get("substitute")
        if mirror is None or stand_in is None or substitutes == "forbid" or find_in_mirror(mirror, source["file"]):
            resolved.append(canonical)
        elif all(find_in_mirror(mirror, f["file"]) for f in stand_in["files"]):
            resolved += [
                SourceFile(
                    name,
                    f["file"],
                    None,
                    digest_of(f),
                    f.get("extract", False),
                    stand_in["note"],
                    tuple(stand_in["splits_affected"]),
                )
                for f in stand_in["files"]
            ]
        else:
            resolved.append(canonical)
    return resolved


def input_paths(sources: list[SourceFile], root: str = "resources") -> list[str]:
    """What the preprocessing step reads: extracted folders for archives (their members, once checked
    against the folder's manifest), files otherwise."""
    return [str(Path(root) / s.dataset / ("unpacked/" + s.file if s.extract else s.file)) for s in sources]


def disagreeing_sources(sources: list[SourceFile], root: str | Path = "resources") -> list[str]:
    """One line per file already fetched under `root` that was verified against another digest than
    the config now gives it (`<file>.verified`, written by the download): a typo in a configured
    checksum, or a new one. Checked when the workflow is read, before any job: a changed checksum
    reruns the download, and Snakemake deletes the file it replaces before the job could refuse the
    new checksum. (A file damaged in place is the job's to catch: it removes it and fetches it again.)"""
    problems = []
    for source in sources:
        algorithm, expected = source.digest
        path = Path(root) / source.dataset / source.file
        verified = read_verified(path) if expected is not None and path.is_file() else None
        if verified is not None and verified != (algorithm, expected.lower()):
            problems.append(
                f"{path} was verified against {verified[0]} {verified[1]} when it was fetched, but config key "
                f"datasets.{source.dataset}.sources now gives {algorithm} {expected} for {source.file}: "
                "correct the config, or delete the file to fetch it again"
            )
    return problems
