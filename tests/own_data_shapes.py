"""Generated datasets of your own of awkward shapes, and the config overlay that runs every paper's stage
on all of them at once (tests/workflow/test_own_data_shapes.py).

Each shape is a small CSV table (train and test; dev is split off) whose label a model can learn from cue
words, so training succeeds in a few epochs; what varies is what the stages meet:

- `one_sentence`: no sentence punctuation, so every document is one sentence (HAN has one item to erase)
- `one_token`: every document is a single word (no model has two items to erase or permute)
- `long`: documents of 300-600 tokens in many sentences
- `many_classes`: a multiclass task of 12 classes (W&P and the ground-truth table need binary: left out)
- `unbalanced`: a binary task with 1 positive in 20
- `unicode`: accented, Cyrillic, Greek, CJK and emoji words, and labels that are not ASCII
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

__all__ = ["SHAPES", "write_shapes", "shapes_overlay"]

SHAPES = ("one_sentence", "one_token", "long", "many_classes", "unbalanced", "unicode")

NEUTRAL = "the a film story plot cast scene music ending night friend ticket seat hour was felt with about after during and but then quite very".split()
UNICODE_NEUTRAL = "café naïve façade déjà straße ёлка мир κόσμος 東京 映画 日本語 🙂 🎬 ñandú zoë œuvre".split()
CUES = {
    "binary": (["awful", "dull", "bland"], ["great", "superb", "lovely"]),
    "unicode": (["mauvais", "плохо", "😞"], ["très_bien", "хорошо", "😀"]),
}
CLASSES_MANY = [f"topic{k:02d}" for k in range(12)]


def _sentences(
    rng: np.random.RandomState, words: list[str], cue: str, n_words: int, punctuated: bool
) -> tuple[str, int]:
    """A text of `n_words` words with `cue` at a random word position (returned), in sentences of 5-12
    words ending with a full stop when `punctuated`, else one run of lower-case words."""
    tokens = [str(w) for w in rng.choice(words, size=n_words)]
    at = int(rng.randint(n_words))
    tokens[at] = cue
    if not punctuated:
        return " ".join(tokens), at
    out, start = [], 0
    while start < n_words:
        end = min(n_words, start + int(rng.randint(5, 13)))
        out.append(" ".join(tokens[start:end]).capitalize() + ".")
        start = end
    return " ".join(out), at


def _row(shape: str, rng: np.random.RandomState) -> tuple[str, str, str]:
    """(text, label, rationale as JSON spans over the text's words) of one row of a shape."""
    if shape == "many_classes":
        k = int(rng.randint(len(CLASSES_MANY)))
        text, at = _sentences(rng, NEUTRAL, f"cue{k:02d}", int(rng.randint(6, 20)), True)
        return text, CLASSES_MANY[k], json.dumps([[at, at + 1]])
    positive = rng.rand() < (0.05 if shape == "unbalanced" else 0.5)
    negative_cues, positive_cues = CUES["unicode" if shape == "unicode" else "binary"]
    cue = str(rng.choice(positive_cues if positive else negative_cues))
    label = ("bien ✓" if positive else "mal ✗") if shape == "unicode" else ("positive" if positive else "negative")
    if shape == "one_token":
        return cue, label, json.dumps([[0, 1]])
    words = UNICODE_NEUTRAL if shape == "unicode" else NEUTRAL
    n_words = int(rng.randint(300, 600)) if shape == "long" else int(rng.randint(6, 20))
    text, at = _sentences(rng, words, cue, n_words, punctuated=shape != "one_sentence")
    return text, label, json.dumps([[at, at + 1]])


SIZES = {"long": (80, 24)}  # rows of (train, test); every other shape: DEFAULT_SIZE
DEFAULT_SIZE = (240, 40)


def write_shapes(folder: str | Path, seed: int = 3) -> dict[str, dict[str, Path]]:
    """Write `<shape>_train.csv` and `<shape>_test.csv` of every shape into `folder` -> shape -> paths.
    The unbalanced test table gets at least two positives (the test split's ROC-AUC needs both classes)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for s, shape in enumerate(SHAPES):
        paths[shape] = {}
        for offset, split in enumerate(("train", "test")):
            rng = np.random.RandomState([seed, s, offset])
            n = SIZES.get(shape, DEFAULT_SIZE)[offset]
            rows = [_row(shape, rng) for _ in range(n)]
            if shape == "unbalanced":  # a handful of positives, wherever the draw put them
                rows[:2] = [(f"the plot was {w} then", "positive", json.dumps([[3, 4]])) for w in ("great", "superb")]
            path = folder / f"{shape}_{split}.csv"
            with open(path, "w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(["id", "text", "label", "rationale"])
                writer.writerows([f"{split}-{i:04d}", *row] for i, row in enumerate(rows))
            paths[shape][split] = path
    return paths


# What keeps the run small: the Transformer (and so attention attribution) where its stage meets an edge
# (no example for the attribution graphs: one-token and long documents), W&P's full stage where its
# example and F1 meet one (one token, few positives) and its Table 2 elsewhere
TRANSFORMER = {"one_token": ["transformer-cls"], "long": ["transformer-cls"]}
WP_TABLE2_ONLY = ["one_sentence", "long", "unicode"]


def shapes_overlay(paths: dict[str, dict[str, Path]]) -> dict:
    """The config overlay that runs every paper's stage on every shape with tiny models and few epochs:
    a BiLSTM and a HAN on each (J&W, S&S, faithfulness, W&P's base), the Transformer on two."""
    small = {
        "jain_wallace": {"epochs": 3, "hidden_size": 16, "embedding_dim": 16},
        "serrano_smith": {"epochs": 3, "hidden_size": 8, "embedding_dim": 16, "lr": 5.0e-3, "patience": None},
        "transformer": {
            "epochs": 3,
            "hidden_size": 16,
            "embedding_dim": 16,
            "transformer": {"layers": 1, "heads": 2, "ffn": 32, "dropout": 0.1, "max_length": 64},
        },
    }
    datasets = {
        shape: {
            "enabled": True,
            "protocol": "jain_wallace",
            "task": "multiclass" if shape == "many_classes" else "binary",
            "files": {
                "train": str(paths[shape]["train"]),
                "test": str(paths[shape]["test"]),
                "text": "text",
                "label": "label",
                "id": "id",
                # the ground-truth table scores binary tasks only
                "rationale": None if shape == "many_classes" else "rationale",
            },
            "min_count": 1,
            "length_filter": None,
            "split_seed": 1,
            "dev_fraction": 0.2,
            "vectors": "random",
            "models": ["lstm-tanh", "han-rnn", *TRANSFORMER.get(shape, [])],
            "train": small,
        }
        for shape in paths
    }
    return {
        "datasets_enabled": list(paths),
        "datasets": datasets,
        "train": {"threads": 1, "seeds": [10], "select_on": "dev"},
        "jain_wallace": {"datasets": None, "models": None, "permutations": 10, "adversary": {"steps": 20}},
        "serrano_smith": {"datasets": None, "models": None, "left_out": {"imdb_ratings": []}, "permutations": 2},
        "wiegreffe_pinter": {
            "datasets": None,
            "models": ["lstm-tanh"],
            "table2_only": [shape for shape in WP_TABLE2_ONLY if shape in paths],
            "seeds": [50],
            "adversary": {"lambdas": [1.0], "table_lambda": 1.0, "epochs": 2, "patience": 1},
        },
        "faithfulness": {
            "datasets": None,
            "models": ["lstm-tanh", "han-rnn", "transformer-cls"],
            "max_instances": 10,
            "random_rankings": 2,
        },
        "attention_attribution": {
            "datasets": None,
            "importance_examples": 10,
            "fractions": [0.0, 0.5, 1.0],
            "graph_examples": 1,
            "random_orders": 2,
        },
        "explain": {"ig_steps": 10, "ig_max_steps": 20, "together": ["attention", "gradient", "loo", "ig"]},
    }
