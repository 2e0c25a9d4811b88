"""Attention rollout (attnexp.explain.rollout, Abnar & Zuidema 2020): row sums, the explicit product on a
2-layer toy, batching, readouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnexp.explain.rollout import rollout, rollout_matrix


def random_attentions(B=3, L=4, H=2, T=6, seed=0, mask=None) -> torch.Tensor:
    """Rows are distributions over keys; with `mask` (B, T) padded keys get exactly zero."""
    logits = torch.randn(B, L, H, T, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    if mask is not None:
        logits = logits.masked_fill(~mask[:, None, None, None, :], float("-inf"))
    return torch.softmax(logits, dim=-1)


def test_rows_of_the_rollout_sum_to_one():
    matrix = rollout_matrix(random_attentions())
    assert torch.allclose(matrix.sum(dim=-1), torch.ones(3, 6, dtype=torch.float64))
    assert (matrix >= 0).all()


def test_rollout_equals_the_explicit_product_on_a_two_layer_toy():
    a1 = np.array([[0.5, 0.5, 0.0], [0.2, 0.2, 0.6], [1.0, 0.0, 0.0]])
    a2_heads = [
        np.array([[0.0, 1.0, 0.0], [0.3, 0.3, 0.4], [0.1, 0.8, 0.1]]),
        np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0], [0.1, 0.0, 0.9]]),
    ]
    a1_hat = 0.5 * a1 + 0.5 * np.eye(3)
    a2_hat = 0.5 * np.mean(a2_heads, axis=0) + 0.5 * np.eye(3)
    expected = a2_hat @ a1_hat
    attentions = torch.tensor(np.stack([np.stack([a1, a1]), np.stack(a2_heads)]))[None]  # (1, L=2, H=2, 3, 3)
    assert rollout_matrix(attentions)[0].numpy() == pytest.approx(expected)
    assert rollout(attentions)[0].numpy() == pytest.approx(expected[0])  # the [CLS] row
    assert rollout(attentions, readout="max_query")[0].numpy() == pytest.approx(expected.max(axis=0))


def test_each_instance_of_a_batch_is_rolled_out_alone():
    attentions = random_attentions(B=4, seed=1)
    batched = rollout(attentions)
    alone = torch.cat([rollout(attentions[i : i + 1]) for i in range(4)])
    assert torch.equal(batched, alone)


def test_padding_gets_no_relevance_and_padded_rows_never_win_max_query():
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    attentions = random_attentions(B=2, mask=mask, seed=2)
    cls = rollout(attentions, mask)
    assert torch.all(cls[1, 4:] == 0)  # keys that nobody attends get only the identity share of their own row
    matrix = rollout_matrix(attentions, mask)
    assert torch.all(matrix[1, 4:] == 0) and torch.allclose(matrix[1, :4].sum(-1), torch.ones(4, dtype=torch.float64))
    assert torch.all(rollout(attentions, mask, readout="max_query")[1, 4:] == 0)


def test_one_layer_is_half_attention_half_identity():
    attentions = random_attentions(L=1, seed=3)
    expected = 0.5 * attentions[:, 0].mean(dim=1) + 0.5 * torch.eye(6, dtype=torch.float64)
    assert torch.allclose(rollout_matrix(attentions), expected)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="expected attentions of shape \\(B, L, H, T, T\\)"):
        rollout_matrix(torch.ones(2, 3, 4, 4))
    with pytest.raises(ValueError, match="readout must be one of"):
        rollout(random_attentions(), readout="mean")
