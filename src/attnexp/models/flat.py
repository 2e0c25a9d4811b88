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
    UniformAttention,
    masked_softmax,
    real_token_mask,
)
from attnexp.models.encoders import build_encoder
from attnexp.models.inputs import Batch, Encoded

__all__ = ["FlatConfig", "FlatClassifier", "real_token_mask", "masked_softmax"]

ATTENTIONS = ("tanh", "dot", "uniform", "guided")


@dataclass
class FlatConfig:
    vocab_size: int
    n_classes: int  # 1 = binary with a sigmoid output (J&W BC), >1 = softmax
    encoder: str = "lstm"  # lstm | cnn | average
    attention: str = "tanh"  # tanh (additive) | dot (scaled, learned query) | uniform | guided
    embedding_dim: int = 300
    hidden_size: int = 128  # per direction for the BiLSTM; total for cnn/average (J&W §2)


class FlatClassifier(nn.Module):
    layout = "sos_eos"

    def __init__(self, cfg: FlatConfig):
        super().__init__()
        if cfg.encoder not in {"lstm", "cnn", "average"}:
            raise ValueError(f"flat encoder must be lstm, cnn or average, got {cfg.encoder!r}")
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
        }[cfg.attention]()
        self.decoder = nn.Linear(dim, cfg.n_classes)

    @property
    def guided(self) -> bool:
        return self.attention is None

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """tokens (B, L), lengths (B,) incl. SOS/EOS -> hidden (B, L, H), mask (B, L). Input-side
        attributions pass their own `embedded` (B, L, E) in place of the looked-up embeddings."""
        if embedded is None:
            embedded = self.embedding(batch.tokens)
        hidden = self.encoder(embedded, batch.lengths)
        return Encoded(hidden, real_token_mask(batch.lengths, batch.tokens.shape[1]))

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
