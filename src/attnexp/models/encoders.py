"""Sequence encoders: (B, L, E) embeddings + lengths -> (B, L, D) states, zero at padding. Each has
`out_dim` (D) and `reach`: how many positions either side a state depends on (None: the whole row).

Jain & Wallace (§2): `lstm` (BiLSTM), `cnn` (kernels 1,3,5,7, ReLU), `average` (per-token tanh
projection). Serrano & Smith (§1): `rnn` (BiGRU), `conv` (kernels 3,5, input dropout), `none`
(identity). Mohankumar et al. (2020): `lstm-ortho` (`OrthogonalBiLSTM`) and `lstm-diversity` (the BiLSTM,
trained with a `conicity` penalty). Recurrent encoders run each direction within each row's length (`BiRNN`), so padding
never enters the recurrence of a state that is read and an instance gives the same states alone and
inside a padded batch.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnexp.models.attention import present_mask
from attnexp.models.recurrence import bidirectional_recurrence

__all__ = [
    "BiRNN",
    "OrthogonalBiLSTM",
    "conicity",
    "Dropout",
    "Convolutional",
    "TokenProjection",
    "Identity",
    "build_encoder",
    "use_packed_sequences",
    "use_recurrence",
]


class BiRNN(nn.Module):
    """Bidirectional LSTM (J&W `lstm`) or GRU (S&S `rnn`), `hidden` units per direction.

    On the CPU each direction runs over the padded batch: forwards as the rows stand, backwards over
    each row reversed within its own length, so padding only ever follows a row's tokens and never
    enters the recurrence of a position that is read. Same states as packed sequences to float32
    rounding. `implementation` (`use_recurrence`) says how:

    - `per_direction` (the LSTM's default): one fused torch call per direction, which for an LSTM is
      oneDNN's kernel, forward and backward;
    - `fused` (the GRU's default): both directions in one loop with a hand-written backward pass
      (`attnexp.models.recurrence`); torch has no fused CPU GRU and runs it one autograd cell at a
      time (1.4x the training speed of `per_direction` on 20News posts, benchmarks/train_speed.md);
    - `packed`: packed sequences, as J&W's original encoder; also the path on a GPU (cuDNN).
    """

    IMPLEMENTATIONS = ("fused", "per_direction", "packed")

    def __init__(self, input_dim: int, hidden: int, cell: str = "lstm"):
        super().__init__()
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.cell = cell
        self.rnn = rnn(input_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden
        self.reach = None  # a state depends on the whole row
        self.implementation = "fused" if cell == "gru" else "per_direction"

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        states, _ = self.run(x, lengths)
        return states

    def run(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """-> states (B, L, 2h), zero at padding, and the concatenated final states (B, 2h) (J&W QA
        question summary)."""
        if x.is_cuda or self.implementation == "packed":  # cuDNN runs packed sequences well
            return self._packed(x, lengths)
        B, L, _ = x.shape
        lengths = lengths.to(x.device)
        positions = torch.arange(L, device=x.device)[None, :]  # (1, L)
        present = positions < lengths[:, None]  # (B, L)
        # position p of a row <-> its position length - 1 - p; padding stays where it is
        mirror = torch.where(present, lengths[:, None] - 1 - positions, positions)  # (B, L)
        first = L * torch.arange(B, device=x.device)[:, None]  # (B, 1) each row's first flat position
        if self.implementation == "fused":
            forwards, backwards = self._fused(x, mirror, first)
        else:
            # as rows of the flattened (B L, ·) batch: a row gather copies whole vectors, ~3x the speed
            # of `gather` with the index expanded over the feature axis
            flat_mirror = (mirror + first).view(-1)  # (B L,)
            weights = self.rnn._flat_weights  # [W_ih, W_hh, b_ih, b_hh] forwards, then the same backwards
            half = len(weights) // 2
            forwards = self._direction(x, weights[:half])  # (B, L, h)
            backwards = _rows(self._direction(_rows(x, flat_mirror), weights[half:]), flat_mirror)
        states = torch.cat([forwards, backwards], dim=-1) * present[:, :, None]
        final = torch.cat([forwards[torch.arange(B, device=x.device), lengths - 1], backwards[:, 0]], dim=-1)
        return states, final

    def _fused(self, x: torch.Tensor, mirror: torch.Tensor, first: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both directions in one loop -> forward and backward states (B, L, h), each at its position."""
        B, L, E = x.shape
        w_ih, w_hh, b_ih, b_hh = (
            torch.stack(self.rnn._flat_weights[k::4]) for k in range(4)
        )  # (2, ·): forwards, backwards
        rows = torch.stack([first + torch.arange(L, device=x.device), first + mirror]).transpose(1, 2)  # (2, L, B)
        states = bidirectional_recurrence(
            x.reshape(B * L, E), rows, w_ih=w_ih, w_hh=w_hh, b_ih=b_ih, b_hh=b_hh, cell=self.cell
        )  # (2, L, B, h)
        # backwards, position p of row b was read at step mirror[b, p]
        at = (mirror * B + torch.arange(B, device=x.device)[:, None]).view(-1)  # (B L,)
        backwards = states[1].reshape(L * B, -1).index_select(0, at).view(B, L, -1)
        return states[0].transpose(0, 1), backwards

    def _packed(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        cudnn = torch.backends.cudnn
        # cuDNN: float32 products, not its default TF32, so that states agree with the CPU's; and the
        # training-mode kernels, whose backward pass gradient explanations of an eval-mode model need
        # (cuDNN refuses a backward in inference mode; one layer without dropout computes the same)
        mode = self.rnn.training
        try:
            self.rnn.train(x.is_cuda or mode)
            with cudnn.flags(
                enabled=cudnn.enabled, benchmark=cudnn.benchmark, deterministic=cudnn.deterministic, allow_tf32=False
            ):
                out, final = self.rnn(packed)
        finally:
            self.rnn.train(mode)
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


class OrthogonalBiLSTM(nn.Module):
    """Mohankumar et al. (2020)'s orthogonal LSTM (`lstm-ortho`), in each direction of the BiLSTM: after
    every step, the new state loses its component along the sum of the direction's previous states,
    h_t <- h_t - (<h_t, m> / (<m, m> + 1e-6)) m with m = sum_{s<t} h_s, and the orthogonalised state is what
    the recurrence carries on. The parameters are an `nn.LSTM`'s (the same layout as `BiRNN`'s), the
    steps a Python loop over positions with autograd: the orthogonalisation sits inside the recurrence,
    where no fused kernel reaches.

    Mohankumar et al. orthogonalise a unidirectional LSTM of 2h units; here both directions of the
    project's BiLSTM (h units each, the same 2h-wide states), so that `lstm-ortho-tanh` differs from
    `lstm-tanh` by the orthogonalisation alone (D-ZOO-BI). The backward direction runs over each row
    reversed within its own length, as `BiRNN`'s, so padding never enters a state that is read."""

    EPS = 1e-6  # Mohankumar et al.'s

    def __init__(self, input_dim: int, hidden: int):
        super().__init__()
        self.rnn = nn.LSTM(input_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden
        self.reach = None

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        B, L, _ = x.shape
        lengths = lengths.to(x.device)
        positions = torch.arange(L, device=x.device)[None, :]  # (1, L)
        present = positions < lengths[:, None]  # (B, L)
        mirror = torch.where(present, lengths[:, None] - 1 - positions, positions)  # (B, L)
        flat_mirror = (mirror + L * torch.arange(B, device=x.device)[:, None]).view(-1)
        w_ih, w_hh, b_ih, b_hh = (torch.stack(self.rnn._flat_weights[k::4]) for k in range(4))  # (2, ·)
        inputs = torch.stack([x, _rows(x, flat_mirror)])  # (2, B, L, E): forwards, backwards
        gates_in = torch.einsum("dble,dge->dlbg", inputs, w_ih) + (b_ih + b_hh)[:, None, None, :]  # (2, L, B, 4h)
        h = self.rnn.hidden_size
        state = cell = total = x.new_zeros(2, B, h)
        states = []
        # `unbind`, not `gates_in[:, t]`: the backward of one indexing per step would write a whole-size gradient
        # each time (quadratic in the length); unbind's gathers them once
        for t, step_in in enumerate(gates_in.unbind(1)):
            gates = step_in + torch.bmm(state, w_hh.transpose(1, 2))  # (2, B, 4h)
            i, f, g, o = gates.split(h, dim=-1)
            new_cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
            new = torch.sigmoid(o) * torch.tanh(new_cell)
            along = (new * total).sum(-1, keepdim=True) / ((total * total).sum(-1, keepdim=True) + self.EPS)
            new = new - along * total
            live = present[None, :, t, None]  # (1, B, 1): a row's steps past its length keep its state
            state, cell = torch.where(live, new, state), torch.where(live, new_cell, cell)
            total = total + torch.where(live, new, 0.0)
            states.append(state)
        forwards, backwards = torch.stack(states, dim=2)  # each (B, L, h)
        return torch.cat([forwards, _rows(backwards, flat_mirror)], dim=-1) * present[:, :, None]


def conicity(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mohankumar et al. (2020)'s conicity of each instance's states: the mean over its attended items
    of |cos(h_t, h̄)|, h̄ the mean of those states. hidden (B, L, H), mask (B, L) -> (B,); 0 for an
    instance without items. High conicity: the states lie in a narrow cone, so any attention
    distribution over them gives nearly the same context vector."""
    weights = mask.to(hidden.dtype)[:, :, None]  # (B, L, 1)
    count = weights.sum(1).clamp(min=1)  # (B, 1)
    mean = (hidden * weights).sum(1) / count  # (B, H)
    cosine = torch.nn.functional.cosine_similarity(hidden, mean[:, None, :], dim=-1, eps=1e-6).abs()  # (B, L)
    return (cosine * mask).sum(1) / count.squeeze(1)


def _rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(B, L, D) -> (B, L, D) with position p of row b taken from the flat position rows[b L + p]."""
    B, L, D = x.shape
    return x.reshape(B * L, D).index_select(0, rows).view(B, L, D)


def use_recurrence(model: nn.Module, implementation: str) -> nn.Module:
    """Run every `BiRNN` of `model` the given way (`BiRNN.IMPLEMENTATIONS`): the benchmarks'
    reference steps. Returns the model."""
    if implementation not in BiRNN.IMPLEMENTATIONS:
        raise ValueError(f"unknown recurrence {implementation!r}: expected one of {BiRNN.IMPLEMENTATIONS}")
    for module in model.modules():
        if isinstance(module, BiRNN):
            module.implementation = implementation
    return model


def use_packed_sequences(model: nn.Module) -> nn.Module:
    """Make every `BiRNN` of `model` run on packed sequences (J&W's original encoder). Returns the model."""
    return use_recurrence(model, "packed")


class Dropout(nn.Dropout):
    """nn.Dropout's rule (zero each element with probability p, scale the rest by 1 / (1 - p)) from
    uniform draws compared with p: torch's CPU dropout draws a Bernoulli per element at ~4x the cost
    of a uniform one, a tenth of a Serrano & Smith training step on its own. Same distribution, another
    random stream."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return torch.zeros_like(x)
        keep = torch.rand_like(x) >= self.p
        return x * keep * (1 / (1 - self.p))


class Convolutional(nn.Module):
    """Parallel "same" Conv1d + ReLU, concatenated; inputs and outputs zero at padding."""

    def __init__(self, input_dim: int, filters: int, kernel_sizes: tuple[int, ...], input_dropout: float = 0.0):
        super().__init__()
        self.dropout = Dropout(input_dropout)
        self.convs = nn.ModuleList(nn.Conv1d(input_dim, filters, k, padding=k // 2) for k in kernel_sizes)
        self.out_dim = filters * len(kernel_sizes)
        self.reach = max(kernel_sizes) // 2  # a state depends on this many positions either side

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
        self.reach = 0

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.project(x)) * present_mask(lengths, x.shape[1])[:, :, None]


class Identity(nn.Module):
    """S&S `none` (their `noenc`): the embeddings themselves."""

    def __init__(self, input_dim: int):
        super().__init__()
        self.out_dim = input_dim
        self.reach = 0

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return x * present_mask(lengths, x.shape[1])[:, :, None]


def build_encoder(name: str, input_dim: int, hidden: int, input_dropout: float = 0.0) -> nn.Module:
    """`hidden`: J&W hidden_size (per direction for lstm), S&S units per direction / filters per kernel."""
    if name in ("lstm", "lstm-diversity"):  # the diversity LSTM differs in its training objective only
        return BiRNN(input_dim, hidden, "lstm")
    if name == "lstm-ortho":
        return OrthogonalBiLSTM(input_dim, hidden)
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
    raise ValueError(
        f"unknown encoder {name!r}: expected lstm, lstm-ortho, lstm-diversity, cnn, average, rnn, conv or none"
    )
