"""Batched input variants (attnexp.explain.perturb): `erased_example` against spans worked out by
hand, and `variant_probabilities` against building each erased input by hand and running it alone,
for every layout (`sos_eos` flat and QA, `tokens` FLAN, `sentences` HAN). Leave-one-out, built on it,
on the S&S layouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import flat, hierarchical, qa, random_documents, random_examples

from attnexp.explain.leave_one_out import leave_one_out
from attnexp.explain.perturb import ERASE_OPS, erased_example, variant_probabilities
from attnexp.metrics import tvd
from attnexp.models.inputs import PAD, UNK, Example, collate
from attnexp.models.outputs import probabilities

torch.use_deterministic_algorithms(True)

LENGTHS = [7, 3, 11, 2, 5, 9]


# --------------------------------------------------------------------------------------------------
# by hand: an erased input built without erased_example, run alone


def by_hand_erased(example: Example, erase: np.ndarray, op: str) -> Example:
    if op == "attention_mask":  # the input as it is: the tokens lose their attention below
        return example
    if op != "delete":
        tokens = example.tokens.copy()
        for t in np.flatnonzero(erase):
            tokens[t] = UNK if op == "unk" else PAD
        return Example(example.id, tokens, example.label, list(example.sentences), example.question)
    tokens, sentences = [], []
    for a, b in example.sentences:  # the kept words of each sentence; a sentence left empty disappears
        kept = [int(example.tokens[t]) for t in range(a, b) if not erase[t]]
        if kept:
            sentences.append((len(tokens), len(tokens) + len(kept)))
            tokens += kept
    return Example(example.id, np.array(tokens, dtype=np.int64), example.label, sentences, example.question)


def by_hand_probabilities(model, example: Example, erase: np.ndarray, op: str) -> np.ndarray:
    variant = by_hand_erased(example, erase, op)
    with torch.no_grad():
        encoded = model.encode(collate([variant], model.layout))
        if op in ("pad_masked", "attention_mask"):
            offset = 1 if model.layout == "sos_eos" else 0
            mask = encoded.mask.clone()
            for t in np.flatnonzero(erase):
                mask[0, t + offset] = False
            encoded = encoded._replace(mask=mask)
        logits, alpha = model.decode(encoded)
        if op in ("pad_masked", "attention_mask"):
            assert all(alpha[0, t + offset] == 0 for t in np.flatnonzero(erase))
    return probabilities(logits)[0].numpy()


def random_masks(examples, per_instance=4, seed=0, keep_one=True):
    """(owners, erase): `per_instance` random erase masks of each instance, in a shuffled order; with
    `keep_one` at least one token survives (an empty FLAN/HAN input cannot be encoded)."""
    rng = np.random.RandomState(seed)
    owners, erase = [], []
    for i, e in enumerate(examples):
        n = len(e.tokens)
        for _ in range(per_instance):
            m = rng.rand(n) < 0.4
            if keep_one and m.all():
                m[rng.randint(n)] = False
            owners.append(i)
            erase.append(m)
    order = rng.permutation(len(owners))
    return np.array(owners)[order], [erase[k] for k in order]


# --------------------------------------------------------------------------------------------------
# erased_example


def test_erased_example_replaces_tokens_for_unk_and_pad_masked():
    e = Example("x", np.array([4, 5, 6, 7]), 1, [(0, 2), (2, 4)])
    erase = np.array([False, True, False, True])
    unk = erased_example(e, erase, "unk")
    assert unk.tokens.tolist() == [4, UNK, 6, UNK] and unk.sentences == [(0, 2), (2, 4)] and unk.label == 1
    pad = erased_example(e, erase, "pad_masked")
    assert pad.tokens.tolist() == [4, PAD, 6, PAD]
    assert e.tokens.tolist() == [4, 5, 6, 7]  # the original is untouched


def test_zero_replaces_tokens_by_the_zero_embedding_and_attention_mask_keeps_them():
    e = Example("x", np.array([4, 5, 6, 7]), 1, [(0, 4)])
    erase = np.array([True, False, False, True])
    assert erased_example(e, erase, "zero").tokens.tolist() == [PAD, 5, 6, PAD]
    assert erased_example(e, erase, "attention_mask") is e
    model = flat("lstm", "tanh", 1)
    assert torch.equal(model.embedding.weight[PAD], torch.zeros(model.embedding.weight.shape[1]))
    examples = random_examples([5])
    erase = [np.array([False, True, False, False, True])]
    zero, masked = (
        variant_probabilities(model, examples, np.array([0]), erase, op) for op in ("zero", "attention_mask")
    )
    # zero: <PAD> ids in the input, still attended; attention_mask: the same input, the tokens not attended
    assert not np.allclose(zero, masked)


def test_masking_operators_need_attention_applied_in_decode():
    from attnexp.explain.perturb import supports_op
    from attnexp.spec import parse_model_name

    for name, op, supported in [
        ("lstm-tanh", "attention_mask", True),
        ("flan-rnn", "attention_mask", True),
        ("han-rnn", "attention_mask", False),
        ("han-rnn", "zero", True),
        ("transformer-cls", "attention_mask", False),
        ("transformer-cls", "zero", True),
    ]:
        assert supports_op(parse_model_name(name, "binary"), op) == supported, (name, op)
    with pytest.raises(ValueError, match="must be one of"):
        supports_op(parse_model_name("lstm-tanh", "binary"), "blank")


def test_erased_example_delete_shifts_sentence_spans_and_drops_emptied_sentences():
    # words a b | c | d e f g (ids 4..10); erase b, c (its whole sentence) and f
    e = Example("x", np.arange(4, 11), 0, [(0, 2), (2, 3), (3, 7)])
    erase = np.array([False, True, True, False, False, True, False])
    out = erased_example(e, erase, "delete")
    assert out.tokens.tolist() == [4, 7, 8, 10]  # a d e g
    assert [(a, b) for a, b in out.sentences if b > a] == [(0, 1), (1, 4)]  # [a] [d e g]
    assert all(0 <= a <= b <= len(out.tokens) for a, b in out.sentences)
    batch = collate([out], "sentences")  # the emptied sentence is gone from the HAN input
    assert batch.lengths.tolist() == [2] and batch.sentence_lengths[0].tolist() == [1, 3]
    assert batch.tokens[0, 0].tolist() == [4, 0, 0] and batch.tokens[0, 1].tolist() == [7, 8, 10]
    assert out.length("sentences") == 2 * 3
    assert e.tokens.tolist() == list(range(4, 11)) and e.sentences == [(0, 2), (2, 3), (3, 7)]


def test_erased_example_delete_at_the_edges():
    e = Example("x", np.arange(4, 10), 0, [(0, 3), (3, 6)])
    first_and_last = erased_example(e, np.array([True, False, False, False, False, True]), "delete")
    assert first_and_last.tokens.tolist() == [5, 6, 7, 8] and first_and_last.sentences == [(0, 2), (2, 4)]
    nothing = erased_example(e, np.zeros(6, dtype=bool), "delete")
    assert nothing.tokens.tolist() == e.tokens.tolist() and nothing.sentences == e.sentences


def test_erased_example_refuses_a_mask_of_the_wrong_length():
    e = Example("x", np.array([4, 5, 6]), 0, [(0, 3)])
    with pytest.raises(ValueError, match="'x': an erase mask of shape \\(2,\\) for 3 tokens"):
        erased_example(e, np.array([True, False]), "delete")


# --------------------------------------------------------------------------------------------------
# variant_probabilities, every layout


MODELS = {
    "flat-lstm-tanh": lambda: flat("lstm", "tanh", 1),
    "flat-cnn-dot-3": lambda: flat("cnn", "dot", 3),
    "qa-average-tanh": lambda: qa("average", "tanh"),
    "flan-rnn": lambda: hierarchical("flan", "rnn"),
    "flan-conv": lambda: hierarchical("flan", "conv", n_classes=3),
    "han-rnn": lambda: hierarchical("han", "rnn"),
    "han-none": lambda: hierarchical("han", "none", n_classes=3),
}
CASES = [
    (name, op)
    for name in MODELS
    for op in ERASE_OPS
    if not (name.startswith("han") and op in ("pad_masked", "attention_mask"))
]


def examples_for(model, seed=0):
    if model.spec.family == "qa":
        return random_examples(LENGTHS, seed, question=True)
    return random_documents(LENGTHS, seed)  # several sentences each (one per example would hide span bugs)


@pytest.mark.parametrize("name, op", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_variant_probabilities_equal_each_erased_input_run_alone(name, op):
    model = MODELS[name]()
    assert model.layout == model.spec.layout
    examples = examples_for(model)
    owners, erase = random_masks(examples)
    probs = variant_probabilities(model, examples, owners, erase, op, max_tokens=40)  # several batches
    assert probs.shape == (
        len(owners),
        3 if name in ("flat-cnn-dot-3", "qa-average-tanh", "flan-conv", "han-none") else 2,
    )
    for v, (o, m) in enumerate(zip(owners, erase)):
        assert np.allclose(probs[v], by_hand_probabilities(model, examples[o], m, op), atol=1e-6), (name, op, v)
    unerased = variant_probabilities(
        model, examples, np.arange(len(examples)), [np.zeros(len(e.tokens), bool) for e in examples], op
    )
    with torch.no_grad():
        full = np.stack([probabilities(model(collate([e], model.layout))[0])[0].numpy() for e in examples])
    assert np.allclose(unerased, full, atol=1e-6)  # erasing nothing gives the model's own output
    assert np.abs(probs - full[owners]).max() > 1e-4  # and erasing something changes it


@pytest.mark.parametrize("name", ["flat-lstm-tanh", "han-rnn", "flan-conv"])
def test_variant_probabilities_do_not_depend_on_batching(name):
    model = MODELS[name]()
    examples = examples_for(model, seed=2)
    owners, erase = random_masks(examples, seed=3)
    small = variant_probabilities(model, examples, owners, erase, "delete", max_tokens=30)
    large = variant_probabilities(model, examples, owners, erase, "delete", max_tokens=100_000)
    assert np.allclose(small, large, atol=1e-6)


def test_deleting_every_token_of_a_sos_eos_input_leaves_the_output_bias():
    """<SOS> <EOS> alone: no real token to attend, so the context is zero and the logits are the bias."""
    model = flat("lstm", "tanh", 3)
    examples = random_examples([4, 1])
    probs = variant_probabilities(model, examples, np.array([0, 1]), [np.ones(4, bool), np.ones(1, bool)], "delete")
    with torch.no_grad():
        bias = probabilities(model.decoder.bias[None])[0].numpy()
    assert np.allclose(probs, np.stack([bias, bias]), atol=1e-6)


@pytest.mark.parametrize("architecture", ["flan", "han"])
def test_deleting_every_token_of_a_flan_or_han_input_is_refused_naming_the_instance(architecture):
    model = hierarchical(architecture, "rnn")
    examples = random_documents([4, 1])
    with pytest.raises(ValueError, match="instance 'doc1': deleting all of its 1 tokens leaves nothing"):
        variant_probabilities(
            model, examples, np.array([0, 1]), [np.array([True, False, False, False]), np.ones(1, bool)], "delete"
        )
    unk = variant_probabilities(model, examples, np.array([1]), [np.ones(1, bool)], "unk")  # <UNK> keeps the input
    assert np.allclose(unk[0], by_hand_probabilities(model, examples[1], np.ones(1, bool), "unk"), atol=1e-6)


def test_variant_probabilities_refuse_bad_requests():
    examples = random_documents([3, 4])
    han = hierarchical("han", "rnn")
    with pytest.raises(
        ValueError, match="pad_masked erasure is defined for token-level layouts, not HAN's `sentences`"
    ):
        variant_probabilities(han, examples, np.array([0]), [np.array([True, False, False])], "pad_masked")
    with pytest.raises(ValueError, match="erase operation must be one of"):
        variant_probabilities(flat(), examples, np.array([0]), [np.array([True, False, False])], "blank")
    with pytest.raises(ValueError, match="attention_mask erasure is defined for token-level layouts"):
        variant_probabilities(han, examples, np.array([0]), [np.array([True, False, False])], "attention_mask")
    with pytest.raises(ValueError, match="2 variant owners for 1 erase masks"):
        variant_probabilities(flat(), examples, np.array([0, 1]), [np.array([True, False, False])], "delete")
    with pytest.raises(ValueError, match="no variants to run"):
        variant_probabilities(flat(), examples, np.array([], dtype=np.int64), [], "delete")


# --------------------------------------------------------------------------------------------------
# leave-one-out on the S&S layouts


@pytest.mark.parametrize(
    "name, op",
    [
        ("flan-rnn", "delete"),
        ("flan-conv", "unk"),
        ("flan-rnn", "pad_masked"),
        ("han-rnn", "delete"),
        ("han-none", "unk"),
    ],
)
def test_leave_one_out_of_flan_and_han_equals_erasing_each_token_by_hand(name, op):
    model = MODELS[name]()
    examples = random_documents(LENGTHS, seed=4)
    with torch.no_grad():
        full = np.stack([probabilities(model(collate([e], model.layout))[0])[0].numpy() for e in examples])
    scores = leave_one_out(model, examples, full, op, max_tokens=40)
    for e, s, p in zip(examples, scores, full):
        n = len(e.tokens)
        by_hand = [
            float(tvd(torch.from_numpy(by_hand_probabilities(model, e, np.arange(n) == t, op)), torch.from_numpy(p)))
            for t in range(n)
        ]
        assert s.shape == (n,) and np.allclose(s, by_hand, atol=1e-6), (name, op, e.id)
    assert max(s.max() for s in scores) > 1e-4
