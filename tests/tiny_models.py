"""Tiny classifiers and random examples shared by the explanation and experiment tests, and the
benchmark whose per-instance reference loops are their oracle."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch

from attnexp.models.flat import FlatClassifier, FlatConfig
from attnexp.models.inputs import Example
from attnexp.models.qa import QAClassifier, QAConfig

ROOT = Path(__file__).resolve().parents[1]
VOCAB = 50


def load_benchmark():
    """benchmarks/jain_wallace_speed.py (not a package: loaded from its path)."""
    spec = importlib.util.spec_from_file_location("jain_wallace_speed", ROOT / "benchmarks" / "jain_wallace_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(encoder="lstm", attention="tanh", n_classes=1):
    torch.manual_seed(0)
    cfg = FlatConfig(vocab_size=VOCAB, n_classes=n_classes, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=8)
    return FlatClassifier(cfg).eval()


def qa(encoder="lstm", attention="tanh", n_classes=3):
    torch.manual_seed(0)
    cfg = QAConfig(vocab_size=VOCAB, n_classes=n_classes, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=8)
    return QAClassifier(cfg).eval()


def random_examples(lengths, seed=0, question=False) -> list[Example]:
    """Word ids >= 4 (never PAD/UNK/SOS/EOS), one sentence each; QA examples carry a question."""
    rng = np.random.RandomState(seed)
    examples = []
    for i, n in enumerate(lengths):
        tokens = rng.randint(4, VOCAB, size=n).astype(np.int64)
        q = rng.randint(4, VOCAB, size=rng.randint(2, 6)).astype(np.int64) if question else None
        examples.append(Example(f"doc{i}", tokens, int(rng.randint(2)), [(0, n)], q))
    return examples
