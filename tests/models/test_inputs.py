"""Model inputs (attnexp.models.inputs): length-bucketed and sorted batches, collation per layout
(incl. imposed guide attention), examples from records, class labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_tasks import VOCAB

from attnexp.models.inputs import UNK, Example, collate, length_bucketed_batches, sorted_batches, to_examples

# --------------------------------------------------------------------------------------------------
# batching


def skewed_lengths(n=400, seed=0):
    return np.maximum(1, np.random.RandomState(seed).lognormal(3.0, 1.0, size=n).astype(int))


@pytest.mark.parametrize("max_tokens", [None, 200])
def test_length_bucketed_batches_cover_every_index_once_within_the_limits(max_tokens):
    lengths = skewed_lengths()
    batches = length_bucketed_batches(lengths, 16, np.random.RandomState(0), 0.1, max_tokens)
    assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(len(lengths)))
    assert all(1 <= len(b) <= 16 for b in batches)
    if max_tokens is not None:
        # a batch's padded size stays under the cap, unless one instance alone exceeds it
        assert all(lengths[b].max() * len(b) <= max_tokens or len(b) == 1 for b in batches)
        assert any(len(b) < 16 for b in batches if lengths[b].max() * len(b) <= max_tokens)
        assert any(len(b) == 1 and lengths[b].max() > max_tokens for b in batches)


def test_length_bucketed_batches_are_deterministic_for_a_seed():
    lengths = skewed_lengths()
    a = length_bucketed_batches(lengths, 16, np.random.RandomState(7), 0.1, None)
    b = length_bucketed_batches(lengths, 16, np.random.RandomState(7), 0.1, None)
    c = length_bucketed_batches(lengths, 16, np.random.RandomState(8), 0.1, None)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not (len(a) == len(c) and all(np.array_equal(x, y) for x, y in zip(a, c)))


def padding_share(batches, lengths) -> float:
    real = sum(lengths[b].sum() for b in batches)
    padded = sum(lengths[b].max() * len(b) for b in batches)
    return 1 - real / padded


def test_length_bucketing_pads_much_less_than_random_batches():
    lengths = skewed_lengths(1000)
    rng = np.random.RandomState(0)
    bucketed = padding_share(length_bucketed_batches(lengths, 32, rng, 0.1, None), lengths)
    random_batches = np.array_split(rng.permutation(len(lengths)), len(lengths) // 32)
    shuffled = padding_share(random_batches, lengths)
    assert shuffled > 0.6  # the skew makes random batches mostly padding
    assert bucketed < 0.25 and bucketed < shuffled / 3


def test_length_bucketed_batch_order_is_shuffled():
    lengths = np.arange(1, 321)
    batches = length_bucketed_batches(lengths, 32, np.random.RandomState(0), 0.0, None)
    longest = [lengths[b].max() for b in batches]
    assert sorted(longest) != longest or len(batches) == 1
    assert [list(np.sort(lengths[b])) for b in sorted(batches, key=lambda b: lengths[b].max())] == [
        list(range(1 + 32 * i, 33 + 32 * i)) for i in range(10)
    ]  # without noise each batch is a run of consecutive lengths


def test_sorted_batches_are_in_length_order():
    lengths = skewed_lengths(100)
    batches = sorted_batches(lengths, 8, max_tokens=200)
    order = np.concatenate(batches)
    assert np.array_equal(np.sort(order), np.arange(100))
    assert np.all(np.diff(lengths[order]) >= 0)
    assert all(lengths[b].max() * len(b) <= 200 or len(b) == 1 for b in batches)
    assert all(len(b) <= 8 for b in batches)


# --------------------------------------------------------------------------------------------------
# examples and collation


def test_collate_refuses_a_guide_of_the_wrong_length():
    examples = [Example("a", np.array([4, 5, 6, 7]), 0, [(0, 4)]), Example("b", np.array([5, 6]), 1, [(0, 2)])]
    guides = {"a": np.full(3, 1 / 3), "b": np.array([0.5, 0.5])}
    with pytest.raises(ValueError, match=r"guide attention for 'a' has 3 weights, the instance has 4 tokens"):
        collate(examples, "sos_eos", guides)
    guides["a"] = np.full(5, 0.2)
    with pytest.raises(ValueError, match="'a' has 5 weights"):
        collate(examples, "tokens", guides)


@pytest.mark.parametrize("layout, offset", [("sos_eos", 1), ("tokens", 0)])
def test_collate_places_the_guide_on_the_words(layout, offset):
    examples = [Example("a", np.array([4, 5, 6]), 0, [(0, 3)]), Example("b", np.array([5]), 1, [(0, 1)])]
    guides = {"a": np.array([0.2, 0.3, 0.5]), "b": np.array([1.0])}
    batch = collate(examples, layout, guides)
    assert batch.guide.shape == batch.tokens.shape and batch.guide.dtype == torch.float32
    width = batch.tokens.shape[1]
    assert torch.allclose(batch.guide[0], torch.tensor([0.0] * offset + [0.2, 0.3, 0.5] + [0.0] * (width - 3 - offset)))
    assert torch.equal(batch.guide[1], torch.tensor([0.0] * offset + [1.0] + [0.0] * (width - 1 - offset)))


def test_collate_unknown_layout():
    with pytest.raises(ValueError, match="unknown layout"):
        collate([Example("a", np.array([4]), 0, [(0, 1)])], "words")


def test_to_examples_maps_words_and_labels():
    records = [
        {"id": "x", "tokens": ["good", "zzz", "w3"], "label": "pos", "sentences": [[0, 3]], "question": ["w1", "nope"]}
    ]
    (e,) = to_examples(records, VOCAB, ["neg", "pos"])
    assert e.tokens.tolist() == [VOCAB.index("good"), UNK, VOCAB.index("w3")] and e.label == 1
    assert e.question.tolist() == [VOCAB.index("w1"), UNK] and e.sentences == [(0, 3)]
    with pytest.raises(ValueError, match="'x'.*not one of the training labels"):
        to_examples(records, VOCAB, ["neg", "neutral"])


def test_example_length_per_layout():
    e = Example("x", np.arange(4, 11), 0, [(0, 2), (2, 2), (2, 7)])
    assert (e.length("sos_eos"), e.length("tokens"), e.length("sentences")) == (9, 7, 2 * 5)
