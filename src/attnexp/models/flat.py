"""Flat attention classifiers (Jain & Wallace §2, Wiegreffe & Pinter §2): embeddings -> encoder ->
attention -> linear decoder.

The contract every experiment relies on (DESIGN.md): `encode(tokens, lengths) -> (hidden, mask)` runs
the expensive part once; `decode(hidden, mask, attention=None) -> (logits, attention)` is cheap and
vectorised, so permutation, adversarial search and erasure re-run only `decode` on cached states.

Inputs are `<SOS> w_1 .. w_n <EOS>` padded with `<PAD>` (id 0). Only the real tokens w_1..w_n get
attention: SOS, EOS and padding are masked to exactly zero (J&W §1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

__all__ = ["FlatConfig", "FlatClassifier", "real_token_mask", "masked_softmax"]


@dataclass
class FlatConfig:
    vocab_size: int
    n_classes: int  # 1 = binary with a sigmoid output (J&W BC), >1 = softmax
    encoder: str = "lstm"  # lstm | cnn | average
    attention: str = "tanh"  # tanh (additive) | dot (scaled, learned query) | uniform | guided
    embedding_dim: int = 300
    hidden_size: int = 128  # per direction for the BiLSTM; total for cnn/average (J&W §2)
    kernel_sizes: tuple[int, ...] = (1, 3, 5, 7)  # cnn: hidden_size // len(kernel_sizes) filters each


def real_token_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B, L) bool, True at w_1..w_n, i.e. positions 1..lengths-2 of `<SOS> w.. <EOS> <PAD>..`."""
    positions = torch.arange(max_len, device=lengths.device)  # (L,)
    return (positions[None, :] >= 1) & (positions[None, :] < lengths[:, None] - 1)  # (B, L)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis with masked positions at exactly 0. scores, mask: (..., L)."""
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)


class _BiLSTM(nn.Module):
    def __init__(self, cfg: FlatConfig):
        super().__init__()
        self.rnn = nn.LSTM(cfg.embedding_dim, cfg.hidden_size, batch_first=True, bidirectional=True)
        self.out_dim = 2 * cfg.hidden_size

    def forward(self, emb: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # Packed, so padding never enters the recurrence: an instance alone or in a batch is the same.
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=emb.shape[1])
        return out  # (B, L, 2H)


class _CNN(nn.Module):
    def __init__(self, cfg: FlatConfig):
        super().__init__()
        filters = cfg.hidden_size // len(cfg.kernel_sizes)
        self.convs = nn.ModuleList(nn.Conv1d(cfg.embedding_dim, filters, k, padding=k // 2) for k in cfg.kernel_sizes)
        self.out_dim = filters * len(cfg.kernel_sizes)

    def forward(self, emb: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        present = (torch.arange(emb.shape[1], device=emb.device)[None, :] < lengths[:, None])[:, :, None]  # (B, L, 1)
        x = (emb * present).transpose(1, 2)  # (B, E, L): zero padding, so "same" convolutions see zeros
        out = torch.cat([torch.relu(conv(x)) for conv in self.convs], dim=1).transpose(1, 2)  # (B, L, H)
        return out * present  # outputs at PAD set to 0 (J&W §2)


class _Average(nn.Module):
    def __init__(self, cfg: FlatConfig):
        super().__init__()
        self.project = nn.Linear(cfg.embedding_dim, cfg.hidden_size)
        self.out_dim = cfg.hidden_size

    def forward(self, emb: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.project(emb))  # (B, L, H): no interaction between tokens


_ENCODERS = {"lstm": _BiLSTM, "cnn": _CNN, "average": _Average}


class FlatClassifier(nn.Module):
    def __init__(self, cfg: FlatConfig):
        super().__init__()
        if cfg.encoder not in _ENCODERS:
            raise ValueError(f"encoder must be one of {sorted(_ENCODERS)}, got {cfg.encoder!r}")
        if cfg.attention not in {"tanh", "dot", "uniform", "guided"}:
            raise ValueError(f"attention must be tanh, dot, uniform or guided, got {cfg.attention!r}")
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embedding_dim, padding_idx=0)
        self.encoder = _ENCODERS[cfg.encoder](cfg)
        dim = self.encoder.out_dim
        if cfg.attention == "tanh":
            self.attn_proj = nn.Linear(dim, dim // 2)
            self.attn_v = nn.Linear(dim // 2, 1, bias=False)
        elif cfg.attention == "dot":
            self.attn_query = nn.Parameter(torch.randn(dim) / math.sqrt(dim))
        self.decoder = nn.Linear(dim, cfg.n_classes)

    def encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (B, L) ids, lengths (B,) including SOS/EOS -> hidden (B, L, H), mask (B, L)."""
        hidden = self.encoder(self.embedding(tokens), lengths)
        return hidden, real_token_mask(lengths, tokens.shape[1])

    def attention_weights(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, L) distribution over real tokens."""
        if self.cfg.attention == "tanh":
            scores = self.attn_v(torch.tanh(self.attn_proj(hidden))).squeeze(-1)  # (B, L)
        elif self.cfg.attention == "dot":
            scores = hidden @ self.attn_query / math.sqrt(hidden.shape[-1])  # (B, L)
        elif self.cfg.attention == "uniform":
            scores = torch.zeros(mask.shape, device=hidden.device)  # 1/n over real tokens (D-UNIF)
        else:
            raise ValueError("guided attention has no weights of its own: pass `attention=` to decode")
        return masked_softmax(scores, mask)

    def decode(self, hidden: torch.Tensor, mask: torch.Tensor, attention: torch.Tensor | None = None):
        """hidden (..., B, L, H), mask (B, L), optional imposed attention (..., B, L) -> logits
        (..., B, C), attention (..., B, L). Leading axes (permutations, candidates) broadcast."""
        if attention is None:
            attention = self.attention_weights(hidden, mask)
        context = (attention.unsqueeze(-1) * hidden).sum(dim=-2)  # (..., B, H)
        return self.decoder(context), attention

    def forward(self, tokens, lengths, attention=None):
        hidden, mask = self.encode(tokens, lengths)
        return self.decode(hidden, mask, attention)
