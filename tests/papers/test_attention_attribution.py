"""Hao et al. on the Transformer (attnexp.papers.attention_attribution.experiment): head importance, the
pruning order and curve, and the attribution graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import random_examples, transformer

import attnexp.papers.attention_attribution.experiment as aa
from attnexp.explain.attention_attribution import attention_attribution
from attnexp.models.inputs import collate


def test_head_importance_is_the_mean_of_each_heads_largest_attribution():
    model, examples = transformer(layers=2), random_examples([4, 7, 3], seed=2)
    importance = aa.head_importance(model, examples, steps=5, riemann="right", batch_size=2)
    expected = np.zeros((2, 2))
    for e in examples:  # one instance at a time, no padding
        batch = collate([e], "sos_eos")
        for layer in range(2):
            attribution, _ = attention_attribution(model, batch, batch.labels, layer, 5)
            expected[layer] += attribution[0].flatten(1).max(dim=-1).values.double().numpy()
    assert importance == pytest.approx(expected / 3, abs=1e-6)


def test_attention_importance_is_the_mean_of_each_heads_largest_weight():
    model, examples = transformer(layers=2), random_examples([4, 6], seed=3)
    importance = aa.attention_importance(model, examples, batch_size=1)
    assert importance.shape == (2, 2) and ((importance > 0) & (importance <= 1)).all()
    with torch.no_grad():
        _, maps = model.run(collate(examples[:1], "sos_eos"))
    assert importance[1, 0] >= maps[1][0, 0].max().item() / 2  # a mean of two maxima, one of them this


def test_pruning_order_and_counts():
    assert list(aa.pruning_order(np.array([[0.3, 0.1], [0.1, 0.9]]))) == [1, 2, 0, 3]  # ties: lower index
    assert [aa.pruned_heads(r, 16) for r in (0.0, 0.1, 0.5, 0.97, 1.0)] == [0, 2, 8, 16, 16]
    assert aa.pruned_heads(0.25, 6) == 2  # floor(1.5 + 0.5)


def test_pruning_curves_mask_the_least_important_heads_first():
    model, examples = transformer(layers=2), random_examples([5, 8, 3, 6], seed=4)
    orders = {"attribution": [np.array([3, 2, 1, 0])], "random": [np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2])]}
    curves = aa.pruning_curves(model, examples, orders, [0.0, 0.5, 1.0], batch_size=3)
    assert list(curves.columns) == ["order", "draw", "fraction", "heads_pruned", "accuracy"]
    assert len(curves) == 9 and set(curves.heads_pruned) == {0, 2, 4}
    batch = collate(examples, "sos_eos")
    with torch.no_grad():
        expected = (
            (model.run(batch, head_mask=torch.tensor([[1.0, 1.0], [0.0, 0.0]]))[0].argmax(-1) == batch.labels)
            .float()
            .mean()
            .item()
        )
        full = (model(batch)[0].argmax(-1) == batch.labels).float().mean().item()
    row = curves[(curves.order == "attribution") & (curves.fraction == 0.5)]
    assert row.accuracy.item() == pytest.approx(expected)
    assert list(curves[curves.fraction == 0.0].accuracy) == pytest.approx([full] * 3)
    assert curves[curves.fraction == 1.0].accuracy.nunique() == 1  # every head pruned: the orders agree


def test_attribution_graph_keeps_edges_above_the_threshold_from_the_root_down():
    model, example = transformer(layers=3), random_examples([6], seed=5)[0]
    graph = aa.attribution_graph(model, example, target=1, steps=10, riemann="right", threshold=0.4)
    top, *rest = graph["edges"]
    assert top["layer"] == 3 and top["i"] == 0 and top["j"] == graph["root"] and graph["root"] >= 1
    batch = collate([example], "sos_eos")
    reachable = {graph["root"]}
    for layer in (2, 1):
        attribution, _ = attention_attribution(model, batch, torch.tensor([1]), layer - 1, 10)
        summed = attribution[0].sum(0).double()
        normalised = summed / summed[1:].max()
        expected = [(i, j) for i in sorted(reachable) for j in range(8) if normalised[i, j] > 0.4]
        assert [(e["i"], e["j"]) for e in rest if e["layer"] == layer] == expected
        reachable |= {j for _, j in expected}
    assert all(e["score"] > 0.4 for e in rest)
    with pytest.raises(ValueError, match="at least two layers"):
        aa.attribution_graph(transformer(layers=1), example, 1, steps=5, riemann="right", threshold=0.4, skip_top=True)


def test_the_graph_figure_of_no_example_says_why():
    """A test split without an instance of 2 to `graph_max_tokens` tokens (one-token or long documents)
    has no attribution graph: the figure is one panel that says so."""
    from attnexp.papers.attention_attribution.plots import graph_figure

    figure = graph_figure([], layers=2, title="mine, transformer-cls (seed 10): attribution graphs")
    (panel,) = figure.axes
    assert [t.get_text() for t in panel.texts] == [
        "no example: no test instance has from 2 to attention_attribution.graph_max_tokens tokens"
    ]
