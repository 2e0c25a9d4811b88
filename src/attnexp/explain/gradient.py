"""Gradient importance (Jain & Wallace §5.1).

g_t = Σ_d e_{t,d} · ∂ŷ/∂e_{t,d} with the attention weights held constant (stop-gradient on α; the
gradient still flows through h_t into the context). This is the derivative with respect to the
one-hot input at the observed word; the importance is s^g_t = |g_t|. ŷ is the probability of the
predicted class: for BC |∂(1 − ŷ)| = |∂ŷ|, so this equals J&W's P(y = 1) scores, and for QA/NLI it is
their max_c softmax_c. Gradients are over the attended (passage/premise) embeddings only. For the
Transformer the held-constant attention is its `[CLS]` readout's, head by head; the self-attention of
the layers below stays differentiable (it is part of how h_t is computed).
"""

from __future__ import annotations

import torch
from torch import nn

from attnexp.models.inputs import Batch
from attnexp.models.outputs import class_probability, predicted_class

__all__ = ["gradient_importance", "gradient_and_mask"]


def gradient_importance(model: nn.Module, batch: Batch) -> torch.Tensor:
    """-> signed g (B, L); zero at SOS/EOS/PAD is not guaranteed, read it through the model's mask.
    The model must be in eval mode (J&W never switch to train mode for attribution)."""
    return gradient_and_mask(model, batch)[0]


def gradient_and_mask(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """-> (signed g (B, L), the model's mask (B, L) over the attended tokens), from one forward pass:
    a job that explains by gradient alone needs no other."""
    embedded = model.embedding(batch.tokens).detach().requires_grad_(True)  # (B, L, E)
    encoded = model.encode(batch, embedded)
    if encoded.heads is not None:  # the Transformer: each head's readout weights are the constants
        logits, _ = model.decode(encoded._replace(heads=encoded.heads.detach()))
    else:
        _, attention = model.decode(encoded)
        logits, _ = model.decode(encoded, attention.detach())  # α is a constant (J&W §5.1)
    target = class_probability(logits, predicted_class(logits).detach())  # (B,)
    # Instances do not interact (recurrences within each row's length, masked convolutions), so one backward pass of the sum
    # gives every instance its own gradient.
    (grad,) = torch.autograd.grad(target.sum(), embedded)
    return (grad * embedded).sum(dim=-1).detach(), encoded.mask  # (B, L) each
