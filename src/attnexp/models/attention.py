"""Masks and attention functions shared by every classifier.

Every attention here returns a distribution over the *attended items* only: real tokens for the
flat and QA models (never `<SOS>`, `<EOS>` or `<PAD>`, J&W §1), present sentences or tokens for the
Serrano & Smith models. Masked items get exactly zero, not a small number, because the experiments
permute and erase weights and must never move mass onto padding.
"""

from __future__ import annotations

import math

import entmax
import torch
from torch import nn

__all__ = [
    "square_maps",
    "real_token_mask",
    "present_mask",
    "masked_softmax",
    "AdditiveAttention",
    "SparseAdditiveAttention",
    "ScaledDotAttention",
    "UniformAttention",
]


def present_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B, L) bool, True at positions 0..lengths-1."""
    positions = torch.arange(max_len, device=lengths.device)  # (L,)
    return positions[None, :] < lengths[:, None]  # (B, L)


def real_token_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B, L) bool, True at w_1..w_n, i.e. positions 1..lengths-2 of `<SOS> w.. <EOS> <PAD>..`."""
    positions = torch.arange(max_len, device=lengths.device)  # (L,)
    return (positions[None, :] >= 1) & (positions[None, :] < lengths[:, None] - 1)  # (B, L)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis with masked positions at exactly 0. scores, mask: (..., L)."""
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)


class AdditiveAttention(nn.Module):
    """s_t = vᵀ tanh(W h_t [+ U q] + b): J&W `tanh` (W: H→H/2) and `tanh_qa` (with the question
    summary q), and the Yang et al. (2016) context-vector attention of Serrano & Smith (v = the
    context vector, W: d→d_c). One definition: they are the same function with different widths."""

    def __init__(self, dim: int, proj_dim: int, query_dim: int | None = None):
        super().__init__()
        self.proj = nn.Linear(dim, proj_dim)
        self.query_proj = nn.Linear(query_dim, proj_dim, bias=False) if query_dim else None
        self.v = nn.Linear(proj_dim, 1, bias=False)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, query: torch.Tensor | None = None) -> torch.Tensor:
        """hidden (B, L, H), mask (B, L), query (B, Q) for QA -> weights (B, L)."""
        return self.normalised(self.scores(hidden, query), mask)

    def normalised(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Scores (B, L) -> the weights over `mask` (softmax here): the one place a subclass changes
        the mapping, so that code computing the scores its own way (leave-one-out's recurrent
        deletion) normalises them as the model does."""
        return masked_softmax(scores, mask)

    def scores(self, hidden: torch.Tensor, query: torch.Tensor | None = None) -> torch.Tensor:
        """The unnormalised s_t, (B, L): each position's own, so they can be computed where the
        states lie and normalised in another layout (a HAN's sentences laid end to end)."""
        projected = self.proj(hidden)  # (B, L, P)
        if self.query_proj is not None:
            projected = projected + self.query_proj(query)[:, None, :]
        return self.v(torch.tanh(projected)).squeeze(-1)


class SparseAdditiveAttention(AdditiveAttention):
    """J&W's additive scores (`tanh`) normalised by a sparse mapping in place of softmax: `sparsemax`
    (Martins & Astudillo 2016) or `entmax15` (1.5-entmax, Peters et al. 2019), from the `entmax` package.
    Tokens outside the support get exactly 0, as masked positions do, and no gradient flows through
    them; every experiment already treats a weight of 0 as "not attended"."""

    NORMALISERS = {"sparsemax": entmax.sparsemax, "entmax15": entmax.entmax15}

    def __init__(self, dim: int, proj_dim: int, normaliser: str):
        super().__init__(dim, proj_dim)
        if normaliser not in self.NORMALISERS:
            raise ValueError(f"sparse attention must be one of {sorted(self.NORMALISERS)}, got {normaliser!r}")
        self.normalise = self.NORMALISERS[normaliser]

    def normalised(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = scores.masked_fill(~mask, float("-inf"))
        # a row with nothing to attend (an empty instance in a padded variant batch) gets all zeros, as
        # `masked_softmax` gives it
        scores = torch.where(mask.any(-1, keepdim=True), scores, 0.0)
        return self.normalise(scores, dim=-1).masked_fill(~mask, 0.0)


class ScaledDotAttention(nn.Module):
    """s_t = h_tᵀ w / √H: a learned query w (J&W `dot` for classification) or the question summary
    (J&W `dot_qa`, then `query_dim` must equal H and no parameter is learned)."""

    def __init__(self, dim: int, learned_query: bool = True):
        super().__init__()
        self.query = nn.Parameter(torch.randn(dim) / math.sqrt(dim)) if learned_query else None

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, query: torch.Tensor | None = None) -> torch.Tensor:
        if self.query is not None:
            scores = hidden @ self.query  # (B, L)
        else:
            scores = (hidden * query[:, None, :]).sum(-1)  # (B, L)
        return masked_softmax(scores / math.sqrt(hidden.shape[-1]), mask)


class UniformAttention(nn.Module):
    """α_t = 1/n over the attended items (W&P §2, D-UNIF); no parameters, trained end to end."""

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, query: torch.Tensor | None = None) -> torch.Tensor:
        return mask / mask.sum(-1, keepdim=True).clamp(min=1)  # (B, L), exact 1/n


def square_maps(maps: list[torch.Tensor]) -> torch.Tensor:
    """A `run`'s attention maps [(B, H, T, T)] * (L-1) + the top layer's `[CLS]` row (B, H, 1, T) ->
    square maps (B, L, H, T, T) for rollout: the top row in row 0, the top layer's other rows (which
    no output reads) the identity, so that rollout's `[CLS]` row is exact."""
    top = maps[-1]
    B, H, _, T = top.shape
    square = torch.eye(T, dtype=top.dtype, device=top.device).expand(B, H, T, T).clone()
    square[:, :, 0] = top[:, :, 0]
    return torch.stack([*maps[:-1], square], dim=1)
