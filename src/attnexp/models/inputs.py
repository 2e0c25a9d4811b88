"""From preprocessed records to model inputs: vocabulary ids, padded batches, length buckets.

Three layouts, one per model family (each model class names its `layout`):

- `sos_eos` (J&W flat and QA models): `<SOS> w_1 .. w_n <EOS>`, padded; attention over w_1..w_n.
- `tokens` (S&S FLAN): `w_1 .. w_n`, padded; attention over every present token.
- `sentences` (S&S HAN): (documents, sentences, words), padded on both axes; attention over sentences.

A `Batch` carries instance ids, so anything stored per instance (attention for guided models,
explanations) is matched by id and length, never inferred from zeros (D-ALIGN).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import torch

__all__ = [
    "PAD",
    "UNK",
    "SOS",
    "EOS",
    "LAYOUTS",
    "Example",
    "Batch",
    "Encoded",
    "to_examples",
    "collate",
    "length_bucketed_batches",
    "sorted_batches",
]

PAD, UNK, SOS, EOS = 0, 1, 2, 3
LAYOUTS = ("sos_eos", "tokens", "sentences")


class Encoded(NamedTuple):
    """What `encode` returns and `decode` consumes: the states of the attended items (B, L, H) and
    their mask (B, L); the other fields are a family's own (None elsewhere)."""

    hidden: torch.Tensor
    mask: torch.Tensor
    query: torch.Tensor | None = None  # (B, H) a QA/NLI model's question/hypothesis summary
    heads: torch.Tensor | None = None  # (B, H, L) the Transformer's own per-head readout attention
    residual: torch.Tensor | None = None  # (B, d) the Transformer's `[CLS]` residual stream


@dataclass
class Example:
    id: str
    tokens: np.ndarray  # (n,) word ids, no SOS/EOS
    label: int
    sentences: list[tuple[int, int]]
    question: np.ndarray | None = None

    def length(self, layout: str) -> int:
        """What a batch pads per instance: positions (sos_eos, tokens), or sentences x longest
        sentence (sentences); the bucketing key and the S&S padded-token cap use it."""
        if layout == "sentences":
            spans = [b - a for a, b in self.sentences if b > a]
            return len(spans) * max(spans, default=0)
        return len(self.tokens) + (2 if layout == "sos_eos" else 0)


@dataclass
class Batch:
    ids: list[str]
    tokens: torch.Tensor  # (B, L); `sentences` layout: (B, S, W)
    lengths: torch.Tensor  # (B,) positions incl. SOS/EOS; `sentences`: sentences per document
    labels: torch.Tensor  # (B,)
    sentence_lengths: torch.Tensor | None = None  # (B, S) words per sentence, 0 = absent
    question: torch.Tensor | None = None  # (B, Lq) `<SOS> q.. <EOS>`
    question_lengths: torch.Tensor | None = None  # (B,)
    guide: torch.Tensor | None = (
        None  # (B, L) another model's attention: imposed (guided models), diverged from (W&P's adversary)
    )
    extra: dict = field(default_factory=dict)

    def to(self, device: torch.device) -> Batch:
        moved = {k: v.to(device) for k, v in vars(self).items() if isinstance(v, torch.Tensor)}
        return replace(self, **moved)

    def __len__(self) -> int:
        return len(self.ids)


def to_examples(records: list[dict], vocab: list[str], classes: list) -> list[Example]:
    """Map words to ids (unknown -> `<UNK>`) and labels to class indices."""
    index = {w: i for i, w in enumerate(vocab)}
    class_index = {c: i for i, c in enumerate(classes)}
    examples = []
    for r in records:
        if r["label"] not in class_index:
            raise ValueError(f"instance {r['id']!r}: label {r['label']!r} is not one of the training labels {classes}")
        ids = np.array([index.get(w, UNK) for w in r["tokens"]], dtype=np.int64)
        question = (
            None if r.get("question") is None else np.array([index.get(w, UNK) for w in r["question"]], dtype=np.int64)
        )
        examples.append(Example(r["id"], ids, class_index[r["label"]], [tuple(s) for s in r["sentences"]], question))
    return examples


def _pad_sos_eos(sequences: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = [len(s) + 2 for s in sequences]
    tokens = np.zeros((len(sequences), max(lengths)), dtype=np.int64)
    for row, seq in zip(tokens, sequences):
        row[0], row[1 : len(seq) + 1], row[len(seq) + 1] = SOS, seq, EOS
    return torch.from_numpy(tokens), torch.tensor(lengths)


def _pad(sequences: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = [len(s) for s in sequences]
    tokens = np.zeros((len(sequences), max(lengths)), dtype=np.int64)
    for row, seq in zip(tokens, sequences):
        row[: len(seq)] = seq
    return torch.from_numpy(tokens), torch.tensor(lengths)


def _pad_sentences(examples: list[Example]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    spans = [[(a, b) for a, b in e.sentences if b > a] for e in examples]  # S&S drop empty sentences
    if any(not s for s in spans):
        raise ValueError("a document has no non-empty sentence")
    S = max(len(s) for s in spans)
    W = max(b - a for s in spans for a, b in s)
    tokens = np.zeros((len(examples), S, W), dtype=np.int64)
    sentence_lengths = np.zeros((len(examples), S), dtype=np.int64)
    for i, (e, doc) in enumerate(zip(examples, spans)):
        for j, (a, b) in enumerate(doc):
            tokens[i, j, : b - a] = e.tokens[a:b]
            sentence_lengths[i, j] = b - a
    return torch.from_numpy(tokens), torch.tensor([len(s) for s in spans]), torch.from_numpy(sentence_lengths)


def collate(examples: list[Example], layout: str, guides: dict[str, np.ndarray] | None = None) -> Batch:
    """Pad a list of examples into a Batch. `guides`: imposed attention per id over w_1..w_n."""
    ids = [e.id for e in examples]
    labels = torch.tensor([e.label for e in examples])
    if layout == "sentences":
        tokens, lengths, sentence_lengths = _pad_sentences(examples)
        return Batch(ids, tokens, lengths, labels, sentence_lengths=sentence_lengths)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}: expected one of {LAYOUTS}")
    pad = _pad_sos_eos if layout == "sos_eos" else _pad
    tokens, lengths = pad([e.tokens for e in examples])
    batch = Batch(ids, tokens, lengths, labels)
    if examples[0].question is not None:
        batch.question, batch.question_lengths = _pad_sos_eos([e.question for e in examples])
    if guides is not None:
        offset = 1 if layout == "sos_eos" else 0
        guide = torch.zeros(tokens.shape, dtype=torch.float32)
        for row, e in zip(guide, examples):
            weights = guides[e.id]
            if len(weights) != len(e.tokens):  # D-ALIGN: lengths are checked, never inferred
                raise ValueError(
                    f"guide attention for {e.id!r} has {len(weights)} weights, the instance has {len(e.tokens)} tokens"
                )
            row[offset : offset + len(weights)] = torch.from_numpy(np.asarray(weights, dtype=np.float32))
        batch.guide = guide
    return batch


def length_bucketed_batches(
    lengths: np.ndarray, batch_size: int, rng: np.random.RandomState, noise: float = 0.1, max_tokens: int | None = None
) -> list[np.ndarray]:
    """Training batches (J&W §3): order by length perturbed by ±`noise` relative noise, cut into
    batches of `batch_size` (and of at most `max_tokens` padded positions, the S&S cap), shuffle the
    batch order. Neighbours have similar lengths, so padding stays a small share of the computation."""
    lengths = np.asarray(lengths, dtype=np.float64)
    jittered = lengths * (1 + rng.uniform(-noise, noise, size=len(lengths)))
    order = np.argsort(jittered, kind="stable")
    batches = _cut(order, lengths, batch_size, max_tokens)
    return [batches[i] for i in rng.permutation(len(batches))]


def sorted_batches(lengths: np.ndarray, batch_size: int, max_tokens: int | None = None) -> list[np.ndarray]:
    """Evaluation batches: sorted by length, in order (J&W: dev/test sorted by length)."""
    lengths = np.asarray(lengths)
    return _cut(np.argsort(lengths, kind="stable"), lengths, batch_size, max_tokens)


def _cut(order: np.ndarray, lengths: np.ndarray, batch_size: int, max_tokens: int | None) -> list[np.ndarray]:
    batches, current, longest = [], [], 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        too_many_tokens = max_tokens is not None and current and longest_if_added * (len(current) + 1) > max_tokens
        if len(current) == batch_size or too_many_tokens:
            batches.append(np.array(current))
            current, longest_if_added = [], lengths[i]
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(np.array(current))
    return batches
