"""The recurrence of a single-layer bidirectional LSTM or GRU on the CPU, both directions in one loop,
with a hand-written backward pass (`BiRNN`'s path on the CPU).

Why: torch runs a GRU on the CPU one autograd cell at a time (~15 operators and their graph nodes
per direction per position), and its oneDNN LSTM once per direction. Over the hundreds of positions
of a document the time goes to per-operator overhead, not arithmetic: a step's matrices are
(h, B) x (G, h) with h = 50..128. Here one loop advances both directions together (the backward
direction runs over each row reversed within its own length, `BiRNN`), every step's operators
write into preallocated buffers, and the backward pass is back-propagation through time over the
saved activations: per position one batched product for the carried state gradient and one that
accumulates W_hh's gradient. No autograd graph is built inside the loop.

Buffers are time-major and feature-major, (L, D, features, B): a position is one contiguous block
and each gate one contiguous slice of it, so every element-wise operator runs on contiguous memory.

The arithmetic is torch's: `nn.LSTM` gates i, f, g, o; `nn.GRU` gates r, z, n with
n = tanh(W_in x + b_in + r (W_hn h + b_hn)). States and gradients agree with `nn.LSTM` / `nn.GRU` to
float32 rounding (tests/models/test_recurrence.py).

Shapes: D = 2 directions, L positions, B rows, h units, G = 4h (LSTM) or 3h (GRU) gate units.
"""

from __future__ import annotations

import torch

__all__ = ["bidirectional_recurrence"]


class _LSTM(torch.autograd.Function):
    """gates_in (L, D, 4h, B): W_ih x + b_ih + b_hh per position; w_hh (D, 4h, h) -> states (L, D, h, B)."""

    @staticmethod
    def forward(ctx, gates_in: torch.Tensor, w_hh: torch.Tensor) -> torch.Tensor:
        L, D, G, B = gates_in.shape
        h = G // 4
        gates = gates_in.clone()  # becomes the activations σ(i), σ(f), tanh(g), σ(o)
        cells, tanh_cells, states = (gates_in.new_empty(L, D, h, B) for _ in range(3))
        state = cell = gates_in.new_zeros(D, h, B)
        for t in range(L):
            a = gates[t].baddbmm_(w_hh, state)
            a[:, : 2 * h].sigmoid_()
            a[:, 2 * h : 3 * h].tanh_()
            a[:, 3 * h :].sigmoid_()
            i, f, g, o = a.split(h, dim=1)
            torch.mul(f, cell, out=cells[t]).addcmul_(i, g)
            torch.tanh(cells[t], out=tanh_cells[t])
            torch.mul(o, tanh_cells[t], out=states[t])
            state, cell = states[t], cells[t]
        ctx.save_for_backward(w_hh, gates, cells, tanh_cells, states)
        return states

    @staticmethod
    def backward(ctx, grad_states: torch.Tensor):
        w_hh, gates, cells, tanh_cells, states = ctx.saved_tensors
        L, D, G, B = gates.shape
        h = G // 4
        grad_gates = torch.empty_like(gates)  # d pre-activations
        grad_w_hh = torch.zeros_like(w_hh)
        grad_state, grad_cell = gates.new_zeros(D, h, B), gates.new_zeros(D, h, B)
        zeros = gates.new_zeros(D, h, B)
        slope, scratch = gates.new_empty(D, G, B), gates.new_empty(D, h, B)
        grad_states = grad_states.contiguous()
        # no allocation inside the loops: under deterministic algorithms torch fills every new tensor
        for t in range(L - 1, -1, -1):
            a, d = gates[t], grad_gates[t]
            i, f, g, o = a.split(h, dim=1)
            di, df, dg, do = d.split(h, dim=1)
            before_cell, before = (cells[t - 1], states[t - 1]) if t else (zeros, zeros)
            dh = grad_state.add_(grad_states[t])
            tc = tanh_cells[t]
            # the cell's gradient: carried + dh o (1 - tanh(c)^2)
            torch.mul(tc, tc, out=scratch).neg_().add_(1).mul_(o).mul_(dh)
            dc = grad_cell.add_(scratch)
            torch.mul(dc, g, out=di), torch.mul(dc, before_cell, out=df), torch.mul(dc, i, out=dg), torch.mul(dh, tc, out=do)
            # activation slopes: s (1 - s) for the sigmoids, 1 - g^2 for tanh
            torch.mul(a, a, out=slope)
            torch.sub(a, slope, out=slope)
            slope[:, 2 * h : 3 * h].sub_(g).add_(1)
            d.mul_(slope)
            dc.mul_(f)  # carried to the previous position
            grad_w_hh.baddbmm_(d, before.transpose(1, 2))
            torch.bmm(w_hh.transpose(1, 2), d, out=grad_state)  # dh is no longer needed: its buffer carries
        return grad_gates, grad_w_hh


class _GRU(torch.autograd.Function):
    """gates_in (L, D, 3h, B): W_ih x + b_ih, with b_hr and b_hz added; w_hh (D, 3h, h), b_hn (D, h, 1)
    -> states (L, D, h, B)."""

    @staticmethod
    def forward(ctx, gates_in: torch.Tensor, w_hh: torch.Tensor, b_hn: torch.Tensor) -> torch.Tensor:
        L, D, G, B = gates_in.shape
        h = G // 3
        recurrent = gates_in.new_empty(L, D, G, B)  # W_hh h (+ b_hn in the n rows)
        reset_update = gates_in.new_empty(L, D, 2 * h, B)  # σ(r), σ(z)
        new, states = gates_in.new_empty(L, D, h, B), gates_in.new_empty(L, D, h, B)
        state = gates_in.new_zeros(D, h, B)
        for t in range(L):
            product = torch.bmm(w_hh, state, out=recurrent[t])
            torch.add(gates_in[t, :, : 2 * h], product[:, : 2 * h], out=reset_update[t]).sigmoid_()
            r, z = reset_update[t].split(h, dim=1)
            hidden_n = product[:, 2 * h :].add_(b_hn)
            torch.mul(r, hidden_n, out=new[t]).add_(gates_in[t, :, 2 * h :]).tanh_()
            n = new[t]
            torch.sub(state, n, out=states[t]).mul_(z).add_(n)  # (1 - z) n + z h
            state = states[t]
        ctx.save_for_backward(w_hh, recurrent, reset_update, new, states)
        return states

    @staticmethod
    def backward(ctx, grad_states: torch.Tensor):
        w_hh, recurrent, reset_update, new, states = ctx.saved_tensors
        L, D, G, B = recurrent.shape
        h = G // 3
        grad_in = torch.empty_like(recurrent)  # d(W_ih x + b_ih (+ b_hr, b_hz))
        grad_hidden = states.new_empty(D, G, B)  # d(W_hh h (+ b_hn)) of one position
        grad_w_hh = torch.zeros_like(w_hh)
        grad_hidden_n = states.new_zeros(D, h, B)  # summed over positions; over rows at the end: b_hn's gradient
        grad_state = states.new_zeros(D, h, B)
        zeros = states.new_zeros(D, h, B)
        scratch = states.new_empty(D, h, B)
        grad_states = grad_states.contiguous()
        for t in range(L - 1, -1, -1):
            r, z = reset_update[t].split(h, dim=1)
            n = new[t]
            before = states[t - 1] if t else zeros
            dh = grad_state.add_(grad_states[t])
            dr, dz, dn = grad_in[t].split(h, dim=1)
            # n's pre-activation: dh (1 - z) (1 - n^2)
            torch.mul(n, n, out=dn).neg_().add_(1).mul_(dh)
            dn.sub_(torch.mul(dn, z, out=scratch))
            torch.sub(before, n, out=dz).mul_(dh).mul_(z).sub_(torch.mul(dz, z, out=scratch))  # dh (h - n) z (1 - z)
            torch.mul(dn, recurrent[t, :, 2 * h :], out=dr).mul_(r).sub_(torch.mul(dr, r, out=scratch))  # σ'(r)
            grad_hidden[:, : 2 * h] = grad_in[t, :, : 2 * h]
            torch.mul(dn, r, out=grad_hidden[:, 2 * h :])
            grad_hidden_n.add_(grad_hidden[:, 2 * h :])
            grad_w_hh.baddbmm_(grad_hidden, before.transpose(1, 2))
            dh.mul_(z).baddbmm_(w_hh.transpose(1, 2), grad_hidden)  # dh z + W_hh^T d, carried in grad_state's buffer
        return grad_in, grad_w_hh, grad_hidden_n.sum(dim=2, keepdim=True)


def bidirectional_recurrence(inputs: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, b_ih: torch.Tensor, b_hh: torch.Tensor, cell: str) -> torch.Tensor:
    """Both directions of a single-layer LSTM/GRU from zero states, each over its own row order:
    inputs (D, B, L, E), w_ih (D, G, E), w_hh (D, G, h), b_ih and b_hh (D, G), the directions'
    torch parameters stacked -> states (D, B, L, h)."""
    D, B, L, E = inputs.shape
    h = w_hh.shape[-1]
    if cell == "lstm":
        bias = b_ih + b_hh
    elif cell == "gru":  # b_hr, b_hz add to the input side; b_hn sits inside r (W_hn h + b_hn)
        bias = b_ih + torch.cat([b_hh[:, : 2 * h], torch.zeros_like(b_hh[:, 2 * h :])], dim=1)
    else:
        raise ValueError(f"unknown recurrent cell {cell!r}: expected lstm or gru")
    gates_in = torch.baddbmm(bias[:, :, None], w_ih, inputs.reshape(D, B * L, E).transpose(1, 2))  # (D, G, B L)
    gates_in = gates_in.view(D, -1, B, L).permute(3, 0, 1, 2).contiguous()  # (L, D, G, B)
    if cell == "lstm":
        states = _LSTM.apply(gates_in, w_hh)
    else:
        states = _GRU.apply(gates_in, w_hh, b_hh[:, 2 * h :, None])
    return states.permute(1, 3, 0, 2)  # (D, B, L, h)
