"""Tiny classifiers and random examples shared by the explanation and experiment tests, and the
benchmark whose per-instance reference loops are their oracle.

Every model is built through `attnexp.models.build_model` from the spec of its name, so it carries
`.spec` like a model restored from a checkpoint."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch

from attnexp.models import build_model
from attnexp.models.flat import FlatConfig
from attnexp.models.hierarchical import HierarchicalConfig
from attnexp.models.inputs import Example
from attnexp.models.qa import QAConfig
from attnexp.models.transformer import TransformerConfig
from attnexp.spec import parse_model_name

ROOT = Path(__file__).resolve().parents[1]
VOCAB = 50


def load_benchmark(name: str = "jain_wallace_speed"):
    """benchmarks/<name>.py (not a package: loaded from its path), whose reference loops are oracles."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(encoder="lstm", attention="tanh", n_classes=1):
    """A flat J&W/W&P classifier; `attention="guided"` gives `{encoder}-guided-lstm-tanh`."""
    name = f"{encoder}-guided-lstm-tanh" if attention == "guided" else f"{encoder}-{attention}"
    spec = parse_model_name(name, "binary" if n_classes == 1 else "multiclass")
    torch.manual_seed(0)
    cfg = FlatConfig(
        vocab_size=VOCAB, n_classes=n_classes, encoder=encoder, attention=spec.attention, embedding_dim=8, hidden_size=8
    )
    return build_model(spec, cfg).eval()


def qa(encoder="lstm", attention="tanh", n_classes=3):
    spec = parse_model_name(f"{encoder}-{attention}", "qa")
    torch.manual_seed(0)
    cfg = QAConfig(
        vocab_size=VOCAB, n_classes=n_classes, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=8
    )
    return build_model(spec, cfg).eval()


def hierarchical(architecture="han", encoder="rnn", n_classes=2, dropout=0.0):
    """A S&S HAN/FLAN classifier (`dropout` > 0 checks that eval mode switches it off)."""
    spec = parse_model_name(f"{architecture}-{encoder}", "binary" if n_classes == 2 else "multiclass")
    torch.manual_seed(0)
    cfg = HierarchicalConfig(
        vocab_size=VOCAB,
        n_classes=n_classes,
        architecture=architecture,
        encoder=encoder,
        embedding_dim=8,
        hidden_size=4,
        conv_input_dropout=dropout,
        dropout_sentence=dropout,
        dropout_document=dropout,
        dropout_output=dropout,
    )
    return build_model(spec, cfg).eval()


def transformer(layers=2, heads=2, n_classes=2, dropout=0.0, max_length=64):
    """The project's small Transformer, shrunk (d 8)."""
    spec = parse_model_name("transformer-cls", "binary" if n_classes == 2 else "multiclass")
    torch.manual_seed(0)
    cfg = TransformerConfig(
        vocab_size=VOCAB,
        n_classes=n_classes,
        layers=layers,
        heads=heads,
        d_model=8,
        ffn=16,
        dropout=dropout,
        max_length=max_length,
    )
    model = build_model(spec, cfg)
    with torch.no_grad():  # GPT-2's N(0, 0.02) makes an untrained model nearly constant: spread it out
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.5)
        model.embedding.weight[0].zero_()
    return model.eval()


def random_examples(lengths, seed=0, question=False) -> list[Example]:
    """Word ids >= 4 (never PAD/UNK/SOS/EOS), one sentence each; QA examples carry a question."""
    rng = np.random.RandomState(seed)
    examples = []
    for i, n in enumerate(lengths):
        tokens = rng.randint(4, VOCAB, size=n).astype(np.int64)
        q = rng.randint(4, VOCAB, size=rng.randint(2, 6)).astype(np.int64) if question else None
        examples.append(Example(f"doc{i}", tokens, int(rng.randint(2)), [(0, n)], q))
    return examples


def random_documents(lengths, seed=0, n_classes=2, question=False, empty_sentence=False, vocab=VOCAB) -> list[Example]:
    """Like `random_examples`, but cut into sentences of 1-4 words (HAN documents with different
    numbers of sentences and of words per sentence). `empty_sentence`: insert an empty sentence
    (dropped by the sentences layout); `question`: QA examples; word ids in 4..vocab-1."""
    rng = np.random.RandomState(seed)
    examples = []
    for i, n in enumerate(lengths):
        tokens = rng.randint(4, vocab, size=n).astype(np.int64)
        cuts, start = [], 0
        while start < n:
            end = min(n, start + rng.randint(1, 5))
            cuts.append((start, end))
            start = end
        if empty_sentence and len(cuts) > 1:
            cuts.insert(1, (cuts[1][0], cuts[1][0]))
        q = rng.randint(4, vocab, size=rng.randint(1, 6)).astype(np.int64) if question else None
        examples.append(Example(f"doc{i}", tokens, int(rng.randint(n_classes)), cuts, q))
    return examples
