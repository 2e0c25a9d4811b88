"""Batched input variants: the model's output for many erased copies of many instances.

A variant is an instance (its `owner`) with a set of its attended tokens erased (an (n,) boolean
mask). Leave-one-out is n variants with one token erased each; ERASER comprehensiveness and
sufficiency erase the top-k tokens or all but them. How a token is erased (D-LOO-OP, `op`):

- `delete`: the token is removed and the sequence gets shorter (the J&W code). HAN documents keep
  their sentence structure; a sentence left without tokens disappears.
- `unk`: the token is replaced by `<UNK>`.
- `pad_masked`: the token is replaced by `<PAD>` (a zero embedding) and masked out of the attention
  (token-level layouts only).
- `zero`: the token is replaced by `<PAD>`, whose embedding is the zero vector, and stays in the
  attention (Liu et al. 2022's "zero" operator; a pretrained encoder reads its `[PAD]` piece).
- `attention_mask`: the token stays in the input and gets no attention (Liu et al. 2022's third
  operator; models whose attention over tokens is applied in `decode`: not a HAN's sentences, not the
  Transformer, whose attention runs inside its encoder).

Variants of all instances are sorted by padded length and cut by a token budget, so an instance
costs a share of a few large forward passes instead of one pass per variant. They are built per
batch: all variants of long documents at once would not fit in memory.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from torch import nn

from attnexp.models.inputs import PAD, UNK, Example, collate, sorted_batches
from attnexp.models.outputs import probabilities
from attnexp.runtime import model_device

__all__ = ["ERASE_OPS", "MASKING_OPS", "erased_example", "supports_op", "variant_probabilities"]

ERASE_OPS = ("delete", "unk", "pad_masked", "zero", "attention_mask")
MASKING_OPS = ("pad_masked", "attention_mask")  # the erased tokens are masked out of the attention


def _check(op: str, layout: str) -> None:
    if op not in ERASE_OPS:
        raise ValueError(f"the erase operation must be one of {ERASE_OPS}, got {op!r}")
    if op in MASKING_OPS and layout == "sentences":
        raise ValueError(f"{op} erasure is defined for token-level layouts, not HAN's `sentences`")


def supports_op(spec, op: str) -> bool:
    """Whether a model (its `ModelSpec`) can have tokens erased by `op`: the masking operators need
    attention over tokens applied in `decode` (not a HAN, whose attention is over sentences, and not a
    model with self-attention, whose attention is computed inside its encoder)."""
    if op not in ERASE_OPS:
        raise ValueError(f"the erase operation must be one of {ERASE_OPS}, got {op!r}")
    return op not in MASKING_OPS or (spec.layout != "sentences" and not spec.self_attention)


def erased_example(example: Example, erase: np.ndarray, op: str) -> Example:
    """The example with the tokens where `erase` (n,) is True left out (`op`)."""
    erase = np.asarray(erase, dtype=bool)
    if erase.shape != example.tokens.shape:
        raise ValueError(
            f"instance {example.id!r}: an erase mask of shape {erase.shape} for {len(example.tokens)} tokens"
        )
    if op == "attention_mask":  # the input is unchanged: the tokens lose their attention in `variant_probabilities`
        return example
    if op != "delete":
        tokens = example.tokens.copy()
        tokens[erase] = UNK if op == "unk" else PAD
        return replace(example, tokens=tokens)
    kept = np.cumsum(~erase)  # kept tokens up to and including each position
    starts = np.concatenate([[0], kept])  # new index of each old position
    sentences = [(int(starts[a]), int(starts[b])) for a, b in example.sentences]
    return replace(example, tokens=example.tokens[~erase], sentences=sentences)


def _variant_length(example: Example, erase: np.ndarray, op: str, layout: str) -> int:
    """The padded length of a variant, without building it (the batching key)."""
    if op != "delete":
        return example.length(layout)
    if layout == "sentences":
        spans = [int((~erase[a:b]).sum()) for a, b in example.sentences if b > a]
        spans = [s for s in spans if s]
        return len(spans) * max(spans, default=0)
    return int((~erase).sum()) + (2 if layout == "sos_eos" else 0)


@torch.no_grad()
def variant_probabilities(
    model: nn.Module,
    examples: list[Example],
    owners: np.ndarray,
    erase: list[np.ndarray],
    op: str = "delete",
    max_tokens: int = 20_000,
) -> np.ndarray:
    """owners (V,) instance index of each variant, erase: V masks (n_owner,) -> class probabilities
    (V, C) of the erased inputs, in the variants' order. The model must be in eval mode."""
    _check(op, model.layout)
    owners = np.asarray(owners)
    if len(owners) != len(erase):
        raise ValueError(f"{len(owners)} variant owners for {len(erase)} erase masks")
    if len(owners) == 0:  # the number of classes C would be unknown: callers skip instances with nothing to erase
        raise ValueError("no variants to run: every instance was left out (no tokens, or too few units)")
    if op == "delete" and model.layout != "sos_eos":  # <SOS>/<EOS> keep a J&W input non-empty; nothing else does
        for o, m in zip(owners, erase):
            if np.all(m):
                raise ValueError(
                    f"instance {examples[o].id!r}: deleting all of its {len(m)} tokens leaves nothing for a "
                    f"{model.layout!r}-layout model to encode (erase fewer, or use op 'unk')"
                )
    lengths = np.array([_variant_length(examples[o], m, op, model.layout) for o, m in zip(owners, erase)])
    device = model_device(model)
    out = None
    for indices in sorted_batches(lengths, batch_size=len(owners), max_tokens=max_tokens):
        batch = collate([erased_example(examples[owners[i]], erase[i], op) for i in indices], model.layout).to(device)
        encoded = model.encode(batch)
        if op in MASKING_OPS:  # the erased tokens get no attention (after <SOS> in `sos_eos`)
            if encoded.heads is not None:
                raise ValueError(
                    f"op {op!r} is not defined for the Transformer: its attention is computed inside encode (use 'delete', 'unk' or 'zero')"
                )
            offset = 1 if model.layout == "sos_eos" else 0
            mask = encoded.mask.clone()
            for row, i in enumerate(indices):
                mask[row, torch.from_numpy(np.flatnonzero(erase[i]) + offset).to(device)] = False
            encoded = encoded._replace(mask=mask)
        logits, _ = model.decode(encoded)
        probs = probabilities(logits).cpu().numpy()
        if out is None:
            out = np.empty((len(owners), probs.shape[1]), dtype=probs.dtype)
        out[indices] = probs
    return out
