"""Yelp, Amazon and Yahoo Answers from the Zhang et al. (2015) CSVs, as used by Serrano & Smith (2019).

Protocol (S&S §3.3; D-SS-YAHOO for Yahoo):
- `yelp_review_full_csv/{train,test}.csv`: label, text (5 classes);
  `amazon_review_full_csv/`: label, title, text (5 classes; the title is unused);
  `yahoo_answers_csv/`: label, question title, question content, best answer (10 classes; text =
  the three fields joined by blank lines, so each starts a new sentence). The Webscope XML that S&S
  used duplicates half of Yahoo (D-SS-YAHOO), hence the CSV.
- No header; labels are 1-based in the files and 0-based here. The CSVs write newlines as the two
  characters `\\n`; they become real newlines. Empty documents (0 tokens) are dropped.
- `subsample[split]` (optional row budget, None = all rows): a seeded choice of row indices,
  taken in file order, drawn before tokenising because the files hold 650k-3.6M rows.
- Training-set outlier filter: keep a train document iff it has <= `max_sentences` sentences and
  no sentence longer than `max_sentence_tokens` tokens (either None = no bound); test is never
  filtered. Dev is then split off the filtered train (10 %, seed 5, stratified), so train and dev
  are drawn only from filtered documents, as S&S describe for Yahoo.

Config keys read: name, subsample.train, subsample.test, split_seed, dev_fraction, max_sentences,
max_sentence_tokens. Ids are `{split}-{row index in the file:06d}`.
"""

from __future__ import annotations

import csv

import numpy as np

from attnexp.data.documents import Document, split_off

# dataset -> (folder, column names, number of classes)
DATASETS = {
    "yelp": ("yelp_review_full_csv", ("label", "text"), 5),
    "amazon": ("amazon_review_full_csv", ("label", "title", "text"), 5),
    "yahoo": ("yahoo_answers_csv", ("label", "question title", "question content", "best answer"), 10),
}


def _cfg(cfg: dict, key: str):
    if key not in cfg:
        raise KeyError(f"{cfg.get('name', 'zhang')} dataset config lacks the key {key!r}")
    return cfg[key]


def _rows(path, columns):
    """(row index, fields) of every CSV record, checking the column count. Records are one per line
    in these files, so index + 1 is the line number given in errors."""
    with open(path, encoding="utf-8", newline="") as f:
        for index, row in enumerate(csv.reader(f)):
            if len(row) != len(columns):
                raise ValueError(
                    f"{path}:{index + 1}: expected {len(columns)} columns ({', '.join(columns)}), got {len(row)}"
                )
            yield index, row


def _kept_rows(path, columns, budget, seed):
    """All rows, or `budget` of them chosen by a seeded permutation and kept in file order."""
    if budget is None:
        yield from _rows(path, columns)
        return
    n_rows = sum(1 for _ in _rows(path, columns))  # a counting pass; the permutation needs n
    keep = set(np.sort(np.random.RandomState(seed).permutation(n_rows)[:budget]).tolist())
    yield from ((i, row) for i, row in _rows(path, columns) if i in keep)


def _label(path, index, value, n_classes):
    if not (value.isdigit() and 1 <= int(value) <= n_classes):
        raise ValueError(f"{path}:{index + 1}: expected a label in 1..{n_classes}, got {value!r}")
    return int(value) - 1


def _text(name, fields):
    if name == "amazon":
        fields = fields[1:]  # the review title is not part of the text (S&S)
    parts = [f.replace("\\n", "\n").strip() for f in fields]
    return "\n\n".join(p for p in parts if p)


def _documents(name, path, split, budget, seed):
    _, columns, n_classes = DATASETS[name]
    docs = []
    for index, row in _kept_rows(path, columns, budget, seed):
        label = _label(path, index, row[0], n_classes)
        doc = Document.from_text(f"{split}-{index:06d}", _text(name, row[1:]), label)
        if doc.tokens:
            docs.append(doc)
    return docs


def _within_bounds(doc, max_sentences, max_sentence_tokens):
    if max_sentences is not None and len(doc.sentences) > max_sentences:
        return False
    return max_sentence_tokens is None or all(end - start <= max_sentence_tokens for start, end in doc.sentences)


def read(files, cfg):
    name = _cfg(cfg, "name")
    if name not in DATASETS:
        raise ValueError(f"zhang reader: unknown dataset {name!r}; expected one of {sorted(DATASETS)}")
    folder = DATASETS[name][0]
    subsample, seed = _cfg(cfg, "subsample"), _cfg(cfg, "split_seed")
    if (
        not isinstance(subsample, dict)
        or set(subsample) != {"train", "test"}
        or not all(k is None or (isinstance(k, int) and k > 0) for k in subsample.values())
    ):
        raise ValueError(
            f"{name}: subsample must map 'train' and 'test' to a positive row count or None, got {subsample!r}"
        )
    max_sentences, max_tokens = _cfg(cfg, "max_sentences"), _cfg(cfg, "max_sentence_tokens")
    docs = {
        split: _documents(name, files.find(f"{folder}/{split}.csv"), split, subsample[split], seed)
        for split in ("train", "test")
    }
    train = [d for d in docs["train"] if _within_bounds(d, max_sentences, max_tokens)]
    train, dev = split_off(train, _cfg(cfg, "dev_fraction"), seed, stratify=True)
    return {"train": train, "dev": dev, "test": docs["test"]}
