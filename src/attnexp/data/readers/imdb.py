"""IMDB reviews from aclImdb (Maas et al. 2011).

Binary (Jain & Wallace, D-IMDB): the authors read Keras' pre-tokenised `imdb_full.pkl`, which cannot be
obtained; aclImdb holds the same 50k labelled reviews as raw text. `<br />` is stripped, the text
tokenised, and only reviews with < 400 word tokens are kept, counting tokens that contain a letter or
digit (the Keras word index has no punctuation). Train -> 80/20 train/dev, test = a random 20 % of
the short test reviews (both random_state 1378 in the original).

Ratings (Serrano & Smith's 10-class IMDB is not public, D-SS-IMDB): `imdb_ratings` uses the aclImdb
ratings as 8 classes (1-4 -> 0-3, 7-10 -> 4-7), all 50k reviews pooled, random 80/10/10 (seed 5).
"""

from __future__ import annotations

import re

from attnexp.data.documents import Document, split_off

_FILE_NAME = re.compile(r"^(\d+)_(\d+)\.txt$")
_RATING_CLASS = {1: 0, 2: 1, 3: 2, 4: 3, 7: 4, 8: 5, 9: 6, 10: 7}


def _reviews(files, split: str):
    """(id, rating, polarity, text) of every labelled review of an aclImdb split, in id order."""
    out = []
    for polarity in ("neg", "pos"):
        paths = files.glob(f"aclImdb/{split}/{polarity}/*.txt")
        if not paths:
            raise FileNotFoundError(f"no reviews under aclImdb/{split}/{polarity}/ in the IMDB sources")
        for path in paths:
            match = _FILE_NAME.match(path.name)
            if match is None:
                raise ValueError(f"{path}: expected a file name <id>_<rating>.txt")
            review_id, rating = int(match.group(1)), int(match.group(2))
            text = path.read_text(encoding="utf-8").replace("<br />", " ")
            out.append((f"{split}/{polarity}/{review_id}", review_id, rating, int(polarity == "pos"), text))
    out.sort(key=lambda r: (r[3], r[1]))
    return out


def _word_count(tokens: list[str]) -> int:
    return sum(any(ch.isalnum() for ch in token) for token in tokens)


def read(files, cfg):
    max_words = cfg["max_word_tokens"]
    short = {}
    for split in ("train", "test"):
        docs = [Document.from_text(doc_id, text, polarity) for doc_id, _, _, polarity, text in _reviews(files, split)]
        short[split] = [d for d in docs if _word_count(d.tokens) < max_words]
    train, dev = split_off(short["train"], cfg["dev_fraction"], cfg["split_seed"])
    _, test = split_off(short["test"], cfg["test_fraction"], cfg["split_seed"])
    return {"train": train, "dev": dev, "test": test}


def read_ratings(files, cfg):
    docs = [
        Document.from_text(doc_id, text, _RATING_CLASS[rating])
        for split in ("train", "test")
        for doc_id, _, rating, _, text in _reviews(files, split)
    ]
    rest, test = split_off(docs, cfg["test_fraction"], cfg["split_seed"])
    train, dev = split_off(rest, cfg["dev_fraction"] / (1 - cfg["test_fraction"]), cfg["split_seed"])
    return {"train": train, "dev": dev, "test": test}
