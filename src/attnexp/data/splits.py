"""A preprocessed dataset's split files read back, without building model inputs: the vocabulary,
the class labels (from the training split), each split's records, its ids and labels, the words the
vocabulary lacks, and another model's exported attention (the guides of W&P's guided models and
adversary). Every file is checked as it is read (`data.documents.read_records`, the digests the
dataset's stats.json recorded); `attnexp.models.splits` turns these records into model inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attnexp import io
from attnexp.data.documents import DataFiles, read_records, verify_split_file

__all__ = [
    "read_vocab",
    "label_classes",
    "read_classes",
    "read_split",
    "split_labels",
    "open_words",
    "read_guides",
]


def read_vocab(path: str | Path) -> list[str]:
    """A dataset's vocabulary, checked against the digest its stats.json recorded."""
    verify_split_file(path)
    return Path(path).read_text(encoding="utf-8").splitlines()


def label_classes(train_records: list[dict]) -> list:
    """Sorted labels of the training split (numbers numerically). bAbI answers are words: the
    candidate set is the answers seen in training (J&W score every vocabulary word, but a word that
    never answers a training question can only be wrong)."""
    labels = {r["label"] for r in train_records}
    return sorted(labels, key=lambda x: (0, int(x), "") if str(x).lstrip("-").isdigit() else (1, 0, str(x)))


def read_classes(data: DataFiles) -> list:
    """The class labels of a preprocessed dataset, in class-index order (from its training split)."""
    return label_classes([{"label": label} for label in _read_labels(data.path("train"))])


_LABEL_KEY = '"label":'


def _read_labels(path: Path) -> list:
    """The `label` of every record of a JSONL split, in file order, without parsing the rest of each
    record (a training split's tokens are most of its bytes: on IMDB 0.08 s instead of 0.6 s). Where
    no object opens before the first `"label":` and a comma or the record's own brace precedes it,
    that key is the record's own (its quote is no string's escaped quote; the files are written from
    dicts, so keys are unique) and its value is decoded there; any other line is parsed whole, with
    `io.read_jsonl`'s error for one that is not JSON."""
    decoder = json.JSONDecoder()
    labels = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            at = line.find(_LABEL_KEY)
            if at > 0 and line[0] == "{" and line[at - 1] in ",{" and line.find("{", 1, at) < 0:
                try:
                    labels.append(decoder.raw_decode(line, at + len(_LABEL_KEY))[0])
                    continue
                except json.JSONDecodeError:
                    pass  # e.g. whitespace after the colon: parsed whole below
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{line_no}: not a JSON object per line ({err.msg})") from None
            if not isinstance(record, dict) or "label" not in record:
                raise ValueError(f"{path}:{line_no}: no 'label' (expected id, tokens, label, sentences)")
            labels.append(record["label"])
    return labels


def read_split(data: DataFiles, split: str) -> list[dict]:
    """The records of a preprocessed split, each checked (`data.documents.read_records`)."""
    return read_records(data.path(split))


def split_labels(data: DataFiles, split: str) -> tuple[list[str], np.ndarray]:
    """Instance ids and class indices (the training split's class order) of a split, in file order."""
    classes = {c: i for i, c in enumerate(read_classes(data))}
    records = read_split(data, split)
    return [r["id"] for r in records], np.array([classes[r["label"]] for r in records])


def open_words(data: DataFiles, vocab: list[str]) -> list[str]:
    """The words of the train, dev and test splits that the vocabulary lacks, in order of first
    appearance: a model with an open vocabulary (a pretrained encoder) reads them as themselves, not
    as `<UNK>`. Its checkpoint stores them, so that every job maps words to the same ids."""
    known, extra = set(vocab), {}
    for split in ("train", "dev", "test"):
        for record in read_split(data, split):
            for word in record["tokens"] + (record.get("question") or []):
                if word not in known:
                    extra.setdefault(word, None)
    return list(extra)


def read_guides(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """A source model's exported attention (`attnexp.runs.export_attention`) -> {split: {id: weights}}."""
    guides: dict[str, dict[str, np.ndarray]] = {}
    for record in io.read_jsonl(path, sealed=True):
        if len(record["attention"]) != record["length"]:
            raise ValueError(
                f"{path}: instance {record['id']!r} stores {len(record['attention'])} weights for length {record['length']}"
            )
        if not np.isfinite(np.asarray(record["attention"], dtype=np.float64)).all():
            raise ValueError(
                f"{path}: instance {record['id']!r} has non-finite attention weights; delete the file and rerun"
            )
        guides.setdefault(record["split"], {})[record["id"]] = np.asarray(record["attention"], dtype=np.float32)
    return guides
