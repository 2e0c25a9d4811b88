"""The small Transformer (attnexp.models.transformer): the shared encode/decode
contract, masks, truncation by key masking, imposed attention, head masks and the rollout maps."""

from __future__ import annotations

import pytest
import torch
from tiny_models import random_examples, transformer

from attnexp.explain.rollout import rollout_matrix
from attnexp.models.inputs import Batch, collate
from attnexp.models.transformer import TransformerClassifier, TransformerConfig
from attnexp.spec import parse_model_name


def batch_of(lengths, seed=0):
    return collate(random_examples(lengths, seed), "sos_eos")


def test_the_spec_of_the_transformer():
    spec = parse_model_name("transformer-cls", "binary")
    assert (spec.family, spec.layout, spec.attended) == ("transformer", "sos_eos", "tokens")
    assert (
        spec.has_own_attention and spec.attributable_input and spec.self_attention and spec.classifier and spec.imitable
    )
    assert not (spec.linear_readout or spec.word_vectors)


def test_the_wiegreffe_pinter_companions_of_the_transformer_are_models_of_the_vocabulary():
    base = parse_model_name("transformer-cls", "binary")
    uniform = parse_model_name(base.uniform_twin, "binary")
    assert (uniform.name, uniform.family, uniform.attention, uniform.has_own_attention) == (
        "transformer-uniform",
        "transformer",
        "uniform",
        False,
    )
    adversary = parse_model_name("transformer-cls-adversary-1e-3", "binary")
    assert (adversary.family, adversary.imitates, adversary.adversary_lambda, adversary.imitable) == (
        "transformer",
        "transformer-cls",
        1e-3,
        False,
    )
    guided = parse_model_name("average-guided-transformer-cls", "binary")
    assert (guided.family, guided.guide, guided.imposed_attention) == ("flat", "transformer-cls", True)
    assert base.diagnostic_trained("average") == "average-tanh"
    assert parse_model_name("lstm-dot", "binary").diagnostic_trained("average") == "average-dot"
    with pytest.raises(ValueError, match="an adversary imitates a flat or Transformer binary classifier"):
        parse_model_name("transformer-uniform-adversary-1e-3", "binary")
    with pytest.raises(ValueError, match="defined for classification tasks"):
        parse_model_name("transformer-uniform", "qa")


def test_the_uniform_twin_attends_one_over_n_in_every_head():
    model = transformer()
    model.cfg.attention = "uniform"
    batch = batch_of([3, 7, 5])
    with torch.no_grad():
        encoded = model.encode(batch)
        _, attention = model.decode(encoded)
    n = (batch.lengths - 2).float()
    assert torch.allclose(encoded.heads, encoded.mask[:, None].float() / n[:, None, None])
    assert torch.allclose(attention.sum(-1), torch.ones(3))
    with pytest.raises(ValueError, match="attends with 'cls' or 'uniform', got 'tanh'"):
        TransformerClassifier(TransformerConfig(vocab_size=10, n_classes=2, attention="tanh"))


def test_own_attention_covers_the_real_tokens_of_every_head():
    model, batch = transformer(), batch_of([3, 7, 5])
    with torch.no_grad():
        encoded = model.encode(batch)
        _, attention = model.decode(encoded)
    real = encoded.mask
    assert encoded.heads.shape == (3, 2, 9)
    assert torch.allclose(encoded.heads.sum(-1), torch.ones(3, 2))
    assert (encoded.heads[~real[:, None, :].expand_as(encoded.heads)] == 0).all()  # never SOS, EOS or PAD
    assert torch.allclose(attention, encoded.heads.mean(dim=1))


def test_an_instance_gives_the_same_output_alone_and_in_a_padded_batch():
    model = transformer()
    examples = random_examples([4, 9, 2], seed=1)
    with torch.no_grad():
        together, _ = model(collate(examples, "sos_eos"))
        alone = torch.cat([model(collate([e], "sos_eos"))[0] for e in examples])
    assert torch.allclose(together, alone, atol=1e-5)


def test_decode_of_encode_is_the_full_pass_and_embeddings_can_be_replaced():
    model, batch = transformer(layers=3), batch_of([5, 8])
    with torch.no_grad():
        logits, _ = model(batch)
        full, maps = model.run(batch)
        replaced, _ = model.decode(model.encode(batch, model.embedding(batch.tokens)))
    assert torch.allclose(logits, full, atol=1e-6) and torch.allclose(logits, replaced, atol=1e-6)
    assert [tuple(m.shape) for m in maps] == [(2, 2, 10, 10), (2, 2, 10, 10), (2, 2, 1, 10)]


def test_imposing_each_heads_own_weights_is_the_identity_and_one_distribution_goes_to_every_head():
    model, batch = transformer(), batch_of([6, 4])
    with torch.no_grad():
        encoded = model.encode(batch)
        own, _ = model.decode(encoded)
        same, _ = model.decode(encoded._replace(heads=encoded.heads.clone()))
        uniform = encoded.mask / encoded.mask.sum(-1, keepdim=True)
        imposed, returned = model.decode(encoded, uniform)
        per_head, _ = model.decode(encoded._replace(heads=uniform[:, None, :].expand(-1, 2, -1)))
        stacked, _ = model.decode(encoded, torch.stack([uniform, uniform]))  # leading axes broadcast
    assert torch.allclose(own, same)
    assert torch.allclose(imposed, per_head, atol=1e-6) and returned is uniform
    assert stacked.shape == (2, 2, 2) and torch.allclose(stacked[1], imposed, atol=1e-6)


def test_positions_beyond_max_length_are_cut_off_as_by_truncation():
    model = transformer(max_length=6)
    long = batch_of([10])  # <SOS> w1..w10 <EOS>: 12 positions, 6 with a learned embedding
    cut = Batch(long.ids, long.tokens[:, :6], torch.tensor([12]), long.labels)  # the same first 6 positions
    with torch.no_grad():
        full, _ = model(long)
        truncated, _ = model(cut)
        encoded = model.encode(long)
    assert torch.allclose(full, truncated, atol=1e-6)
    assert (encoded.heads[0, :, 6:] == 0).all() and encoded.mask[0, 1:11].all()  # still n = 10 real tokens


def test_head_masks_prune_heads():
    model, batch = transformer(layers=2, heads=2), batch_of([5, 7])
    with torch.no_grad():
        plain, _ = model.run(batch)
        ones, _ = model.run(batch, head_mask=torch.ones(2, 2))
        one_pruned, _ = model.run(batch, head_mask=torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
        _, maps = model.run(batch)
        zero_head = maps[0].clone()
        zero_head[:, 1] = 0
        imposed, _ = model.run(batch, imposed={0: zero_head})
    assert torch.allclose(plain, ones)
    assert not torch.allclose(plain, one_pruned) and torch.allclose(one_pruned, imposed, atol=1e-6)


def test_attention_maps_are_square_rows_summing_to_one_and_roll_out():
    model, batch = transformer(layers=3), batch_of([4, 6])
    with torch.no_grad():
        maps = model.attention_maps(batch)
        encoded = model.encode(batch)
    assert maps.shape == (2, 3, 2, 8, 8)
    present = torch.arange(8)[None, :] < batch.lengths[:, None]  # (B, T)
    sums = maps.sum(-1)  # (B, L, H, T)
    assert torch.allclose(sums[present[:, None, None, :].expand_as(sums)], torch.tensor(1.0))
    assert torch.allclose(maps[:, -1, :, 0], encoded.heads)  # the top layer's [CLS] row
    rows = rollout_matrix(maps.double(), present).sum(-1)
    assert torch.allclose(rows[present], torch.tensor(1.0, dtype=torch.float64))


def test_training_mode_applies_dropout_and_eval_mode_does_not():
    model, batch = transformer(dropout=0.5), batch_of([6, 6])
    with torch.no_grad():
        a, _ = model(batch)
        b, _ = model(batch)
        model.train()
        torch.manual_seed(1)
        c, _ = model(batch)
    assert torch.equal(a, b) and not torch.allclose(a, c)


def test_bad_shapes_are_refused():
    import pytest

    with pytest.raises(ValueError, match="divisible"):
        TransformerClassifier(TransformerConfig(vocab_size=10, n_classes=2, heads=3, d_model=8))
    with pytest.raises(ValueError, match="at least one layer"):
        TransformerClassifier(TransformerConfig(vocab_size=10, n_classes=2, layers=0))


def test_its_positions_are_its_tokens():
    model = transformer()
    examples = random_examples([3, 5])
    batch = collate(examples, "sos_eos")
    assert torch.equal(model.position_mask(batch), batch.tokens != 0)
    scores = torch.rand(2, batch.tokens.shape[1])
    assert model.token_scores(batch, scores) is scores
    vocab = [f"w{i}" for i in range(50)]
    labels = model.position_labels(batch, vocab)
    assert labels[0] == ["[CLS]", *(vocab[t] for t in examples[0].tokens), "<EOS>"] and len(labels[1]) == 7
