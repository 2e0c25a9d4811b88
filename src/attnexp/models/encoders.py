"""Sequence encoders: (B, L, E) embeddings + lengths -> (B, L, D) states, zero at padding.

Jain & Wallace (§2): `lstm` (BiLSTM), `cnn` (kernels 1,3,5,7, ReLU), `average` (per-token tanh
projection). Serrano & Smith (§1): `rnn` (BiGRU), `conv` (kernels 3,5, input dropout), `none`
(identity). Recurrent encoders run each direction within each row's length (`BiRNN`), so padding
never enters the recurrence of a state that is read and an instance gives the same states alone and
inside a padded batch.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnexp.models.attention import present_mask

__all__ = ["BiRNN", "Convolutional", "TokenProjection", "Identity", "build_encoder", "use_packed_sequences"]


class BiRNN(nn.Module):
    """Bidirectional LSTM (J&W `lstm`) or GRU (S&S `rnn`), `hidden` units per direction.

    Each direction runs over the padded batch in one fused (oneDNN) call: forwards as the rows stand,
    backwards over each row reversed within its own length, so padding only ever follows a row's
    tokens and never enters the recurrence of a position that is read. Same states as packed
    sequences (to float32 rounding) at ~2.7x the training speed on CPU (benchmarks/train_speed.md).
    On a GPU it runs packed sequences (cuDNN), as before."""

    def __init__(self, input_dim: int, hidden: int, cell: str = "lstm"):
        super().__init__()
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.rnn = rnn(input_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        states, _ = self.run(x, lengths)
        return states

    def run(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """-> states (B, L, 2h), zero at padding, and the concatenated final states (B, 2h) (J&W QA
        question summary)."""
        if x.is_cuda:  # cuDNN runs packed sequences well and wants its weights in one flat buffer
            return self._packed(x, lengths)
        B, L, _ = x.shape
        lengths = lengths.to(x.device)
        positions = torch.arange(L, device=x.device)[None, :]  # (1, L)
        present = positions < lengths[:, None]  # (B, L)
        # position p of a row <-> its position length - 1 - p; padding stays where it is
        mirror = torch.where(present, lengths[:, None] - 1 - positions, positions)  # (B, L)
        # as rows of the flattened (B L, ·) batch: a row gather copies whole vectors, ~3x the speed of
        # `gather` with the index expanded over the feature axis
        mirror = (mirror + L * torch.arange(B, device=x.device)[:, None]).view(-1)  # (B L,)
        weights = self.rnn._flat_weights  # [W_ih, W_hh, b_ih, b_hh] forwards, then the same backwards
        half = len(weights) // 2
        forwards = self._direction(x, weights[:half])  # (B, L, h)
        backwards = self._direction(_rows(x, mirror), weights[half:])
        backwards = _rows(backwards, mirror)
        states = torch.cat([forwards, backwards], dim=-1) * present[:, :, None]
        final = torch.cat([forwards[torch.arange(B, device=x.device), lengths - 1], backwards[:, 0]], dim=-1)
        return states, final

    def _packed(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        if isinstance(final, tuple):  # LSTM: (h_n, c_n)
            final = final[0]
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return out, torch.cat([final[0], final[1]], dim=-1)

    def _direction(self, x: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
        """One direction over (B, L, E) from zero states -> (B, L, h)."""
        h0 = x.new_zeros(1, x.shape[0], self.rnn.hidden_size)
        # torch.lstm / torch.gru are what nn.LSTM / nn.GRU call: (input, hx, weights, has_biases,
        # num_layers, dropout, train, bidirectional, batch_first)
        if isinstance(self.rnn, nn.LSTM):
            return torch.lstm(x, (h0, h0), weights, True, 1, 0.0, self.training, False, True)[0]
        return torch.gru(x, h0, weights, True, 1, 0.0, self.training, False, True)[0]


def _rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(B, L, D) -> (B, L, D) with position p of row b taken from the flat position rows[b L + p]."""
    B, L, D = x.shape
    return x.reshape(B * L, D).index_select(0, rows).view(B, L, D)


def use_packed_sequences(model: nn.Module) -> nn.Module:
    """Make every `BiRNN` of `model` run on packed sequences, as before 2026-11-23 (and as J&W's
    original encoder): the benchmarks' reference step. Returns the model."""
    for module in model.modules():
        if isinstance(module, BiRNN):
            module.run = module._packed
    return model


class Convolutional(nn.Module):
    """Parallel "same" Conv1d + ReLU, concatenated; inputs and outputs zero at padding."""

    def __init__(self, input_dim: int, filters: int, kernel_sizes: tuple[int, ...], input_dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(input_dropout)
        self.convs = nn.ModuleList(nn.Conv1d(input_dim, filters, k, padding=k // 2) for k in kernel_sizes)
        self.out_dim = filters * len(kernel_sizes)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        present = present_mask(lengths, x.shape[1])[:, :, None]  # (B, L, 1)
        x = (self.dropout(x) * present).transpose(1, 2)  # (B, E, L): "same" convolutions see zeros
        out = torch.cat([torch.relu(conv(x)) for conv in self.convs], dim=1).transpose(1, 2)  # (B, L, D)
        return out * present


class TokenProjection(nn.Module):
    """J&W `average`: Linear(E→D) + tanh per token, no interaction between tokens."""

    def __init__(self, input_dim: int, hidden: int):
        super().__init__()
        self.project = nn.Linear(input_dim, hidden)
        self.out_dim = hidden

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.project(x)) * present_mask(lengths, x.shape[1])[:, :, None]


class Identity(nn.Module):
    """S&S `none` (their `noenc`): the embeddings themselves."""

    def __init__(self, input_dim: int):
        super().__init__()
        self.out_dim = input_dim

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return x * present_mask(lengths, x.shape[1])[:, :, None]


def build_encoder(name: str, input_dim: int, hidden: int, input_dropout: float = 0.0) -> nn.Module:
    """`hidden`: J&W hidden_size (per direction for lstm), S&S units per direction / filters per kernel."""
    if name == "lstm":
        return BiRNN(input_dim, hidden, "lstm")
    if name == "cnn":
        return Convolutional(input_dim, hidden // 4, (1, 3, 5, 7))
    if name == "average":
        return TokenProjection(input_dim, hidden)
    if name == "rnn":
        return BiRNN(input_dim, hidden, "gru")
    if name == "conv":
        return Convolutional(input_dim, hidden, (3, 5), input_dropout)
    if name == "none":
        return Identity(input_dim)
    raise ValueError(f"unknown encoder {name!r}: expected lstm, cnn, average, rnn, conv or none")
