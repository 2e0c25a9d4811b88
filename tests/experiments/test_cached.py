"""Cached encoder states (attnexp.experiments.cached): `cached_batches` against running each instance
alone, for every layout; `Readout` (the output layer projected once) against `model.decode`, with
leading attention axes; `real_positions` by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import flat, hierarchical, qa, random_documents, random_examples, transformer

from attnexp.experiments.cached import (
    CachedBatch,
    DecodedReadout,
    Readout,
    cached_batches,
    decode_heads,
    readout,
    real_positions,
)
from attnexp.models.attention import masked_softmax
from attnexp.models.inputs import collate
from attnexp.models.outputs import probabilities

torch.use_deterministic_algorithms(True)

LENGTHS = [7, 3, 11, 1, 5, 8, 2, 13]

MODELS = {
    "flat-lstm-tanh-bc": lambda: flat("lstm", "tanh", 1),
    "flat-cnn-dot-3": lambda: flat("cnn", "dot", 3),
    "flat-average-uniform": lambda: flat("average", "uniform", 1),
    "qa-lstm-dot": lambda: qa("lstm", "dot"),
    "han-rnn": lambda: hierarchical("han", "rnn", dropout=0.3),  # eval mode must switch dropout off
    "han-conv-3": lambda: hierarchical("han", "conv", n_classes=3),
    "flan-rnn": lambda: hierarchical("flan", "rnn", dropout=0.3),
    "flan-none-3": lambda: hierarchical("flan", "none", n_classes=3),
    "transformer-cls": lambda: transformer(layers=2, heads=2),
}
LINEAR = [name for name in MODELS if not name.startswith(("qa", "transformer"))]


def examples_for(model, lengths=LENGTHS, seed=0):
    if model.spec.family == "qa":
        return random_examples(lengths, seed, question=True)
    return random_documents(lengths, seed)


def alone(model, example):
    """(encoded, logits, attention) of one instance in a batch of its own."""
    with torch.no_grad():
        encoded = model.encode(collate([example], model.layout))
        logits, attention = model.decode(encoded)
    return encoded, logits[0], attention[0]


# --------------------------------------------------------------------------------------------------
# cached_batches


@pytest.mark.parametrize("name", list(MODELS))
def test_cached_batches_cover_every_example_once_and_equal_running_each_alone(name):
    model = MODELS[name]().train()  # cached_batches puts it in eval mode
    examples = examples_for(model)
    batches = list(cached_batches(model, examples, max_tokens=30))
    assert not model.training
    assert len(batches) >= 3  # the budget cuts several batches
    assert all(isinstance(b, CachedBatch) for b in batches)
    covered = np.concatenate([b.indices for b in batches])
    assert sorted(covered.tolist()) == list(range(len(examples)))  # every example exactly once
    for b in batches:
        B, L = b.encoded.mask.shape
        assert len(b.indices) == B and b.attention.shape == (B, L) and b.probs.shape[0] == B
        padded = [examples[i].length(model.layout) for i in b.indices]
        assert max(padded) * B <= 30 or B == 1  # the layout's own padded measure stays under the budget
        assert torch.allclose(b.probs, probabilities(b.logits))
        assert (b.attention[~b.encoded.mask] == 0).all()
        for row, i in enumerate(b.indices):
            encoded, logits, attention = alone(model, examples[i])
            n = attention.shape[0]
            assert b.lengths[row] == int(encoded.mask.sum())  # attended items: tokens, or sentences for HAN
            assert torch.equal(b.encoded.mask[row, :n], encoded.mask[0]) and not b.encoded.mask[row, n:].any()
            assert torch.allclose(b.logits[row], logits, atol=1e-5), (name, examples[i].id)
            assert torch.allclose(b.attention[row, :n], attention, atol=1e-5)
            real = encoded.mask[0]
            assert torch.allclose(b.encoded.hidden[row, :n][real], encoded.hidden[0][real], atol=1e-5)


def test_cached_batch_lengths_count_sentences_for_han_and_tokens_otherwise():
    documents = random_documents([6, 2, 9])
    han = hierarchical("han", "rnn")
    (batch,) = cached_batches(han, documents, max_tokens=100_000)
    assert batch.lengths == [sum(1 for a, b in documents[i].sentences if b > a) for i in batch.indices]
    flan = hierarchical("flan", "rnn")
    (batch,) = cached_batches(flan, documents, max_tokens=100_000)
    assert batch.lengths == [len(documents[i].tokens) for i in batch.indices]
    (batch,) = cached_batches(flat(), documents, max_tokens=100_000)
    assert batch.lengths == [len(documents[i].tokens) for i in batch.indices]  # never SOS/EOS


def test_cached_batches_are_sorted_by_padded_length():
    model = flat()
    examples = random_examples(LENGTHS)
    order = np.concatenate([b.indices for b in cached_batches(model, examples, max_tokens=30)])
    assert np.all(np.diff([len(examples[i].tokens) for i in order]) >= 0)


def test_real_positions_by_hand():
    mask = torch.tensor([[False, True, True, False], [True, False, False, True], [False, False, False, False]])
    positions = real_positions(mask)
    assert [p.tolist() for p in positions] == [[1, 2], [0, 3], []]


# --------------------------------------------------------------------------------------------------
# Readout


@pytest.mark.parametrize("name", LINEAR)
def test_readout_logits_equal_decode_with_the_same_attention(name):
    model = MODELS[name]().eval()
    with torch.no_grad():  # S&S models start with a zero bias: make it count
        model.decoder.bias.copy_(torch.linspace(-0.5, 0.7, model.decoder.bias.numel()))
    examples = examples_for(model)
    (batch,) = cached_batches(model, examples, max_tokens=100_000)
    r = readout(model, batch.encoded)
    assert isinstance(r, Readout)
    B, L = batch.encoded.mask.shape
    assert r.values.shape == (B, L, batch.logits.shape[-1]) and r.bias.shape == (batch.logits.shape[-1],)
    assert torch.allclose(r.logits(batch.heads), batch.logits, atol=1e-5)  # the model's own attention
    g = torch.Generator().manual_seed(1)
    for leading in [(4,), (2, 3)]:  # stacks of imposed attentions: (P, B, L) and (P, Q, B, L)
        stack = masked_softmax(torch.randn(*leading, B, L, generator=g), batch.encoded.mask)
        with torch.no_grad():
            decoded, _ = model.decode(batch.encoded, stack)
        projected = r.logits(stack[..., None, :])  # one head
        assert projected.shape == (*leading, B, batch.logits.shape[-1])
        assert torch.allclose(projected, decoded, atol=1e-5), name
        assert not torch.allclose(projected[0], batch.logits, atol=1e-4)  # the imposed weights matter


def test_readout_of_one_item_is_w_h_plus_b_by_hand():
    model = flat("average", "tanh", 3)
    (batch,) = cached_batches(model, random_examples([4, 2]), max_tokens=100_000)
    r = readout(model, batch.encoded)
    W, b = model.decoder.weight.detach(), model.decoder.bias.detach()
    h = batch.encoded.hidden[0, 2]
    assert torch.allclose(r.values[0, 2], W @ h, atol=1e-6)
    one_hot = torch.zeros_like(batch.attention)
    one_hot[:, 2] = 1.0  # all weight on position 2 (a real token of both instances)
    assert torch.allclose(r.logits(one_hot[:, None])[0], W @ h + b, atol=1e-6)


# --------------------------------------------------------------------------------------------------
# Readout attention per head


@pytest.mark.parametrize("name", list(MODELS))
def test_imposing_each_heads_own_weights_gives_the_models_own_output(name):
    """The identity every manipulation is measured against: H = 1 for one distribution, the
    Transformer's `[CLS]` heads each with its own weights (not their mean imposed on all)."""
    model = MODELS[name]().eval()
    (batch,) = cached_batches(model, examples_for(model), max_tokens=100_000)
    B, L = batch.encoded.mask.shape
    heads = batch.heads
    assert heads.shape[0] == B and heads.shape[-1] == L
    assert heads.shape[1] == (2 if name.startswith("transformer") else 1)
    assert torch.allclose(heads.mean(dim=1), batch.attention, atol=1e-6)  # α̂ is the head mean
    with torch.no_grad():
        assert torch.allclose(decode_heads(model, batch.encoded, heads), batch.logits, atol=1e-5)
        stacked = decode_heads(model, batch.encoded, heads.expand(3, *heads.shape))  # leading axes
        assert stacked.shape == (3, *batch.logits.shape) and torch.allclose(stacked[2], batch.logits, atol=1e-5)
    r = readout(model, batch.encoded)
    assert isinstance(r, Readout if name in LINEAR else DecodedReadout) and r.linear == (name in LINEAR)
    assert torch.allclose(r.logits(heads), batch.logits, atol=1e-5)


def test_the_transformers_heads_are_imposed_one_by_one():
    model = transformer(layers=2, heads=2).eval()
    (batch,) = cached_batches(model, random_documents([5, 8, 3]), max_tokens=100_000)
    swapped = batch.heads.flip(1)  # head 0 gets head 1's weights and back: the same head mean
    with torch.no_grad():
        mean_on_all, _ = model.decode(batch.encoded, batch.attention)
        assert not torch.allclose(decode_heads(model, batch.encoded, swapped), batch.logits, atol=1e-4)
    assert not torch.allclose(mean_on_all, batch.logits, atol=1e-4)  # why the experiments carry the head axis


def test_a_model_of_one_distribution_refuses_several_heads():
    model = flat()
    (batch,) = cached_batches(model, random_examples([3, 4]), max_tokens=100_000)
    with pytest.raises(ValueError, match="model 'lstm-tanh' reads out one attention distribution, got 2 heads"):
        decode_heads(model, batch.encoded, batch.heads.expand(-1, 2, -1))
