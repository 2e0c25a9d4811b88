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
        # every position's views made once: indexing in the loop costs more than the operators
        steps = zip(
            gates.unbind(0),
            gates[:, :, : 2 * h].unbind(0),
            gates[:, :, 2 * h : 3 * h].unbind(0),
            gates[:, :, 3 * h :].unbind(0),
            cells.unbind(0),
            tanh_cells.unbind(0),
            states.unbind(0),
        )
        for a, i_f, g, o, c, tc, s in steps:
            a.baddbmm_(w_hh, state)
            i_f.sigmoid_(), g.tanh_(), o.sigmoid_()
            i, f = i_f.split(h, dim=1)
            torch.mul(f, cell, out=c).addcmul_(i, g)
            torch.tanh(c, out=tc)
            torch.mul(o, tc, out=s)
            state, cell = s, c
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
        gate_views = [x[:, :, k * h : (k + 1) * h].unbind(0) for x in (gates, grad_gates) for k in range(4)]
        steps = zip(
            gates.unbind(0), grad_gates.unbind(0), *gate_views,
            [zeros, *cells[:-1].unbind(0)], [zeros, *states[:-1].unbind(0)], tanh_cells.unbind(0), grad_states.unbind(0),
        )  # fmt: skip
        slope_g = slope[:, 2 * h : 3 * h]
        for a, d, i, f, g, o, di, df, dg, do, before_cell, before, tc, grad_out in reversed(list(steps)):
            dh = grad_state.add_(grad_out)
            # the cell's gradient: carried + dh o (1 - tanh(c)^2)
            torch.mul(tc, tc, out=scratch).neg_().add_(1).mul_(o).mul_(dh)
            dc = grad_cell.add_(scratch)
            (
                torch.mul(dc, g, out=di),
                torch.mul(dc, before_cell, out=df),
                torch.mul(dc, i, out=dg),
                torch.mul(dh, tc, out=do),
            )
            # activation slopes: s (1 - s) for the sigmoids, 1 - g^2 for tanh
            torch.mul(a, a, out=slope)
            torch.sub(a, slope, out=slope)
            slope_g.sub_(g).add_(1)
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
        # every position's views made once: indexing in the loop costs more than the operators
        steps = zip(
            recurrent.unbind(0), recurrent[:, :, : 2 * h].unbind(0), recurrent[:, :, 2 * h :].unbind(0),
            gates_in[:, :, : 2 * h].unbind(0), gates_in[:, :, 2 * h :].unbind(0),
            reset_update.unbind(0), reset_update[:, :, :h].unbind(0), reset_update[:, :, h:].unbind(0),
            new.unbind(0), states.unbind(0),
        )  # fmt: skip
        for product, product_rz, hidden_n, in_rz, in_n, rz, r, z, n, s in steps:
            torch.bmm(w_hh, state, out=product)
            torch.add(in_rz, product_rz, out=rz).sigmoid_()
            hidden_n.add_(b_hn)
            torch.mul(r, hidden_n, out=n).add_(in_n).tanh_()
            torch.sub(state, n, out=s).mul_(z).add_(n)  # (1 - z) n + z h
            state = s
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
        steps = zip(
            reset_update[:, :, :h].unbind(0), reset_update[:, :, h:].unbind(0), new.unbind(0), recurrent[:, :, 2 * h :].unbind(0),
            [zeros, *states[:-1].unbind(0)], grad_states.unbind(0), grad_in.unbind(0),
            grad_in[:, :, :h].unbind(0), grad_in[:, :, h : 2 * h].unbind(0), grad_in[:, :, 2 * h :].unbind(0),
        )  # fmt: skip
        hidden_rz, hidden_n = grad_hidden[:, : 2 * h], grad_hidden[:, 2 * h :]
        for r, z, n, recurrent_n, before, grad_out, grad_t, dr, dz, dn in reversed(list(steps)):
            dh = grad_state.add_(grad_out)
            # n's pre-activation: dh (1 - z) (1 - n^2)
            torch.mul(n, n, out=dn).neg_().add_(1).mul_(dh)
            dn.sub_(torch.mul(dn, z, out=scratch))
            torch.sub(before, n, out=dz).mul_(dh).mul_(z).sub_(torch.mul(dz, z, out=scratch))  # dh (h - n) z (1 - z)
            torch.mul(dn, recurrent_n, out=dr).mul_(r).sub_(torch.mul(dr, r, out=scratch))  # σ'(r)
            hidden_rz.copy_(grad_t[:, : 2 * h])
            torch.mul(dn, r, out=hidden_n)
            grad_hidden_n.add_(hidden_n)
            grad_w_hh.baddbmm_(grad_hidden, before.transpose(1, 2))
            dh.mul_(z).baddbmm_(w_hh.transpose(1, 2), grad_hidden)  # dh z + W_hh^T d, carried in grad_state's buffer
        return grad_in, grad_w_hh, grad_hidden_n.sum(dim=2, keepdim=True)


def bidirectional_recurrence(
    inputs: torch.Tensor,
    rows: torch.Tensor,
    *,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
    cell: str,
) -> torch.Tensor:
    """Both directions of a single-layer LSTM/GRU from zero states, each reading its own order of rows:
    inputs (N, E) the batch's positions as rows; rows (D, L, B) the input row that direction d reads at
    step t in batch row b; w_ih (D, G, E), w_hh (D, G, h), b_ih and b_hh (D, G) the directions' torch
    parameters stacked -> states (D, L, B, h), the state of direction d after step t of batch row b."""
    D, L, B = rows.shape
    h = w_hh.shape[-1]
    if cell == "lstm":
        bias = b_ih + b_hh
    elif cell == "gru":  # b_hr, b_hz add to the input side; b_hn sits inside r (W_hn h + b_hn)
        bias = b_ih + torch.cat([b_hh[:, : 2 * h], torch.zeros_like(b_hh[:, 2 * h :])], dim=1)
    else:
        raise ValueError(f"unknown recurrent cell {cell!r}: expected lstm or gru")
    x = inputs.index_select(0, rows.reshape(-1)).view(D, L * B, -1)  # time-major: step t's rows together
    gates_in = torch.baddbmm(bias[:, :, None], w_ih, x.transpose(1, 2))  # (D, G, L B)
    # to (L, D, G, B): whole rows of B values move, not single values
    gates_in = gates_in.view(D, -1, L, B).permute(2, 0, 1, 3).contiguous()
    if cell == "lstm":
        states = _LSTM.apply(gates_in, w_hh)
    else:
        states = _GRU.apply(gates_in, w_hh, b_hh[:, 2 * h :, None])
    return states.permute(1, 0, 3, 2)  # (D, L, B, h)
