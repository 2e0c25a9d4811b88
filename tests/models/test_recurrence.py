"""The CPU recurrence of `BiRNN` (`attnexp.models.recurrence`), S&S dropout and HAN word-level chunks."""

import copy

import pytest
import torch

from attnexp.models.encoders import BiRNN, Dropout, use_recurrence
from attnexp.models.hierarchical import HierarchicalClassifier, HierarchicalConfig


def _run(model: BiRNN, x: torch.Tensor, lengths: torch.Tensor, weights: torch.Tensor):
    """States, final states, and the gradients of a loss reading both, w.r.t. inputs and parameters."""
    x = x.clone().requires_grad_()
    states, final = model.run(x, lengths)
    ((states * weights).sum() + (final**2).sum()).backward()
    return states.detach(), final.detach(), x.grad, {n: p.grad.clone() for n, p in model.named_parameters()}


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("implementation", ["fused", "per_direction"])
def test_recurrence_matches_packed_sequences_forward_and_backward(cell, implementation):
    torch.manual_seed(0)
    model = BiRNN(7, 5, cell).double()
    x = torch.randn(4, 9, 7, dtype=torch.float64)
    lengths = torch.tensor([9, 3, 6, 1])
    weights = torch.randn(4, 9, 10, dtype=torch.float64)
    ours = _run(use_recurrence(copy.deepcopy(model), implementation), x, lengths, weights)
    packed = _run(use_recurrence(copy.deepcopy(model), "packed"), x, lengths, weights)
    for a, b in zip(ours[:3], packed[:3]):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    assert ours[3].keys() == packed[3].keys()
    for name in ours[3]:
        torch.testing.assert_close(ours[3][name], packed[3][name], rtol=0, atol=1e-12, msg=name)
    assert (ours[0][1, 3:] == 0).all()  # padding states are zero


def test_defaults_and_unknown_implementation():
    assert BiRNN(3, 2, "gru").implementation == "fused"
    assert BiRNN(3, 2, "lstm").implementation == "per_direction"  # oneDNN's fused LSTM kernels
    with pytest.raises(ValueError, match="unknown recurrence 'cudnn'"):
        use_recurrence(BiRNN(3, 2), "cudnn")


def test_fused_recurrence_is_deterministic_and_float32_close():
    torch.manual_seed(1)
    model = BiRNN(16, 8, "gru")
    x, lengths = torch.randn(6, 30, 16), torch.tensor([30, 29, 12, 5, 30, 2])
    weights = torch.randn(6, 30, 16)
    first, again = _run(model, x, lengths, weights), _run(copy.deepcopy(model), x, lengths, weights)
    assert torch.equal(first[0], again[0]) and torch.equal(first[2], again[2])
    packed = _run(use_recurrence(copy.deepcopy(model), "packed"), x, lengths, weights)
    torch.testing.assert_close(first[0], packed[0], rtol=1e-5, atol=1e-6)


def test_dropout_rule_and_eval_identity():
    torch.manual_seed(0)
    x = torch.ones(200_000)
    layer = Dropout(0.3).train()
    y = layer(x)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.005
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 1 / 0.7))
    assert layer.eval()(x) is x
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))
    x.requires_grad_()
    y = layer.train()(x)
    y.sum().backward()
    torch.testing.assert_close(x.grad, (y != 0).float() / 0.7)  # dropped elements get no gradient


def test_han_chunks_cut_where_padding_costs_more_than_a_loop():
    model = HierarchicalClassifier(HierarchicalConfig(vocab_size=10, n_classes=2))
    lengths = torch.tensor([1, 2, 2, 3, 3, 3, 40, 41, 300])
    chunks = model._chunks(torch.arange(len(lengths)), lengths)
    assert [c.tolist() for c in chunks] == [[0, 1, 2, 3, 4, 5], [6, 7], [8]]
    model.sentence_chunk = 2
    assert [len(c) for c in model._chunks(torch.arange(len(lengths)), lengths)] == [2, 2, 2, 2, 1]
