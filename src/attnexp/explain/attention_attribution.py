"""Attention attribution (ATTATTR, Hao et al. 2021): integrated gradients over the
attention probabilities of one layer, all of its heads scaled together.

    Attr_{l,h} = A_{l,h} ⊙ (1/m) Σ_{k=1}^{m} ∂F((k/m)·A_l) / ∂A_{l,h}

F is the softmax probability of a target class; the layers above l are computed normally from the
perturbed states. The sum is a right Riemann sum (the paper's formula; `riemann="left"` takes
k = 0..m-1 as the authors' repository does). Completeness: Σ_{h,i,j} Attr_{l,h} ≈ F(A_l) − F(0·A_l)
as m grows.

Batched: the m scaled copies of a whole batch of instances go through one forward and one backward
pass per layer (`Batch` rows repeated m times). The top layer has only its `[CLS]` row (the only row
the classifier reads; `attnexp.models.transformer`), so its maps are (B, H, 1, T).
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from attnexp.models.inputs import Batch
from attnexp.models.outputs import class_probability

__all__ = ["RIEMANN", "repeat_batch", "slice_batch", "attention_attribution", "token_attribution"]

RIEMANN = ("right", "left")


def repeat_batch(batch: Batch, times: int) -> Batch:
    """The batch stacked `times` times along the instance axis: row r * B + b is instance b."""
    tensors = {
        k: v.repeat(times, *([1] * (v.dim() - 1))) for k, v in vars(batch).items() if isinstance(v, torch.Tensor)
    }
    return replace(batch, ids=batch.ids * times, **tensors)


def attention_attribution(
    model: nn.Module, batch: Batch, target: torch.Tensor, layer: int, steps: int = 20, riemann: str = "right"
) -> tuple[torch.Tensor, torch.Tensor]:
    """-> Attr_l (B, H, Tq, T) and the layer's own attention A_l of the same shape (Tq = T below the
    top layer, 1 at the top). `target` (B,) is the class whose probability is F."""
    if riemann not in RIEMANN:
        raise ValueError(f"attattr_riemann must be one of {RIEMANN}, got {riemann!r}")
    if not 0 <= layer < model.cfg.layers:
        raise ValueError(f"layer {layer} is not one of the model's {model.cfg.layers} layers")
    with torch.no_grad():
        _, maps = model.run(batch)
    own = maps[layer]  # (B, H, Tq, T)
    first = 1 if riemann == "right" else 0
    alphas = torch.arange(first, first + steps, dtype=own.dtype, device=own.device) / steps  # (m,)
    scaled = (alphas[:, None, None, None, None] * own[None]).flatten(0, 1).requires_grad_(True)  # (m*B, H, Tq, T)
    logits, _ = model.run(repeat_batch(batch, steps), imposed={layer: scaled})
    probability = class_probability(logits, target.repeat(steps))  # (m*B,)
    # instances do not interact, so one backward pass of the sum gives each copy its own gradient
    (grad,) = torch.autograd.grad(probability.sum(), scaled)
    mean_grad = grad.view(steps, *own.shape).mean(dim=0)  # (B, H, Tq, T)
    return (own * mean_grad).detach(), own


def token_attribution(
    model: nn.Module,
    batch: Batch,
    target: torch.Tensor,
    steps: int = 20,
    riemann: str = "right",
    max_elements: int = 2**25,
) -> torch.Tensor:
    """Token relevance (B, T) from attention attribution: the top layer's `[CLS]` row summed over
    heads, Σ_h Attr_{L,h}[CLS, j] — how much `[CLS]` reading token j adds to the target's
    probability (signed; the attention-attribution counterpart of the `[CLS]` attention ranking).
    Instances go `chunk` at a time so that the m scaled copies' attention maps (chunk·m·H·T·T
    values per layer) stay under `max_elements`: memory only, results do not depend on it."""
    T = batch.tokens.shape[1]
    chunk = max(1, max_elements // (steps * model.cfg.heads * T * T))
    scores = []
    for start in range(0, len(batch), chunk):
        part = slice(start, start + chunk)
        rows = slice_batch(batch, part)
        attribution, _ = attention_attribution(model, rows, target[part], model.cfg.layers - 1, steps, riemann)
        scores.append(model.token_scores(rows, attribution[:, :, 0].sum(dim=1)))  # positions -> tokens
    return torch.cat(scores)


def slice_batch(batch: Batch, rows: slice) -> Batch:
    """Instances `rows` of a batch (padding kept: their outputs do not depend on it)."""
    tensors = {k: v[rows] for k, v in vars(batch).items() if isinstance(v, torch.Tensor)}
    return replace(batch, ids=batch.ids[rows], **tensors)
