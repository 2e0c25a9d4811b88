"""Cached encoder states, for any model layout: the one forward pass every attention experiment
starts from.

`cached_batches` runs `encode` once per batch of test instances (sorted by padded length, cut by a
token budget) and yields the states of the attended items with the model's own attention, logits
and probabilities. The attended items are tokens for flat, QA/NLI and FLAN models and sentences for
HAN models (`spec.attended`); `encoded.mask` marks them. Every manipulation after that — permutation,
adversarial search, erasure, removal until the decision flips — re-runs only `decode`.

Attention with a head axis. The experiments manipulate the *readout attention*: the distributions
the output is computed from, one per head, (B, H, L). Recurrent, HAN/FLAN and QA models have one
(H = 1: `CachedBatch.heads` is their α̂ with a unit axis); the Transformer's `[CLS]` readout has one
per head, and its reported attention α̂ is their mean. Imposing each head's own weights gives the
model's own output back for every model (`decode_heads`), so a manipulation of the readout attention
is compared with the model's actual output, never with an approximation of it.

`readout(model, encoded)` is the decode the experiments call for many attention variants. For models
whose output layer is linear in the attention (`spec.linear_readout`), `Readout` projects the cached
states through it once: logits(α′) = Σ_i α′_i (W h_i) + b, so a decode over many attention variants
costs C numbers per item instead of H. Other models (QA/NLI, the Transformer) get `DecodedReadout`,
which re-runs `decode` on the variants.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from attnexp.models.inputs import Encoded, Example, collate, sorted_batches
from attnexp.models.outputs import probabilities
from attnexp.runtime import model_device

__all__ = ["CachedBatch", "cached_batches", "real_positions", "decode_heads", "Readout", "DecodedReadout", "readout"]


class CachedBatch(NamedTuple):
    indices: np.ndarray  # (B,) positions of the batch's instances in the examples list
    encoded: Encoded  # hidden (B, L, H), mask (B, L) over the attended items
    attention: torch.Tensor  # (B, L) the model's own α̂, exact zeros off the mask
    logits: torch.Tensor  # (B, C)
    probs: torch.Tensor  # (B, C)

    @property
    def heads(self) -> torch.Tensor:
        """(B, H, L) the readout attention per head: the Transformer's own heads, else α̂ as H = 1."""
        return self.attention[:, None] if self.encoded.heads is None else self.encoded.heads

    @property
    def lengths(self) -> list[int]:
        """Attended items per instance (n)."""
        return self.encoded.mask.sum(dim=1).tolist()


@torch.no_grad()
def cached_batches(model: nn.Module, examples: list[Example], max_tokens: int) -> Iterator[CachedBatch]:
    """Length-sorted batches of at most `max_tokens` padded positions (the layout's own measure:
    tokens, or sentences x longest sentence for HAN) -> one CachedBatch each, model in eval mode, its
    tensors on the model's device."""
    model.eval()
    device = model_device(model)
    lengths = np.array([e.length(model.layout) for e in examples])
    for indices in sorted_batches(lengths, batch_size=len(examples), max_tokens=max_tokens):
        encoded = model.encode(collate([examples[i] for i in indices], model.layout).to(device))
        logits, attention = model.decode(encoded)
        yield CachedBatch(indices, encoded, attention, logits, probabilities(logits))


def real_positions(mask: torch.Tensor) -> list[torch.Tensor]:
    """(B, L) mask -> per instance the positions of its attended items."""
    return [row.nonzero().squeeze(-1) for row in mask]


def decode_heads(model: nn.Module, encoded: Encoded, heads: torch.Tensor) -> torch.Tensor:
    """heads (..., B, H, L): readout attention per head imposed -> logits (..., B, C). H = 1 for
    models with one distribution; the Transformer's `H` heads each get their own."""
    if encoded.heads is None:
        if heads.shape[-2] != 1:
            raise ValueError(
                f"model {model.spec.name!r} reads out one attention distribution, got {heads.shape[-2]} heads"
            )
        logits, _ = model.decode(encoded, heads.squeeze(-2))
    else:
        logits, _ = model.decode(encoded._replace(heads=heads))
    return logits


class Readout(NamedTuple):
    """The output layer applied to each cached item: logits(α′) = Σ_i α′_i values_i + bias."""

    values: torch.Tensor  # (B, L, C) W h_i
    bias: torch.Tensor  # (C,)
    linear = True

    def logits(self, heads: torch.Tensor) -> torch.Tensor:
        """heads (..., B, 1, L) -> logits (..., B, C); leading axes broadcast."""
        weights = heads.squeeze(-2)  # (..., B, L)
        if self.values.shape[-1] <= 4:  # a few classes: one fused multiply-sum beats B tiny matrix products
            return (weights[..., None] * self.values).sum(dim=-2) + self.bias
        return torch.einsum("...bl,blc->...bc", weights, self.values) + self.bias


class DecodedReadout(NamedTuple):
    """`decode` re-run on each attention variant, for outputs not linear in the attention."""

    model: nn.Module
    encoded: Encoded
    linear = False

    def logits(self, heads: torch.Tensor) -> torch.Tensor:
        """heads (..., B, H, L) -> logits (..., B, C)."""
        return decode_heads(self.model, self.encoded, heads)


def readout(model: nn.Module, encoded: Encoded) -> Readout | DecodedReadout:
    """The projected output layer of a linear readout (flat and HAN/FLAN classifiers), else decode."""
    if not model.spec.linear_readout:
        return DecodedReadout(model, encoded)
    with torch.no_grad():
        values = encoded.hidden @ model.decoder.weight.T  # (B, L, C)
    return Readout(values, model.decoder.bias.detach())
