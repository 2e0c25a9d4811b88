"""The worked example of a dataset from your own files (docs/own-data.md): small review tables in CSV
with the columns a user's export might have, string labels and a rationale column.

    python -m attnexp.data.example_reviews examples/reviews

writes `reviews_train.csv` (1,200 rows) and `reviews_test.csv` (300 rows), the same bytes on every
machine. Each review is a few sentences of neutral words with 1-3 sentiment words of its class and, in
30 % of the reviews, fewer words of the other class; the label is the class with more of them, so a
model must weigh the cues, not just spot one. `Key Phrases` marks the words of the review's own class
as `[start, end)` spans over the review's whitespace-separated words: the right answer an explanation
is scored against (the ground-truth table).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

__all__ = ["COLUMNS", "write_example"]

COLUMNS = ["Review ID", "Review Text", "Sentiment", "Key Phrases"]
POSITIVE = [
    "great",
    "excellent",
    "superb",
    "wonderful",
    "delightful",
    "brilliant",
    "charming",
    "gripping",
    "touching",
    "memorable",
]
NEGATIVE = ["awful", "dull", "boring", "tedious", "clumsy", "bland", "dreadful", "lifeless", "tiresome", "forgettable"]
NEUTRAL = (
    "the a an this that film movie story plot cast actor actress director scene scenes script camera music "
    "score ending opening character characters dialogue pace runtime sequel studio screen audience night "
    "evening friend friends family theatre ticket popcorn seat hour hours minute minutes year week "
    "was is were felt seemed looked sounded ran played moved went came watched saw heard kept left made "
    "with about around after before during over under through into from of in on at by for to and but "
    "then also quite rather very just still again later soon mostly often sometimes almost really"
).split()


def _review(rng: np.random.RandomState, index: int, prefix: str) -> list[str]:
    label = int(rng.rand() < 0.5)
    own, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
    n_own = rng.randint(1, 4)
    n_other = rng.randint(1, n_own) if n_own > 1 and rng.rand() < 0.3 else 0
    sentences = [[str(w) for w in rng.choice(NEUTRAL, size=rng.randint(5, 13))] for _ in range(rng.randint(2, 5))]
    # cue words go anywhere but a sentence's last word, which carries the full stop
    slots = [(s, w) for s, words in enumerate(sentences) for w in range(len(words) - 1)]
    chosen = rng.choice(len(slots), size=n_own + n_other, replace=False)
    marked = []
    for k, slot in enumerate(chosen):
        s, w = slots[slot]
        sentences[s][w] = str(rng.choice(own if k < n_own else other))
        if k < n_own:
            marked.append((s, w))
    starts = np.cumsum([0] + [len(words) for words in sentences])
    spans = sorted([int(starts[s] + w), int(starts[s] + w) + 1] for s, w in marked)
    text = " ".join(" ".join(words).capitalize() + "." for words in sentences)
    return [f"{prefix}{index:05d}", text, "positive" if label else "negative", json.dumps(spans)]


def write_example(folder: str | Path, train_rows: int = 1200, test_rows: int = 300, seed: int = 7) -> list[Path]:
    """Write the example's training and test tables into `folder`; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for offset, (split, rows) in enumerate((("train", train_rows), ("test", test_rows))):
        rng = np.random.RandomState(seed + offset)
        path = folder / f"reviews_{split}.csv"
        with open(path, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(COLUMNS)
            writer.writerows(_review(rng, i, f"{split[:2]}-") for i in range(rows))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="where to write reviews_train.csv and reviews_test.csv")
    for path in write_example(parser.parse_args(argv).folder):
        print(path)


if __name__ == "__main__":
    main()
