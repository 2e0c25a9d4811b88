"""Question-conditioned attention for QA and NLI (Jain & Wallace §2): bAbI 1-3, SNLI, CNN.

Two encoders of the same type with separate weights: P reads the passage (premise), which is
attended; Q reads the question (hypothesis) and is summarised into q. The attention scores passage
tokens against q (`tanh_qa` or `dot_qa`), and the output is Linear(H/2→C)(tanh(W_p c + W_q q)).
`encode` returns q with the passage states, so `decode` stays a cheap function of cached states.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnexp.models.attention import AdditiveAttention, ScaledDotAttention, present_mask, real_token_mask
from attnexp.models.encoders import BiRNN, build_encoder
from attnexp.models.inputs import Batch, Encoded

__all__ = ["QAConfig", "QAClassifier"]


@dataclass
class QAConfig:
    vocab_size: int
    n_classes: int  # answer candidates: SNLI 3 labels, bAbI the answers seen in training
    encoder: str = "lstm"  # lstm | cnn | average
    attention: str = "tanh"  # tanh (tanh_qa) | dot (dot_qa)
    embedding_dim: int = 300
    hidden_size: int = 128


class QAClassifier(nn.Module):
    layout = "sos_eos"
    guided = False

    def __init__(self, cfg: QAConfig):
        super().__init__()
        if cfg.encoder not in {"lstm", "cnn", "average"}:
            raise ValueError(f"QA encoder must be lstm, cnn or average, got {cfg.encoder!r}")
        if cfg.attention not in {"tanh", "dot"}:
            raise ValueError(f"QA attention must be tanh or dot, got {cfg.attention!r}")
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embedding_dim, padding_idx=0)
        self.encoder = build_encoder(cfg.encoder, cfg.embedding_dim, cfg.hidden_size)
        self.question_encoder = build_encoder(cfg.encoder, cfg.embedding_dim, cfg.hidden_size)
        dim = self.encoder.out_dim
        if cfg.attention == "tanh":
            self.attention = AdditiveAttention(dim, dim // 2, query_dim=dim)
        else:
            self.attention = ScaledDotAttention(dim, learned_query=False)
        self.passage_proj = nn.Linear(dim, dim // 2)
        self.question_proj = nn.Linear(dim, dim // 2)
        self.decoder = nn.Linear(dim // 2, cfg.n_classes)

    def summarise_question(self, batch: Batch) -> torch.Tensor:
        """q (B, H): BiLSTM final states concatenated; CNN max over time; Average mean (J&W §2)."""
        x = self.embedding(batch.question)  # (B, Lq, E)
        if isinstance(self.question_encoder, BiRNN):
            return self.question_encoder.run(x, batch.question_lengths)[1]
        states = self.question_encoder(x, batch.question_lengths)  # (B, Lq, H), zero at padding
        present = present_mask(batch.question_lengths, x.shape[1])[:, :, None]
        if self.cfg.encoder == "cnn":  # ReLU outputs are >= 0, so zeros at padding never win the max
            return states.amax(dim=1)
        return states.sum(dim=1) / present.sum(dim=1)

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """passage (B, L) -> hidden (B, L, H), mask (B, L) over real passage tokens, query (B, H).
        `embedded` (B, L, E) replaces the passage embeddings (attributions are over the passage only)."""
        if embedded is None:
            embedded = self.embedding(batch.tokens)
        hidden = self.encoder(embedded, batch.lengths)
        mask = real_token_mask(batch.lengths, batch.tokens.shape[1])
        return Encoded(hidden, mask, self.summarise_question(batch))

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> logits (..., B, C), attention (..., B, L); leading axes of `attention` broadcast."""
        if attention is None:
            attention = self.attention(encoded.hidden, encoded.mask, encoded.query)
        context = torch.einsum("...bl,blh->...bh", attention, encoded.hidden)  # (..., B, H), a batched matmul
        combined = torch.tanh(self.passage_proj(context) + self.question_proj(encoded.query))  # (..., B, H/2)
        return self.decoder(combined), attention

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch))
