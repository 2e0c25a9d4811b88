"""Flat classifiers: shapes, masks, the encode/decode contract, padding invariance (issue 3)."""

import pytest
import torch

from attnexp.models.flat import FlatClassifier, FlatConfig, masked_softmax, real_token_mask

torch.use_deterministic_algorithms(True)


def batch(lengths, vocab=50, seed=0):
    """`<SOS> w.. <EOS> <PAD>..` rows: ids 2/3 for SOS/EOS, real words from 4."""
    g = torch.Generator().manual_seed(seed)
    L = max(lengths)
    tokens = torch.zeros(len(lengths), L, dtype=torch.long)
    for i, n in enumerate(lengths):
        tokens[i, 0], tokens[i, n - 1] = 2, 3
        tokens[i, 1 : n - 1] = torch.randint(4, vocab, (n - 2,), generator=g)
    return tokens, torch.tensor(lengths)


def model(encoder, attention, classes=1):
    torch.manual_seed(0)
    return FlatClassifier(FlatConfig(vocab_size=50, n_classes=classes, encoder=encoder, attention=attention, embedding_dim=16, hidden_size=8, kernel_sizes=(1, 3))).eval()


def test_real_token_mask_excludes_sos_eos_and_padding():
    mask = real_token_mask(torch.tensor([5, 3]), 6)
    assert mask.tolist() == [[False, True, True, True, False, False], [False, True, False, False, False, False]]


def test_masked_softmax_puts_exact_zeros_on_masked_positions():
    probs = masked_softmax(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[True, False, True]]))
    assert probs[0, 1].item() == 0.0 and torch.isclose(probs.sum(), torch.tensor(1.0))


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
@pytest.mark.parametrize("attention", ["tanh", "dot", "uniform"])
def test_shapes_masks_and_padding_invariance(encoder, attention):
    net = model(encoder, attention, classes=3)
    tokens, lengths = batch([7, 4, 9])
    with torch.no_grad():
        logits, alpha = net(tokens, lengths)
        assert logits.shape == (3, 3) and alpha.shape == (3, 9)
        mask = real_token_mask(lengths, 9)
        assert (alpha[~mask] == 0).all()
        assert torch.allclose(alpha.sum(-1), torch.ones(3))
        for i, n in enumerate(lengths.tolist()):  # an instance alone gives the same output as in the batch
            alone_logits, alone_alpha = net(tokens[i : i + 1, :n], lengths[i : i + 1])
            assert torch.allclose(alone_logits[0], logits[i], atol=1e-5)
            assert torch.allclose(alone_alpha[0], alpha[i, :n], atol=1e-6)


def test_uniform_attention_is_exactly_one_over_n_on_real_tokens():
    net = model("lstm", "uniform")
    tokens, lengths = batch([6, 3])
    with torch.no_grad():
        _, alpha = net(tokens, lengths)
    assert torch.allclose(alpha[0, 1:5], torch.full((4,), 0.25)) and alpha[1, 1].item() == 1.0


def test_decode_with_imposed_attention_uses_it_and_broadcasts_over_leading_axes():
    net = model("average", "guided")
    tokens, lengths = batch([5, 5])
    hidden, mask = net.encode(tokens, lengths)
    imposed = masked_softmax(torch.randn(4, 2, 5), mask)  # 4 candidate attentions per instance
    logits, alpha = net.decode(hidden, mask, imposed)
    assert logits.shape == (4, 2, 1) and torch.equal(alpha, imposed)
    one = net.decode(hidden, mask, imposed[1])[0]
    assert torch.allclose(logits[1], one)
    with pytest.raises(ValueError, match="guided"):
        net.decode(hidden, mask)


def test_unknown_encoder_or_attention_is_refused():
    with pytest.raises(ValueError, match="encoder"):
        FlatClassifier(FlatConfig(vocab_size=5, n_classes=1, encoder="gru"))
    with pytest.raises(ValueError, match="attention"):
        FlatClassifier(FlatConfig(vocab_size=5, n_classes=1, attention="soft"))
