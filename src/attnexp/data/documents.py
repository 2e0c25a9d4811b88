"""One instance, as a reader produces it and a preprocessed split file stores it: `Document`, the
three splits, a seeded held-out split for sources without one (`split_off`), a split file read
back and checked (`read_records`), and the files of a preprocessed dataset a job is given
(`DataFiles`). The bottom of the data layer: readers build on it, and
`attnexp.data.preprocess` builds on the readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from attnexp import io
from attnexp.data.tokenize import normalise, segment_sentences, tokenize_document

__all__ = ["SPLITS", "DATA_FILES", "Document", "DataFiles", "split_off", "verify_split_file", "read_records"]

SPLITS = ("train", "dev", "test")
DATA_FILES = (*SPLITS, "vocab")  # what `DataFiles` names


@dataclass
class Document:
    """One instance. `sentences` are [start, end) spans over `tokens`; QA/NLI instances have a
    `question` (question or hypothesis); `extra` holds per-instance annotations (e.g. `rationale`)."""

    id: str
    tokens: list[str]
    label: int | str
    sentences: list[tuple[int, int]]
    question: list[str] | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_text(cls, id: str, text: str, label, question: str | None = None) -> Document:
        tokens, sentences = tokenize_document(text)
        q = tokenize_document(question)[0] if question is not None else None
        return cls(id=id, tokens=tokens, label=label, sentences=sentences, question=q)

    def normalised(self) -> Document:
        """Lower-case and map digit tokens to `qqq` (J&W §4.1, applied to every dataset)."""
        return Document(
            id=self.id,
            tokens=[normalise(t) for t in self.tokens],
            label=self.label,
            sentences=self.sentences,
            question=None if self.question is None else [normalise(t) for t in self.question],
            extra=self.extra,
        )

    def segmented(self, length: int) -> Document:
        """The same instance with its sentences longer than `length` tokens cut into segments of `length`
        (`datasets.<name>.segment_length`: text without sentence punctuation is one sentence)."""
        return replace(self, sentences=segment_sentences(self.sentences, length))

    def to_record(self) -> dict:
        record = {"id": self.id, "tokens": self.tokens, "label": self.label}
        if self.question is not None:
            record["question"] = self.question
        record["sentences"] = [list(span) for span in self.sentences]
        record.update(self.extra)
        return record

    @classmethod
    def from_record(cls, record: dict) -> Document:
        """The Document `to_record` wrote: its own fields, the rest its `extra`."""
        own = ("id", "tokens", "label", "sentences", "question")
        return cls(
            **{k: record[k] for k in own if k in record},
            extra={k: v for k, v in record.items() if k not in own},
        )


def split_off(docs: list[Document], fraction: float, seed: int, stratify: bool = True):
    """Deterministically split `docs` into (rest, held_out) with `fraction` held out, per label when
    `stratify`. Order within each part follows the input order, so outputs are stable."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"split fraction must lie in (0, 1), got {fraction}")
    rng = np.random.RandomState(seed)
    groups: dict = {}
    for index, doc in enumerate(docs):
        groups.setdefault(doc.label if stratify else None, []).append(index)
    held: set[int] = set()
    for key in sorted(groups, key=str):
        members = groups[key]
        n_held = int(round(fraction * len(members)))
        held.update(members[i] for i in rng.permutation(len(members))[:n_held])
    rest = [d for i, d in enumerate(docs) if i not in held]
    held_out = [d for i, d in enumerate(docs) if i in held]
    return rest, held_out


def _record_problem(record) -> str | None:
    """What is wrong with one record of a preprocessed split (the format `build_dataset` writes), or None."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    missing = [key for key in ("id", "tokens", "label", "sentences") if key not in record]
    if missing:
        return f"no {', '.join(repr(k) for k in missing)} (expected id, tokens, label, sentences)"
    if not isinstance(record["id"], str):
        return f"'id' is {record['id']!r}, expected a string"
    tokens = record["tokens"]
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        return "'tokens' is not a list of strings"
    if not tokens:
        return "'tokens' is empty (every instance has at least one token)"
    if isinstance(record["label"], bool) or not isinstance(record["label"], (str, int)):
        return f"'label' is {record['label']!r}, expected a string or an integer"
    spans = record["sentences"]
    if not isinstance(spans, list) or not all(
        isinstance(s, list)
        and len(s) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) for i in s)
        and 0 <= s[0] < s[1] <= len(tokens)
        for s in spans
    ):
        return "'sentences' is not a list of [start, end] token spans within the tokens"
    question = record.get("question")
    if question is not None and (not isinstance(question, list) or not all(isinstance(t, str) for t in question)):
        return "'question' is not a list of strings"
    return None


def verify_split_file(path: str | Path) -> None:
    """Check a file of a preprocessed dataset against the digest its `stats.json` recorded when the
    dataset was written; files outside such a folder (no stats.json beside them) are not checked."""
    path = Path(path)
    stats = path.parent / "stats.json"
    if stats.exists():
        io.verify_digest(path, io.read_json(stats).get("files", {}).get(path.name), "stats.json")


def changed_since_written(folder: str | Path) -> list[str]:
    """One line per file of a preprocessed dataset folder changed after its `stats.json` was written
    (stats.json is written last): newer than it, and its digest is not the recorded one. Checked when
    the workflow is read: such a file makes Snakemake plan every job that reads it again, deleting
    their outputs (a good model.pt among them) before a job could refuse the file."""
    stats = Path(folder) / "stats.json"
    if not stats.is_file():
        return []
    try:
        recorded_files = io.read_json(stats).get("files", {})
    except (ValueError, AttributeError):
        return []  # a damaged stats.json: each job reading it says so in its own line
    written, problems = stats.stat().st_mtime_ns, []
    for name, recorded in recorded_files.items():
        path = stats.parent / name
        if path.is_file() and path.stat().st_mtime_ns > written:
            try:
                io.verify_digest(path, recorded, "stats.json")
            except ValueError as err:
                problems.append(str(err))
    return problems


def read_records(path: str | Path) -> list[dict]:
    """The records of a preprocessed split file, the file checked against its recorded digest
    (`verify_split_file`) and each record checked (fields, types, non-empty tokens, spans within the
    tokens): a bad one is a ValueError naming the file and line."""
    verify_split_file(path)
    records = io.read_jsonl(path)
    for line_no, record in enumerate(records, 1):
        problem = _record_problem(record)
        if problem:
            raise ValueError(f"{path}:{line_no}: {problem}")
    return records


@dataclass(frozen=True)
class DataFiles:
    """The files of a preprocessed dataset that one job reads, as its rule names them among its
    inputs (`train`, `dev`, `test`, `vocab`: `DataFiles.of(snakemake.input)`). A file the job was
    not given is None, and asking for it (`path`) is an error naming it."""

    train: Path | None = None
    dev: Path | None = None
    test: Path | None = None
    vocab: Path | None = None

    def __post_init__(self):
        for name in DATA_FILES:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))

    @classmethod
    def of(cls, named) -> DataFiles:
        """The entries named train, dev, test and vocab of a rule's named inputs (or of a dict); the
        others are left out."""
        return cls(**{name: named.get(name) for name in DATA_FILES})

    def path(self, name: str) -> Path:
        """The file `name` (a split or `vocab`)."""
        if name not in DATA_FILES:
            raise ValueError(f"{name!r} is no file of a preprocessed dataset; expected one of {', '.join(DATA_FILES)}")
        path = getattr(self, name)
        if path is None:
            raise ValueError(
                f"this job was given no {name} file of its dataset (its rule names none as the input {name!r})"
            )
        return path
