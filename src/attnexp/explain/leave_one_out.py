"""Leave-one-out importance (Jain & Wallace §5.2): remove token t, re-run the full model, and score
s^loo_t = TVD(p(x₋t), p(x)), which is |ŷ(x₋t) − ŷ(x)| for BC.

How a token is left out (D-LOO-OP, `loo_op`):
- `delete` (default, the J&W code): the sequence becomes one token shorter; SOS/EOS are kept.
- `unk`: the token is replaced by `<UNK>`.
- `pad_masked`: the token is replaced by `<PAD>` (a zero embedding) and masked out of the attention.

All n variants of every instance are batched together (sorted by length, cut by a token budget), so
an instance costs a share of a few large forward passes instead of n passes of batch size one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from torch import nn

from attnexp.metrics import tvd
from attnexp.models.inputs import PAD, UNK, Example, collate, sorted_batches
from attnexp.train import probabilities

__all__ = ["LOO_OPS", "leave_one_out", "without_token"]

LOO_OPS = ("delete", "unk", "pad_masked")


def without_token(example: Example, t: int, op: str) -> Example:
    """The example with real token t (0-based over w_1..w_n) left out."""
    if op == "delete":
        return replace(example, tokens=np.delete(example.tokens, t))
    tokens = example.tokens.copy()
    tokens[t] = UNK if op == "unk" else PAD
    return replace(example, tokens=tokens)


@torch.no_grad()
def leave_one_out(
    model: nn.Module, examples: list[Example], probs: np.ndarray, op: str = "delete", max_tokens: int = 20_000
) -> list[np.ndarray]:
    """examples (N) of a `sos_eos` model with their full-input class probabilities (N, C) -> per
    instance the (n,) output changes, in the examples' order."""
    if op not in LOO_OPS:
        raise ValueError(f"loo_op must be one of {LOO_OPS}, got {op!r}")
    if model.layout != "sos_eos":
        raise ValueError(f"leave-one-out is defined over real tokens of `sos_eos` models, not {model.layout!r}")
    owner = np.concatenate([np.full(len(e.tokens), i) for i, e in enumerate(examples)])  # (V,) instance
    position = np.concatenate([np.arange(len(e.tokens)) for e in examples])  # (V,) left-out token
    shortening = 1 if op == "delete" else 0
    lengths = np.array([len(examples[i].tokens) + 2 - shortening for i in owner])  # (V,) with SOS/EOS
    changes = np.empty(len(owner), dtype=np.float32)
    for indices in sorted_batches(lengths, batch_size=len(owner), max_tokens=max_tokens):
        # variants are built per batch: all n of them for long documents would not fit in memory
        batch = collate([without_token(examples[owner[i]], position[i], op) for i in indices], model.layout)
        encoded = model.encode(batch)
        if op == "pad_masked":  # the PAD stand-in gets no attention: position t + 1 after SOS
            rows = torch.arange(len(indices))
            mask = encoded.mask.clone()
            mask[rows, torch.from_numpy(position[indices] + 1)] = False
            encoded = encoded._replace(mask=mask)
        logits, _ = model.decode(encoded)
        full = torch.from_numpy(probs[owner[indices]]).to(logits.dtype)  # (b, C)
        changes[indices] = tvd(probabilities(logits), full).numpy()
    starts = np.cumsum([0] + [len(e.tokens) for e in examples])
    return [changes[a:b] for a, b in zip(starts[:-1], starts[1:])]
