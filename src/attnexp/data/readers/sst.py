"""Stanford Sentiment Treebank, binary, as Jain & Wallace built it (`preprocess/SST/SST.ipynb`).

Root label of each PTB tree: neutral (2) dropped, >= 3 -> 1, <= 1 -> 0; official train/dev/test.
Text = the tree's leaves, tokenised (spaCy in the original; `attnexp.data.tokenize` here), with
`-LRB-`/`-RRB-` removed and non-word characters turned into spaces (so "co-writer" -> "co writer",
"'s" -> "s"), exactly as the authors' `sst_dataset.csv` shows.
"""

from __future__ import annotations

import re

from attnexp.data.documents import Document
from attnexp.data.tokenize import tokenize

_ROOT_LABEL = re.compile(r"^\((\d) ")
_LEAF = re.compile(r"\(\d+ ([^()]+)\)")


def parse_tree_line(line: str, where: str) -> tuple[int, list[str]]:
    """(root sentiment 0..4, tokens) of one PTB-format tree."""
    match = _ROOT_LABEL.match(line)
    if match is None:
        raise ValueError(f"{where}: expected a PTB tree starting with '(<label> ', got {line[:40]!r}")
    text = " ".join(_LEAF.findall(line)).replace("-LRB-", " ").replace("-RRB-", " ")
    tokens = [piece for token in tokenize(text) for piece in re.sub(r"\W", " ", token).split()]
    return int(match.group(1)), tokens


def read(files, cfg):
    splits = {}
    for split in ("train", "dev", "test"):
        path = files.find(f"trees/{split}.txt")
        docs = []
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            label, tokens = parse_tree_line(line, f"{path}:{line_no}")
            if label == 2:
                continue
            docs.append(
                Document(
                    id=f"{split}-{line_no:05d}", tokens=tokens, label=int(label >= 3), sentences=[(0, len(tokens))]
                )
            )
        splits[split] = docs
    return splits
