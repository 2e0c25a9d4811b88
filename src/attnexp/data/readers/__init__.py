"""Readers: raw source files -> tokenised `Document`s per split, following each paper's protocol.

Every reader has the same shape, `read(files: SourceFiles, cfg: dict) -> dict[split, list[Document]]`,
where `cfg` is the dataset's (validated) config block. Readers tokenise but do not normalise,
length-filter or build vocabularies: `attnexp.data.preprocess` does that for every dataset alike.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SourceFiles", "reader_for"]


class SourceFiles:
    """The files a dataset's sources provide (downloaded files and extracted archive folders),
    looked up by name or by a trailing path such as `trees/train.txt`."""

    def __init__(self, paths):
        self.files: list[Path] = []
        for path in map(Path, paths):
            if path.is_dir():
                self.files += sorted(p for p in path.rglob("*") if p.is_file())
            elif path.is_file():
                self.files.append(path)
            else:
                raise FileNotFoundError(f"source path {path} does not exist")

    def find(self, name: str, required: bool = True) -> Path | None:
        """The one file whose path ends with `name` (path components, not characters)."""
        parts = Path(name).parts
        hits = [p for p in self.files if p.parts[-len(parts) :] == parts]
        if len(hits) > 1:
            raise ValueError(f"{name!r} is ambiguous among the source files: {[str(h) for h in hits]}")
        if not hits and required:
            raise FileNotFoundError(f"no source file named {name!r}; have: {[p.name for p in self.files][:20]}")
        return hits[0] if hits else None

    def glob(self, pattern: str) -> list[Path]:
        """Files whose path matches `pattern` (Path.match, i.e. from the right)."""
        return [p for p in self.files if p.match(pattern)]


def reader_for(dataset: str, cfg: dict | None = None):
    """The `read` function for a dataset: a user's files (a `files` block in its config), else the
    reader of its name (an `if`-free dict, no registry machinery)."""
    from attnexp.config import BUILT_IN_DATASETS
    from attnexp.data import planted, synthetic
    from attnexp.data.readers import agnews, babi, cnn, files, imdb, mimic, newsgroups, snli, sst, zhang

    if cfg is not None and cfg.get("files"):
        return files.read

    readers = {
        "sst": sst.read,
        "imdb": imdb.read,
        "imdb_ratings": imdb.read_ratings,
        "20news": newsgroups.read_binary,
        "20news20": newsgroups.read_all_groups,
        "agnews": agnews.read,
        "babi1": babi.read,
        "babi2": babi.read,
        "babi3": babi.read,
        "snli": snli.read,
        "cnn": cnn.read,
        "yelp": zhang.read,
        "amazon": zhang.read,
        "yahoo": zhang.read,
        "diabetes": mimic.read_diabetes,
        "anemia": mimic.read_anemia,
        "synthetic": synthetic.read,
        "synthetic_qa": synthetic.read,
    }
    if dataset.startswith("planted_"):  # planted cues on any binary dataset (Zhou et al. 2022)
        return planted.read
    if dataset not in readers or dataset not in BUILT_IN_DATASETS:  # the config's check knows every reader
        raise KeyError(f"no reader for dataset {dataset!r}; known: {sorted(readers)}")
    return readers[dataset]
