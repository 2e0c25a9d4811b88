"""Attention attribution (attnexp.explain.attention_attribution, Hao et al. 2021):
completeness, the right/left Riemann sums, batching, and the token scores."""

from __future__ import annotations

import pytest
import torch
from tiny_models import random_examples, transformer

from attnexp.explain.attention_attribution import attention_attribution, repeat_batch, token_attribution
from attnexp.models.inputs import collate
from attnexp.models.outputs import class_probability


def setup(lengths=(5, 8), layers=3, seed=0):
    model = transformer(layers=layers).double()
    batch = collate(random_examples(list(lengths), seed), "sos_eos")
    return model, batch, torch.tensor([1, 0])


def probability_with_scaled_layer(model, batch, target, layer, scale):
    with torch.no_grad():
        _, maps = model.run(batch)
        logits, _ = model.run(batch, imposed={layer: scale * maps[layer]})
    return class_probability(logits, target)


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_completeness_every_layer(layer):
    """Σ_{h,i,j} Attr_{l,h} -> F(A_l) - F(0·A_l) as m grows (the top layer has its [CLS] row only)."""
    model, batch, target = setup()
    attribution, own = attention_attribution(model, batch, target, layer, steps=400)
    gap = probability_with_scaled_layer(model, batch, target, layer, 1.0) - probability_with_scaled_layer(
        model, batch, target, layer, 0.0
    )
    assert attribution.sum(dim=(1, 2, 3)).numpy() == pytest.approx(gap.numpy(), abs=2e-3)
    assert attribution.shape == own.shape


def test_right_and_left_riemann_sums_bracket_the_integral_and_converge():
    model, batch, target = setup()
    right, _ = attention_attribution(model, batch, target, 1, steps=20)
    left, _ = attention_attribution(model, batch, target, 1, steps=20, riemann="left")
    fine, _ = attention_attribution(model, batch, target, 1, steps=800)
    assert not torch.allclose(right, left)
    # the two sums differ by (A ⊙ (∂F(A) - ∂F(0))) / m: both are within that of the fine estimate
    gap = (right - left).abs().max()
    assert (right - fine).abs().max() <= gap + 1e-6 and (left - fine).abs().max() <= gap + 1e-6
    with pytest.raises(ValueError, match="attattr_riemann"):
        attention_attribution(model, batch, target, 1, riemann="middle")
    with pytest.raises(ValueError, match="layer 3"):
        attention_attribution(model, batch, target, 3)


def test_an_instance_is_attributed_the_same_alone_and_in_a_batch():
    model, batch, target = setup(lengths=(4, 9))
    together, _ = attention_attribution(model, batch, target, 0, steps=10)
    examples = random_examples([4, 9], 0)
    alone, _ = attention_attribution(model, collate(examples[1:], "sos_eos"), target[1:], 0, steps=10)
    assert torch.allclose(together[1, :, :11, :11], alone[0], atol=1e-10)


def test_token_scores_are_the_top_layers_cls_row_summed_over_heads():
    model, batch, target = setup()
    scores = token_attribution(model, batch, target, steps=10)
    top, _ = attention_attribution(model, batch, target, 2, steps=10)
    assert scores.shape == (2, 10)
    assert torch.allclose(scores, top[:, :, 0].sum(dim=1))
    real = model.encode(batch).mask
    assert (scores[~real] == 0).all()  # [CLS] reads only real tokens


def test_repeat_batch_stacks_instances():
    _, batch, _ = setup()
    repeated = repeat_batch(batch, 3)
    assert repeated.ids == batch.ids * 3 and torch.equal(repeated.tokens[2:4], batch.tokens)
    assert torch.equal(repeated.lengths, batch.lengths.repeat(3))
