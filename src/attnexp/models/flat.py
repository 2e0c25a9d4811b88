"""Flat attention classifiers (Jain & Wallace §2, Wiegreffe & Pinter §2, §4): embeddings -> encoder ->
attention -> linear decoder.

The contract every experiment relies on (DESIGN.md): `encode(batch) -> Encoded(hidden, mask)` runs
the expensive part once; `decode(encoded, attention=None) -> (logits, attention)` is cheap and
vectorised, so permutation, adversarial search and erasure re-run only `decode` on cached states.

Inputs are `<SOS> w_1 .. w_n <EOS>` padded with `<PAD>` (layout `sos_eos`). Only the real tokens
w_1..w_n get attention: SOS, EOS and padding are masked to exactly zero (J&W §1).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnexp.models.attention import (
    AdditiveAttention,
    ScaledDotAttention,
    SparseAdditiveAttention,
    UniformAttention,
    masked_softmax,
    real_token_mask,
)
from attnexp.models.encoders import build_encoder, conicity
from attnexp.models.inputs import Batch, Encoded

__all__ = ["FlatConfig", "FlatClassifier", "real_token_mask", "masked_softmax"]

ATTENTIONS = ("tanh", "dot", "uniform", "guided", "sparsemax", "entmax15")
ENCODERS = ("lstm", "cnn", "average", "lstm-ortho", "lstm-diversity")


@dataclass
class FlatConfig:
    vocab_size: int
    n_classes: int  # 1 = binary with a sigmoid output (J&W BC), >1 = softmax
    encoder: str = "lstm"  # lstm | cnn | average | lstm-ortho | lstm-diversity
    attention: str = "tanh"  # tanh (additive) | dot (scaled, learned query) | uniform | guided | sparsemax | entmax15
    embedding_dim: int = 300
    hidden_size: int = 128  # per direction for the BiLSTM; total for cnn/average (J&W §2)
    # λ of the conicity penalty added to the training loss (`lstm-diversity`, Mohankumar et al. 2020); 0: none
    diversity_weight: float = 0.0


class FlatClassifier(nn.Module):
    layout = "sos_eos"

    def __init__(self, cfg: FlatConfig):
        super().__init__()
        if cfg.encoder not in ENCODERS:
            raise ValueError(f"flat encoder must be one of {ENCODERS}, got {cfg.encoder!r}")
        if cfg.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {cfg.attention!r}")
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embedding_dim, padding_idx=0)
        self.encoder = build_encoder(cfg.encoder, cfg.embedding_dim, cfg.hidden_size)
        dim = self.encoder.out_dim
        # `guided` has no attention of its own: each instance's weights are imposed (W&P §4)
        self.attention = {
            "tanh": lambda: AdditiveAttention(dim, dim // 2),
            "dot": lambda: ScaledDotAttention(dim),
            "uniform": UniformAttention,
            "guided": lambda: None,
            "sparsemax": lambda: SparseAdditiveAttention(dim, dim // 2, "sparsemax"),
            "entmax15": lambda: SparseAdditiveAttention(dim, dim // 2, "entmax15"),
        }[cfg.attention]()
        self.decoder = nn.Linear(dim, cfg.n_classes)
        self._penalty: torch.Tensor | None = None

    @property
    def guided(self) -> bool:
        return self.attention is None

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """tokens (B, L), lengths (B,) incl. SOS/EOS -> hidden (B, L, H), mask (B, L). Input-side
        attributions pass their own `embedded` (B, L, E) in place of the looked-up embeddings."""
        if embedded is None:
            embedded = self.embedding(batch.tokens)
        hidden = self.encoder(embedded, batch.lengths)
        mask = real_token_mask(batch.lengths, batch.tokens.shape[1])
        if self.training and self.cfg.diversity_weight:
            self._penalty = self.cfg.diversity_weight * conicity(hidden, mask).sum()
        return Encoded(hidden, mask)

    def training_penalty(self) -> torch.Tensor | float:
        """The penalty of the last training batch's states, summed over its instances, once: λ times
        their conicity for the diversity LSTM (Mohankumar et al. 2020: loss = BCE + λ conicity, both
        batch means; the training loop sums or averages it with the loss), 0 for every other model."""
        penalty, self._penalty = self._penalty, None
        return 0.0 if penalty is None else penalty

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> logits (..., B, C), attention (..., B, L). An imposed `attention` may carry leading
        axes (permutations, candidates) that broadcast against the cached states."""
        if attention is None:
            if self.guided:
                raise ValueError("a guided model has no attention of its own: pass the imposed weights")
            attention = self.attention(encoded.hidden, encoded.mask)
        context = torch.einsum("...bl,blh->...bh", attention, encoded.hidden)  # (..., B, H), a batched matmul
        return self.decoder(context), attention

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch), batch.guide if self.guided else None)
