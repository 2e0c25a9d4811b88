"""AG News (Zhang et al. 2015 CSV), binary as in Jain & Wallace: class 1 World = 0 vs class 3
Business = 1; text = the description column only; official train/test; dev = 15 % of train
(random_state 16377). The CSVs have no header: class index (1-4), title, description."""

from __future__ import annotations

import csv

from attnexp.data.documents import Document, split_off

CLASSES = {"1": 0, "3": 1}  # World, Business


def _rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        for row_no, row in enumerate(csv.reader(f), 1):
            if len(row) != 3:
                raise ValueError(f"{path}:{row_no}: expected 3 columns (class, title, description), got {len(row)}")
            yield row_no, row


def _documents(path, split):
    return [
        Document.from_text(f"{split}-{row_no:06d}", description, CLASSES[label])
        for row_no, (label, _title, description) in _rows(path)
        if label in CLASSES
    ]


def read(files, cfg):
    # The mirror's stand-in for train.csv is its first 581 rows (a labelled substitute, D-DATA).
    train_path = files.find("train.csv", required=False) or files.find("train.first581rows.csv")
    train, dev = split_off(_documents(train_path, "train"), cfg["dev_fraction"], cfg["split_seed"])
    return {"train": train, "dev": dev, "test": _documents(files.find("test.csv"), "test")}
