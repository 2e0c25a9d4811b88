"""Every model family behind the encode/decode contract (attnexp.models): flat J&W/W&P classifiers
(lstm/cnn/average x tanh/dot/uniform, guided), question-conditioned QA/NLI models, and the S&S HAN/FLAN
models. Shapes, exact masking, padding invariance, imposed and broadcast attention, the spec each
model is built from (names themselves: tests/test_spec.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import random_documents

from attnexp.models import build_model, model_config, parse_model_name
from attnexp.models.attention import UniformAttention, masked_softmax, present_mask, real_token_mask
from attnexp.models.flat import FlatClassifier, FlatConfig
from attnexp.models.hierarchical import HierarchicalClassifier, HierarchicalConfig
from attnexp.models.inputs import EOS, PAD, SOS, Example, collate
from attnexp.models.qa import QAClassifier, QAConfig

torch.use_deterministic_algorithms(True)

VOCAB = 40
N_CLASSES = 3
# Token counts (no SOS/EOS) of the test batch: unequal, so every row but the longest is padded
LENGTHS = [9, 4, 13, 1, 7]


# --------------------------------------------------------------------------------------------------
# data


def make_examples(lengths=LENGTHS, seed=0, question=False, empty_sentence=False) -> list[Example]:
    """Random word ids (>= 4, so never PAD/UNK/SOS/EOS), cut into sentences of 1-4 words."""
    return random_documents(lengths, seed, N_CLASSES, question, empty_sentence, vocab=VOCAB)


def make_guides(examples, seed=1) -> dict[str, np.ndarray]:
    rng = np.random.RandomState(seed)
    return {e.id: rng.dirichlet(np.ones(len(e.tokens))).astype(np.float32) for e in examples}


def expected_mask(example: Example, layout: str, width: int) -> np.ndarray:
    """The attended items, computed from the example alone (not from the model's own helpers)."""
    mask = np.zeros(width, dtype=bool)
    n = len(example.tokens)
    if layout == "sos_eos":
        mask[1 : n + 1] = True
    elif layout == "tokens":
        mask[:n] = True
    else:
        mask[: sum(1 for a, b in example.sentences if b > a)] = True
    return mask


# --------------------------------------------------------------------------------------------------
# models: every family, tiny


def flat(encoder, attention, n_classes=N_CLASSES):
    """`attention="guided"`: `{encoder}-guided-lstm-tanh`. Built from its spec, like every model here."""
    name = f"{encoder}-guided-lstm-tanh" if attention == "guided" else f"{encoder}-{attention}"
    spec = parse_model_name(name, "multiclass")
    torch.manual_seed(0)
    cfg = FlatConfig(
        vocab_size=VOCAB, n_classes=n_classes, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=8
    )
    return build_model(spec, cfg).eval()


def qa(encoder, attention):
    spec = parse_model_name(f"{encoder}-{attention}", "qa")
    torch.manual_seed(0)
    cfg = QAConfig(
        vocab_size=VOCAB, n_classes=N_CLASSES, encoder=encoder, attention=attention, embedding_dim=8, hidden_size=8
    )
    return build_model(spec, cfg).eval()


def hierarchical(architecture, encoder):
    spec = parse_model_name(f"{architecture}-{encoder}", "multiclass")
    torch.manual_seed(0)
    cfg = HierarchicalConfig(
        vocab_size=VOCAB,
        n_classes=N_CLASSES,
        architecture=architecture,
        encoder=encoder,
        embedding_dim=8,
        hidden_size=4,
        conv_input_dropout=0.3,
        dropout_sentence=0.3,
        dropout_document=0.3,
        dropout_output=0.3,
    )  # dropout > 0: eval mode must switch it off for the invariances below
    return build_model(spec, cfg).eval()


FLAT = [
    (f"flat-{e}-{a}", lambda e=e, a=a: flat(e, a))
    for e in ("lstm", "cnn", "average")
    for a in ("tanh", "dot", "uniform")
]
GUIDED = [(f"guided-{e}", lambda e=e: flat(e, "guided")) for e in ("lstm", "cnn", "average")]
QA = [(f"qa-{e}-{a}", lambda e=e, a=a: qa(e, a)) for e in ("lstm", "cnn", "average") for a in ("tanh", "dot")]
SS = [
    (f"{arch}-{e}", lambda arch=arch, e=e: hierarchical(arch, e))
    for arch in ("han", "flan")
    for e in ("rnn", "conv", "none")
]
FAMILIES = FLAT + GUIDED + QA + SS
assert len(FAMILIES) == 9 + 3 + 6 + 6


def family(request_param):
    name, factory = request_param
    model = factory()
    examples = make_examples(question=name.startswith("qa"), empty_sentence=name.startswith("han"))
    guides = make_guides(examples) if model.guided else None
    return model, examples, guides


@pytest.fixture(params=FAMILIES, ids=[name for name, _ in FAMILIES])
def setup(request):
    return family(request.param)


def run(model, examples, guides=None):
    batch = collate(examples, model.layout, guides)
    with torch.no_grad():
        encoded = model.encode(batch)
        logits, alpha = model.decode(encoded, batch.guide if model.guided else None)
        forward_logits, forward_alpha = model(batch)
    assert torch.equal(logits, forward_logits) and torch.equal(alpha, forward_alpha)  # forward = decode(encode)
    return batch, encoded, logits, alpha


# --------------------------------------------------------------------------------------------------
# the contract, for every family


def test_layouts_and_guided_flags():
    layouts = {name: factory().layout for name, factory in FAMILIES}
    assert {layouts[n] for n, _ in FLAT + GUIDED + QA} == {"sos_eos"}
    assert {layouts[f"han-{e}"] for e in ("rnn", "conv", "none")} == {"sentences"}
    assert {layouts[f"flan-{e}"] for e in ("rnn", "conv", "none")} == {"tokens"}
    guided = {name for name, factory in FAMILIES if factory().guided}
    assert guided == {n for n, _ in GUIDED}


@pytest.mark.parametrize("param", FAMILIES, ids=[name for name, _ in FAMILIES])
def test_the_spec_describes_the_model_it_built(param):
    """What the experiments ask the spec (layout, imposed attention, attended items, own attention)
    is what the model does."""
    model, examples, guides = family(param)
    spec = model.spec
    assert spec.layout == model.layout and spec.imposed_attention == model.guided
    # computed by the model from its input (not imposed, not the frozen 1/n)
    assert spec.has_own_attention == (model.attention is not None and not isinstance(model.attention, UniformAttention))
    _, encoded, _, _ = run(model, examples, guides)
    counts = encoded.mask.sum(1).tolist()
    if spec.attended == "sentences":
        assert counts == [sum(1 for a, b in e.sentences if b > a) for e in examples]
    else:
        assert counts == [len(e.tokens) for e in examples]


def test_shapes(setup):
    model, examples, guides = setup
    batch, encoded, logits, alpha = run(model, examples, guides)
    B = len(examples)
    if model.layout == "sentences":
        L = max(sum(1 for a, b in e.sentences if b > a) for e in examples)
        assert batch.tokens.shape[:2] == (B, L)
    else:
        L = max(LENGTHS) + (2 if model.layout == "sos_eos" else 0)
        assert batch.tokens.shape == (B, L)
    assert logits.shape == (B, N_CLASSES)
    assert alpha.shape == (B, L)
    assert encoded.hidden.shape[:2] == (B, L) and encoded.mask.shape == (B, L)
    assert encoded.mask.dtype == torch.bool
    if isinstance(model, QAClassifier):
        assert encoded.query is not None and encoded.query.shape == (B, encoded.hidden.shape[-1])


def test_masked_items_get_exactly_zero_and_real_items_sum_to_one(setup):
    model, examples, guides = setup
    _, encoded, _, alpha = run(model, examples, guides)
    width = alpha.shape[1]
    mask = torch.from_numpy(np.stack([expected_mask(e, model.layout, width) for e in examples]))
    assert torch.equal(encoded.mask, mask)
    assert (alpha[~mask] == 0).all()  # exactly zero, not small: SOS, EOS, PAD, absent sentences
    assert torch.allclose(alpha.sum(-1), torch.ones(len(examples)), atol=1e-6)
    if not model.guided:
        assert (alpha[mask] > 0).all()  # a softmax or 1/n gives every real item some weight
    if model.layout == "sos_eos":  # the special tokens are where the mask says they are
        batch = collate(examples, model.layout)
        assert (batch.tokens[:, 0] == SOS).all()
        for row, e in zip(batch.tokens, examples):
            assert row[len(e.tokens) + 1] == EOS and (row[len(e.tokens) + 2 :] == PAD).all()


def test_masked_items_get_zero_in_training_mode_too(setup):
    model, examples, guides = setup
    model.train()
    torch.manual_seed(1)
    batch = collate(examples, model.layout, guides)
    _, alpha = model(batch)
    mask = torch.from_numpy(np.stack([expected_mask(e, model.layout, alpha.shape[1]) for e in examples]))
    assert (alpha[~mask] == 0).all()
    assert torch.allclose(alpha.sum(-1), torch.ones(len(examples)), atol=1e-6)


def test_an_instance_alone_gives_the_same_output_as_inside_a_padded_batch(setup):
    model, examples, guides = setup
    _, _, logits, alpha = run(model, examples, guides)
    for i, example in enumerate(examples):
        _, _, alone_logits, alone_alpha = run(model, [example], guides)
        n = alone_alpha.shape[1]
        assert n <= alpha.shape[1]
        assert torch.allclose(alone_logits[0], logits[i], atol=1e-5), (example.id, alone_logits[0], logits[i])
        assert torch.allclose(alone_alpha[0], alpha[i, :n], atol=1e-5)
        assert (alpha[i, n:] == 0).all()


def test_decode_broadcasts_a_stack_of_imposed_attentions(setup):
    model, examples, guides = setup
    batch, encoded, _, _ = run(model, examples, guides)
    P = 4
    g = torch.Generator().manual_seed(3)
    stack = masked_softmax(torch.randn(P, *encoded.mask.shape, generator=g), encoded.mask)  # (P, B, L)
    with torch.no_grad():
        logits, alpha = model.decode(encoded, stack)
        assert logits.shape == (P, len(examples), N_CLASSES)
        assert torch.equal(alpha, stack)
        for p in range(P):
            one, _ = model.decode(encoded, stack[p])
            assert torch.allclose(logits[p], one, atol=1e-6)
        assert not torch.allclose(logits[0], logits[1], atol=1e-4)  # the imposed weights matter


OWN_ATTENTION = FLAT + QA + SS  # not the guided models: they have no attention of their own


@pytest.mark.parametrize("param", OWN_ATTENTION, ids=[name for name, _ in OWN_ATTENTION])
def test_imposing_the_models_own_attention_reproduces_its_output(param):
    model, examples, _ = family(param)
    _, encoded, logits, alpha = run(model, examples)
    with torch.no_grad():
        again, returned = model.decode(encoded, alpha)
    assert torch.equal(returned, alpha)
    assert torch.allclose(again, logits, atol=1e-6)


# --------------------------------------------------------------------------------------------------
# family specifics


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
def test_uniform_attention_is_exactly_one_over_n_on_real_tokens(encoder):
    model = flat(encoder, "uniform")
    examples = make_examples()
    _, _, _, alpha = run(model, examples)
    for row, e in zip(alpha, examples):
        n = len(e.tokens)
        assert torch.equal(row[1 : n + 1], torch.full((n,), 1.0) / n)
        assert row[0] == 0 and (row[n + 1 :] == 0).all()
    assert model.attention is not None and not list(model.attention.parameters())


def test_binary_flat_model_has_one_sigmoid_logit():
    model = flat("lstm", "tanh", n_classes=1)
    _, _, logits, _ = run(model, make_examples())
    assert logits.shape == (len(LENGTHS), 1)


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
def test_guided_forward_uses_the_batch_guide_exactly(encoder):
    model = flat(encoder, "guided")
    assert model.attention is None and not any(n.startswith("attention") for n, _ in model.named_parameters())
    examples = make_examples()
    guides = make_guides(examples, seed=1)
    batch = collate(examples, model.layout, guides)
    with torch.no_grad():
        logits, alpha = model(batch)
    assert torch.equal(alpha, batch.guide)
    for row, e in zip(alpha, examples):  # the guide sits on w_1..w_n, after <SOS>
        assert torch.equal(row[1 : len(e.tokens) + 1], torch.from_numpy(guides[e.id]))
    other = collate(examples, model.layout, make_guides(examples, seed=2))
    with torch.no_grad():
        other_logits, other_alpha = model(other)
    assert torch.equal(other_alpha, other.guide)
    multi = [i for i, e in enumerate(examples) if len(e.tokens) > 1]
    assert not torch.allclose(other_logits[multi], logits[multi], atol=1e-5)  # a different guide, other logits
    single = [i for i, e in enumerate(examples) if len(e.tokens) == 1]
    assert torch.allclose(other_logits[single], logits[single])  # one token: weight 1 either way
    with pytest.raises(ValueError, match="guided"):
        model.decode(model.encode(batch))


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
@pytest.mark.parametrize("attention", ["tanh", "dot"])
def test_qa_output_depends_on_the_question(encoder, attention):
    model = qa(encoder, attention)
    examples = make_examples(question=True)
    _, _, logits, alpha = run(model, examples)
    rng = np.random.RandomState(9)
    for e in examples:
        e.question = rng.randint(4, VOCAB, size=len(e.question) + 2).astype(np.int64)
    _, _, other_logits, other_alpha = run(model, examples)
    assert not torch.allclose(logits, other_logits, atol=1e-5)
    multi = [i for i, e in enumerate(examples) if len(e.tokens) > 1]
    assert not torch.allclose(alpha[multi], other_alpha[multi], atol=1e-6)  # the question steers the attention


def test_qa_batch_carries_the_question_with_sos_eos():
    examples = make_examples(question=True)
    batch = collate(examples, "sos_eos")
    assert batch.question_lengths.tolist() == [len(e.question) + 2 for e in examples]
    for row, e in zip(batch.question, examples):
        n = len(e.question)
        assert row[0] == SOS and row[n + 1] == EOS and row[1 : n + 1].tolist() == e.question.tolist()


@pytest.mark.parametrize("encoder", ["rnn", "conv", "none"])
def test_han_ignores_empty_sentences(encoder):
    model = hierarchical("han", encoder)
    with_empty = make_examples(empty_sentence=True)
    without = make_examples(empty_sentence=False)
    assert any(len(a.sentences) != len(b.sentences) for a, b in zip(with_empty, without))
    _, _, logits, alpha = run(model, with_empty)
    _, _, plain_logits, plain_alpha = run(model, without)
    assert torch.allclose(logits, plain_logits, atol=1e-6) and torch.allclose(alpha, plain_alpha, atol=1e-6)


@pytest.mark.parametrize("encoder", ["rnn", "conv", "none"])
def test_han_word_level_chunks_do_not_change_the_output(encoder):
    model = hierarchical("han", encoder)
    examples = make_examples()
    _, _, logits, alpha = run(model, examples)
    model.sentence_chunk = 1  # every sentence alone, padded to its own length
    model.lay_out_sentences = False  # conv/none: in chunks too
    _, _, chunked_logits, chunked_alpha = run(model, examples)
    assert torch.allclose(logits, chunked_logits, atol=1e-5) and torch.allclose(alpha, chunked_alpha, atol=1e-6)


@pytest.mark.parametrize("encoder", ["conv", "none"])
def test_han_sentences_laid_end_to_end_encode_as_alone(encoder):
    """The laid-out word level gives each sentence what it gets encoded alone: the same word
    attention, sentence vectors and gradients, whatever the PAD row holds."""
    model = hierarchical("han", encoder)
    assert model.word_encoder.reach == (2 if encoder == "conv" else 0)
    with torch.no_grad():
        model.embedding.weight[PAD] = 0.5  # padding's embedding never reaches a state
    batch = collate(make_examples(), model.layout)
    outputs = []
    for laid_out in (True, False):
        model.lay_out_sentences, model.sentence_chunk = laid_out, 1
        model.zero_grad()
        sentences, present, words = model._words_to_sentences(batch)
        sentences.pow(2).sum().backward()
        outputs.append(
            (sentences, words, model.embedding.weight.grad.clone(), model.word_attention.proj.weight.grad.clone())
        )
    for laid_out, alone in zip(*outputs):
        torch.testing.assert_close(laid_out, alone, atol=1e-6, rtol=1e-5)


def test_sentences_layout_pads_both_axes():
    examples = make_examples(empty_sentence=True)
    batch = collate(examples, "sentences")
    for i, e in enumerate(examples):
        spans = [(a, b) for a, b in e.sentences if b > a]
        assert batch.lengths[i] == len(spans)
        assert batch.sentence_lengths[i].tolist() == [b - a for a, b in spans] + [0] * (
            batch.tokens.shape[1] - len(spans)
        )
        for j, (a, b) in enumerate(spans):
            assert batch.tokens[i, j, : b - a].tolist() == e.tokens[a:b].tolist()
            assert (batch.tokens[i, j, b - a :] == PAD).all()
    with pytest.raises(ValueError, match="no non-empty sentence"):
        collate([Example("x", np.array([5]), 0, [(0, 0)])], "sentences")


def test_hierarchical_dropout_is_active_in_training_mode():
    model = hierarchical("han", "rnn").train()
    batch = collate(make_examples(), model.layout)
    torch.manual_seed(0)
    a, _ = model(batch)
    torch.manual_seed(1)
    b, _ = model(batch)
    assert not torch.allclose(a, b)
    model.eval()
    assert torch.equal(model(batch)[0], model(batch)[0])


# --------------------------------------------------------------------------------------------------
# mask helpers


def test_real_token_mask_excludes_sos_eos_and_padding():
    mask = real_token_mask(torch.tensor([5, 3]), 6)
    assert mask.tolist() == [[False, True, True, True, False, False], [False, True, False, False, False, False]]


def test_present_mask():
    assert present_mask(torch.tensor([2, 0, 3]), 3).tolist() == [
        [True, True, False],
        [False, False, False],
        [True, True, True],
    ]


def test_masked_softmax_puts_exact_zeros_on_masked_positions():
    probs = masked_softmax(
        torch.tensor([[1.0, 2.0, 3.0], [50.0, 0.0, 0.0]]), torch.tensor([[True, False, True], [False, True, True]])
    )
    assert probs[0, 1].item() == 0.0 and probs[1, 0].item() == 0.0
    assert torch.allclose(probs.sum(-1), torch.ones(2))
    assert torch.allclose(probs[0, [0, 2]], torch.softmax(torch.tensor([1.0, 3.0]), -1))
    assert torch.allclose(probs[1, 1:], torch.tensor([0.5, 0.5]))


# --------------------------------------------------------------------------------------------------
# construction errors


def test_unknown_encoder_or_attention_is_refused():
    with pytest.raises(ValueError, match="encoder"):
        FlatClassifier(FlatConfig(vocab_size=5, n_classes=1, encoder="gru", embedding_dim=4, hidden_size=4))
    with pytest.raises(ValueError, match="attention"):
        FlatClassifier(FlatConfig(vocab_size=5, n_classes=1, attention="soft", embedding_dim=4, hidden_size=4))
    with pytest.raises(ValueError, match="attention"):
        QAClassifier(QAConfig(vocab_size=5, n_classes=2, attention="uniform", embedding_dim=4, hidden_size=4))
    with pytest.raises(ValueError, match="encoder"):
        QAClassifier(QAConfig(vocab_size=5, n_classes=2, encoder="rnn", embedding_dim=4, hidden_size=4))
    with pytest.raises(ValueError, match="architecture"):
        HierarchicalClassifier(
            HierarchicalConfig(vocab_size=5, n_classes=2, architecture="deep", embedding_dim=4, hidden_size=4)
        )
    with pytest.raises(ValueError, match="encoder"):
        HierarchicalClassifier(
            HierarchicalConfig(vocab_size=5, n_classes=2, encoder="lstm2", embedding_dim=4, hidden_size=4)
        )


# --------------------------------------------------------------------------------------------------
# building a model from its spec


@pytest.mark.parametrize(
    "name, task, cls, layout",
    [
        ("lstm-tanh", "binary", FlatClassifier, "sos_eos"),
        ("average-guided-lstm-tanh", "binary", FlatClassifier, "sos_eos"),
        ("cnn-dot", "qa", QAClassifier, "sos_eos"),
        ("han-conv", "multiclass", HierarchicalClassifier, "sentences"),
        ("flan-rnn", "multiclass", HierarchicalClassifier, "tokens"),
    ],
)
def test_build_model_from_name(name, task, cls, layout):
    settings = {
        "hidden_size": 8,
        "conv_input_dropout": 0.1,
        "dropout": {"han": {"sentence": 0.1, "document": 0.2, "output": 0.3}, "flan": {"document": 0.4, "output": 0.5}},
    }
    spec = parse_model_name(name, task)
    config = model_config(spec, VOCAB, 3, 8, settings)
    model = build_model(spec, config)
    assert type(model) is cls and model.layout == layout
    assert model.guided == (spec.attention == "guided")
    if spec.family == "hierarchical":
        dropout = settings["dropout"][spec.architecture]
        assert (config.dropout_sentence, config.dropout_document, config.dropout_output) == (
            dropout.get("sentence", 0.0),
            dropout["document"],
            dropout["output"],
        )


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_birnn_over_the_padded_batch_equals_packed_sequences(cell):
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from attnexp.models.encoders import BiRNN

    torch.manual_seed(0)
    encoder = BiRNN(12, 6, cell).eval()
    x, lengths = torch.randn(5, 9, 12), torch.tensor([9, 3, 1, 7, 9])
    states, final = encoder.run(x, lengths)
    out, last = encoder.rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    last = last[0] if cell == "lstm" else last
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=9)
    assert torch.allclose(states, out, atol=1e-6) and torch.allclose(
        final, torch.cat([last[0], last[1]], dim=-1), atol=1e-6
    )
    assert (states[1, 3:] == 0).all()  # zero at padding
