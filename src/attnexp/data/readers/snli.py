"""SNLI 1.0 (Bowman et al. 2015): premise = the attended passage, hypothesis = the question.

Gold label "-" (no annotator consensus) dropped; labels by sorted name: 0 contradiction, 1 entailment,
2 neutral (D-SNLI); official splits.

Without the training file (the offline mirror holds the archive's canonical dev and test members
only, D-DATA), train and dev are carved from the canonical dev file, stratified by label
(`substitute_dev_fraction` of it is dev), and test is the canonical test file: a labelled stand-in
for training, evaluated on the real test set; `stats.json` flags the substitute files.
"""

from __future__ import annotations

import json

from attnexp.data.documents import Document, split_off

LABELS = {"contradiction": 0, "entailment": 1, "neutral": 2}


def _pairs(path, split):
    docs = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                gold, premise, hypothesis = record["gold_label"], record["sentence1"], record["sentence2"]
            except (json.JSONDecodeError, KeyError) as err:
                raise ValueError(
                    f"{path}:{line_no}: expected a JSON record with gold_label, sentence1, sentence2 ({err})"
                ) from None
            if gold == "-":
                continue
            if gold not in LABELS:
                raise ValueError(
                    f"{path}:{line_no}: unknown gold_label {gold!r}; expected one of {sorted(LABELS)} or '-'"
                )
            docs.append(Document.from_text(f"{split}-{line_no:06d}", premise, LABELS[gold], question=hypothesis))
    return docs


def read(files, cfg):
    dev = _pairs(files.find("snli_1.0_dev.jsonl"), "dev")
    test = _pairs(files.find("snli_1.0_test.jsonl"), "test")
    train_path = files.find("snli_1.0_train.jsonl", required=False)
    if train_path is not None:
        return {"train": _pairs(train_path, "train"), "dev": dev, "test": test}
    train, dev = split_off(dev, cfg["substitute_dev_fraction"], cfg["split_seed"])
    return {"train": train, "dev": dev, "test": test}
