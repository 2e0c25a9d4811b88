"""Attention rollout (Abnar & Zuidema 2020): how much each input position flows into
each output position through a Transformer's self-attention, the residual connections included.

Per layer l, the heads' mean attention Ā_l (rows sum to 1) is mixed with the identity for the
residual path, Â_l = ½ Ā_l + ½ I, and the layers are chained, R_1 = Â_1, R_l = Â_l R_{l−1}. Row i of
R_L says how much each input position contributes to output position i; the token relevance is the
`[CLS]` row (`readout="cls"`) or, as in the authors' script (`samiraabnar/attention_flow`,
`compute_corel_distilbert_sst.py`), the maximum over the query rows (`readout="max_query"`).

Everything is batched: L matrix products of (B, T, T) for a whole batch of instances.
"""

from __future__ import annotations

import torch

__all__ = ["READOUTS", "rollout_matrix", "rollout"]

READOUTS = ("cls", "max_query")


def rollout_matrix(attentions: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """attentions (B, L, H, T, T), each row a distribution over keys -> R_L (B, T, T), rows summing
    to 1. `mask` (B, T) marks real positions: padded query rows of R are zero (they attend nowhere)."""
    if attentions.dim() != 5 or attentions.shape[-1] != attentions.shape[-2]:
        raise ValueError(f"expected attentions of shape (B, L, H, T, T), got {tuple(attentions.shape)}")
    eye = torch.eye(attentions.shape[-1], dtype=attentions.dtype, device=attentions.device)
    mixed = 0.5 * attentions.mean(dim=2) + 0.5 * eye  # Â_l (B, L, T, T): the residual path as identity
    result = mixed[:, 0]
    for layer in range(1, mixed.shape[1]):
        result = mixed[:, layer] @ result  # R_l = Â_l R_{l-1}
    if mask is not None:
        result = result * mask[:, :, None].to(result.dtype)
    return result


def rollout(
    attentions: torch.Tensor, mask: torch.Tensor | None = None, readout: str = "cls", cls_position: int = 0
) -> torch.Tensor:
    """-> token relevance (B, T): the `[CLS]` row of R_L, or its maximum over the real query rows."""
    if readout not in READOUTS:
        raise ValueError(f"rollout readout must be one of {READOUTS}, got {readout!r}")
    matrix = rollout_matrix(attentions, mask)
    if readout == "cls":
        return matrix[:, cls_position]
    return matrix.max(dim=1).values  # padded rows are zero and never win against a real row
