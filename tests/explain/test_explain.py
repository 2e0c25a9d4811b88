"""The per-instance attributions of attnexp.explain (gradient, leave-one-out, integrated gradients),
`explain_examples` and the explanation file, each against a brute-force computation on the tiny
models of tiny_models."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_models import flat, hierarchical, load_benchmark, qa, random_examples, transformer

from attnexp import io
from attnexp.explain import explain_examples, read_explanations, write_explanations
from attnexp.explain.attention_attribution import token_attribution
from attnexp.explain.gradient import gradient_importance
from attnexp.explain.integrated_gradients import ADAPTIVE_POINTS, integrated_gradients
from attnexp.explain.leave_one_out import leave_one_out
from attnexp.explain.rollout import rollout
from attnexp.models.inputs import PAD, UNK, Example, collate
from attnexp.models.outputs import probabilities
from attnexp.models.qa import QAClassifier
from attnexp.plan import CapabilityError

torch.use_deterministic_algorithms(True)

# Token counts (no SOS/EOS): unequal, so every row but the longest is padded; one single-token instance
LENGTHS = [7, 3, 11, 1, 5, 8]
EXPLAIN_SETTINGS = {
    "batch_size": 4,
    "loo_op": "delete",
    "ig_target": "logit",
    "ig_baseline": "pad",
    "ig_method": "gausslegendre",
    "ig_steps": 20,
    "ig_max_steps": 80,
    "ig_tolerance": 0.01,
    "rollout_readout": "cls",
    "attattr_steps": 10,
    "attattr_riemann": "right",
}


def make_examples(lengths=LENGTHS, seed=0, question=False) -> list[Example]:
    return random_examples(lengths, seed, question)


def full_probabilities(model, examples) -> np.ndarray:
    """(N, C) class probabilities, each instance run alone."""
    with torch.no_grad():
        return np.stack([probabilities(model(collate([e], "sos_eos"))[0])[0].numpy() for e in examples])


def predicted_of(model, batch) -> torch.Tensor:
    with torch.no_grad():
        return probabilities(model(batch)[0]).argmax(-1)


# --------------------------------------------------------------------------------------------------
# gradient importance


def brute_force_gradient(model, example: Example) -> torch.Tensor:
    """The J&W recipe for one instance alone -> (L,) over every position."""
    batch = collate([example], "sos_eos")
    e = model.embedding(batch.tokens).detach().requires_grad_(True)
    encoded = model.encode(batch, e)
    _, alpha = model.decode(encoded)
    logits, _ = model.decode(encoded, alpha.detach())
    probs = probabilities(logits)[0]
    probs[int(probs.argmax())].backward()
    return (e.grad * e).sum(-1)[0].detach()


def finite_difference_gradient(model, example: Example, h=1e-6) -> np.ndarray:
    """g_t = d/dλ F(e with e_t scaled by λ) at λ = 1, attention held at α̂, in float64: independent of autograd."""
    model = copy.deepcopy(model).double()
    batch = collate([example], "sos_eos")
    with torch.no_grad():
        e = model.embedding(batch.tokens)
        encoded = model.encode(batch, e)
        logits, alpha = model.decode(encoded)
        cls = int(probabilities(logits)[0].argmax())
        out = []
        for t in range(batch.tokens.shape[1]):
            values = []
            for lam in (1 + h, 1 - h):
                scaled = e.clone()
                scaled[0, t] *= lam
                values.append(probabilities(model.decode(model.encode(batch, scaled), alpha)[0])[0, cls].item())
            out.append((values[0] - values[1]) / (2 * h))
    return np.array(out)


@pytest.mark.parametrize("n_classes", [1, 3])
@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
def test_gradient_importance_equals_brute_force(encoder, n_classes):
    model = flat(encoder, "tanh", n_classes)
    examples = make_examples()
    batch = collate(examples, "sos_eos")
    g = gradient_importance(model, batch)
    assert g.shape == batch.tokens.shape
    for i, e in enumerate(examples):
        width = len(e.tokens) + 2
        brute = brute_force_gradient(model, e)
        assert torch.allclose(g[i, :width], brute, atol=1e-5), (e.id, g[i, :width], brute)
        real = slice(1, len(e.tokens) + 1)
        assert g[i, real].abs().max() > 1e-6  # a real signal, not zeros
    # one instance against finite differences in float64 (independent of the autograd recipe)
    e = examples[0]
    fd = finite_difference_gradient(model, e)
    g64 = gradient_importance(copy.deepcopy(model).double(), collate([e], "sos_eos"))[0].numpy()
    assert np.allclose(g64, fd, atol=1e-6), (g64, fd)


def test_gradient_importance_of_the_transformer_holds_each_readout_head_constant():
    """Finite differences in float64 with the top layer's per-head [CLS] attention fixed at its own
    values; the self-attention below moves with the input."""
    model = transformer(layers=2).double()
    example = make_examples()[0]
    batch = collate([example], "sos_eos")
    with torch.no_grad():
        e = model.embedding(batch.tokens)
        encoded = model.encode(batch, e)
        cls = int(probabilities(model.decode(encoded)[0])[0].argmax())
        h, differences = 1e-6, []
        for t in range(batch.tokens.shape[1]):
            values = []
            for lam in (1 + h, 1 - h):
                scaled = e.clone()
                scaled[0, t] *= lam
                moved = model.encode(batch, scaled)._replace(heads=encoded.heads)
                values.append(probabilities(model.decode(moved)[0])[0, cls].item())
            differences.append((values[0] - values[1]) / (2 * h))
    g = gradient_importance(model, batch)[0].numpy()
    assert np.allclose(g, differences, atol=1e-6) and np.abs(g).max() > 1e-4


@pytest.mark.parametrize("encoder", ["lstm", "cnn", "average"])
def test_gradient_importance_does_not_depend_on_padding(encoder):
    model = flat(encoder, "tanh")
    examples = make_examples()
    g = gradient_importance(model, collate(examples, "sos_eos"))
    for i, e in enumerate(examples):
        alone = gradient_importance(model, collate([e], "sos_eos"))[0]
        assert torch.allclose(g[i, : len(alone)], alone, atol=1e-5)


def test_gradient_importance_of_a_qa_model_is_over_the_passage():
    model = qa("lstm")
    examples = make_examples(question=True)
    g = gradient_importance(model, collate(examples, "sos_eos"))
    for i, e in enumerate(examples):
        alone = brute_force_gradient(model, e)
        assert torch.allclose(g[i, : len(alone)], alone, atol=1e-5)


# --------------------------------------------------------------------------------------------------
# leave-one-out


def by_hand_leave_one_out(model, example: Example, op: str) -> np.ndarray:
    """Leave out each token by hand, one instance and one token at a time."""
    with torch.no_grad():
        full = probabilities(model(collate([example], "sos_eos"))[0])[0]
        changes = []
        for t in range(len(example.tokens)):
            tokens = example.tokens.copy()
            if op == "delete":
                tokens = np.concatenate([tokens[:t], tokens[t + 1 :]])
            else:
                tokens[t] = UNK if op == "unk" else PAD
            variant = Example(example.id, tokens, example.label, [(0, len(tokens))], example.question)
            batch = collate([variant], "sos_eos")
            if op != "delete":
                assert batch.tokens[0, t + 1] == (UNK if op == "unk" else PAD)
            encoded = model.encode(batch)
            if op == "pad_masked":
                mask = encoded.mask.clone()
                mask[0, t + 1] = False
                encoded = encoded._replace(mask=mask)
            logits, alpha = model.decode(encoded)
            if op == "pad_masked":
                assert alpha[0, t + 1] == 0
            changes.append(0.5 * (probabilities(logits)[0] - full).abs().sum().item())
    return np.array(changes)


@pytest.mark.parametrize("op", ["delete", "unk", "pad_masked"])
@pytest.mark.parametrize("encoder", ["lstm", "cnn"])
def test_leave_one_out_equals_deleting_tokens_by_hand(op, encoder):
    model = flat(encoder, "tanh")
    examples = make_examples()
    scores = leave_one_out(model, examples, full_probabilities(model, examples), op, max_tokens=40)  # several batches
    assert len(scores) == len(examples)
    for e, s in zip(examples, scores):
        assert s.shape == (len(e.tokens),)
        assert np.allclose(s, by_hand_leave_one_out(model, e, op), atol=1e-6), (e.id, op)
    assert max(s.max() for s in scores) > 1e-4  # leaving tokens out changes the output


@pytest.mark.parametrize("op", ["delete", "unk", "pad_masked"])
def test_leave_one_out_equals_the_benchmark_reference(op):
    bench = load_benchmark()
    model = flat("lstm", "tanh", n_classes=3)
    examples = make_examples(seed=1)
    scores = leave_one_out(model, examples, full_probabilities(model, examples), op)
    reference = bench.reference_leave_one_out(model, examples, op)
    for s, r in zip(scores, reference):
        assert np.allclose(s, r, atol=1e-6)


def test_leave_one_out_ops_differ():
    model = flat("lstm", "tanh")
    examples = make_examples()
    probs = full_probabilities(model, examples)
    by_op = {op: np.concatenate(leave_one_out(model, examples, probs, op)) for op in ("delete", "unk", "pad_masked")}
    assert not np.allclose(by_op["delete"], by_op["unk"], atol=1e-6)
    assert not np.allclose(by_op["unk"], by_op["pad_masked"], atol=1e-6)


def test_leave_one_out_refuses_an_unknown_op_and_pad_masked_sentences():
    model = flat()
    examples = make_examples()
    with pytest.raises(ValueError, match="loo_op"):
        leave_one_out(model, examples, full_probabilities(model, examples), "blank")
    han = hierarchical("han", "rnn")  # HAN sentences: a token cannot be masked out of sentence attention
    with pytest.raises(ValueError, match="pad_masked erasure is defined for token-level layouts"):
        leave_one_out(han, examples, np.full((len(examples), 2), 0.5), "pad_masked")


@pytest.mark.parametrize("op", ["delete", "pad_masked"])
def test_leave_one_out_of_a_qa_model_keeps_the_question(op):
    model = qa("cnn")
    examples = make_examples(question=True)
    scores = leave_one_out(model, examples, full_probabilities(model, examples), op, max_tokens=30)
    for e, s in zip(examples, scores):
        assert np.allclose(s, by_hand_leave_one_out(model, e, op), atol=1e-6)
    # the question matters: with a different question the full-input probabilities change
    other = [Example(e.id, e.tokens, e.label, e.sentences, e.question[::-1].copy()) for e in examples]
    assert not np.allclose(full_probabilities(model, other), full_probabilities(model, examples), atol=1e-5)


# --------------------------------------------------------------------------------------------------
# integrated gradients


def target_values(model, batch, embedded, cls, target="logit") -> torch.Tensor:
    """F by hand: the predicted class's logit (BC: ±logit) or probability."""
    with torch.no_grad():
        logits, _ = model.decode(model.encode(batch, embedded))
    if target == "prob":
        return probabilities(logits)[torch.arange(len(cls)), cls]
    if logits.shape[-1] == 1:
        return torch.where(cls == 1, logits[:, 0], -logits[:, 0])
    return logits[torch.arange(len(cls)), cls]


def pad_baseline(model, batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Embeddings and the baseline: real tokens -> zero vectors, SOS/EOS/PAD unchanged."""
    with torch.no_grad():
        e = model.embedding(batch.tokens)
    lengths = batch.lengths
    real = torch.zeros(batch.tokens.shape, dtype=torch.bool)
    for i, n in enumerate(lengths.tolist()):
        real[i, 1 : n - 1] = True
    return e, e.masked_fill(real[:, :, None], 0.0), real


@pytest.mark.parametrize(
    "factory",
    [
        lambda: flat("lstm", "tanh", 1),
        lambda: flat("cnn", "dot", 3),
        lambda: flat("average", "tanh", 1),
        lambda: qa("lstm", "dot"),
    ],
    ids=["lstm-tanh-bc", "cnn-dot-3", "average-tanh-bc", "qa-lstm-dot"],
)
def test_integrated_gradients_completeness(factory):
    model = factory()
    examples = make_examples(question=isinstance(model, QAClassifier))
    batch = collate(examples, "sos_eos")
    cls = predicted_of(model, batch)
    result = integrated_gradients(
        model, batch, cls, target="logit", baseline="pad", steps=20, max_steps=80, tolerance=0.01
    )
    e, reference, real = pad_baseline(model, batch)
    gap = target_values(model, batch, e, cls) - target_values(model, batch, reference, cls)
    totals = result.scores.sum(-1)
    for i in range(len(examples)):
        assert abs(totals[i] - gap[i]) <= 0.01 * max(1.0, abs(gap[i].item())), (i, totals[i], gap[i])
        assert abs(result.delta[i]) <= 0.01 * max(1.0, abs(gap[i].item()))
    assert result.converged.all()
    assert set(result.steps.tolist()) <= {20, 40, 80}
    assert (result.scores[~real] == 0).all()  # exactly zero at SOS, EOS and PAD
    assert (batch.tokens[~real] < 4).all() and (batch.tokens[real] >= 4).all()  # real = the word positions
    assert gap.abs().max() > 1e-3  # the baseline changes the output


def test_integrated_gradients_of_the_probability_are_complete():
    model = flat("lstm", "tanh", 3)
    examples = make_examples()
    batch = collate(examples, "sos_eos")
    cls = predicted_of(model, batch)
    result = integrated_gradients(model, batch, cls, target="prob", steps=20, max_steps=80, tolerance=0.01)
    e, reference, real = pad_baseline(model, batch)
    gap = target_values(model, batch, e, cls, "prob") - target_values(model, batch, reference, cls, "prob")
    assert torch.allclose(result.scores.sum(-1), gap, atol=0.01)
    assert result.converged.all() and (result.scores[~real] == 0).all()
    logit = integrated_gradients(model, batch, cls, target="logit", steps=20, max_steps=80)
    assert not torch.allclose(logit.scores, result.scores, atol=1e-4)  # the target is honoured


def test_integrated_gradients_unk_baseline_and_single_instance():
    model = flat("lstm", "tanh")
    examples = make_examples()
    batch = collate(examples, "sos_eos")
    cls = predicted_of(model, batch)
    unk = integrated_gradients(model, batch, cls, baseline="unk", steps=20, max_steps=80)
    with torch.no_grad():
        e = model.embedding(batch.tokens)
        _, _, real = pad_baseline(model, batch)
        reference = torch.where(real[:, :, None], model.embedding(torch.full_like(batch.tokens, UNK)), e)
    gap = target_values(model, batch, e, cls) - target_values(model, batch, reference, cls)
    assert torch.allclose(unk.scores.sum(-1), gap, atol=0.01 * max(1.0, gap.abs().max().item()))
    # an instance alone gets the same attributions as inside the padded batch
    pad = integrated_gradients(model, batch, cls, steps=20, max_steps=80)
    alone = integrated_gradients(model, collate([examples[2]], "sos_eos"), cls[2:3], steps=20, max_steps=80)
    assert torch.allclose(pad.scores[2, : alone.scores.shape[1]], alone.scores[0], atol=1e-4)


def test_integrated_gradients_double_the_points_until_complete():
    """Too few points: unconverged instances are recomputed with 2, 4, 8, 16 points, each keeping the
    result of the first count that meets the tolerance (a ReLU CNN needs many)."""
    model = flat("cnn", "dot", 3)
    batch = collate(make_examples(), "sos_eos")
    cls = predicted_of(model, batch)
    tolerance = 1e-3
    result = integrated_gradients(model, batch, cls, steps=2, max_steps=16, tolerance=tolerance)
    e, reference, _ = pad_baseline(model, batch)
    gap = target_values(model, batch, e, cls) - target_values(model, batch, reference, cls)
    steps = result.steps.tolist()
    assert set(steps) <= {2, 4, 8, 16} and len(set(steps)) >= 3  # instances stop at different counts
    assert not result.converged.all()  # and some never get there
    for i, s in enumerate(steps):
        bound = tolerance * max(1.0, abs(gap[i].item()))
        assert bool(result.converged[i]) == (abs(result.delta[i].item()) <= bound)
        if not result.converged[i]:
            assert s == 16
    for s in set(steps):  # every instance holds the single pass at its own point count
        once = integrated_gradients(model, batch, cls, steps=s, max_steps=s, tolerance=tolerance)
        rows = [i for i, x in enumerate(steps) if x == s]
        assert torch.allclose(result.scores[rows], once.scores[rows], atol=1e-6)
        assert torch.allclose(result.delta[rows], once.delta[rows], atol=1e-6)
        if s < 16:  # fewer points than where it stopped were not enough
            assert not torch.isin(torch.tensor(rows), torch.nonzero(~once.converged).squeeze(-1)).any()
            later = [i for i, x in enumerate(steps) if x > s]  # refined further: not complete at s points
            assert not once.converged[later].any()


def test_integrated_gradients_riemann_trapezoid_runs():
    model = flat("cnn", "tanh")
    examples = make_examples()
    batch = collate(examples, "sos_eos")
    cls = predicted_of(model, batch)
    result = integrated_gradients(model, batch, cls, method="riemann_trapezoid", steps=20, max_steps=80, tolerance=0.01)
    assert result.scores.shape == batch.tokens.shape
    assert torch.isfinite(result.scores).all() and torch.isfinite(result.delta).all()
    assert set(result.steps.tolist()) <= {20, 40, 80}
    e, reference, real = pad_baseline(model, batch)
    gap = target_values(model, batch, e, cls) - target_values(model, batch, reference, cls)
    assert torch.allclose(result.scores.sum(-1) - gap, result.delta, atol=1e-4)  # δ is the completeness gap
    assert (result.scores[~real] == 0).all()


def test_integrated_gradients_adaptive_halves_segments_until_complete():
    """`adaptive`: the same integral as uniform points (a many-point reference), complete where doubling
    uniform points within the same budget is not (a ReLU CNN's kinked path), δ the completeness gap,
    points a multiple of the segment's, within the budget; an instance alone gets what it gets in the batch."""
    model = flat("cnn", "dot", 3)
    examples = make_examples()
    batch = collate(examples, "sos_eos")
    cls = predicted_of(model, batch)
    tolerance, budget = 1e-3, 32
    result = integrated_gradients(model, batch, cls, method="adaptive", steps=8, max_steps=budget, tolerance=tolerance)
    uniform = integrated_gradients(model, batch, cls, steps=8, max_steps=budget, tolerance=tolerance)
    reference = integrated_gradients(model, batch, cls, steps=4096, max_steps=4096, tolerance=tolerance)
    e, baseline, real = pad_baseline(model, batch)
    gap = target_values(model, batch, e, cls) - target_values(model, batch, baseline, cls)
    assert torch.allclose(result.scores.sum(-1) - gap, result.delta, atol=1e-4)
    bound = tolerance * gap.abs().clamp(min=1.0)
    assert torch.equal(result.converged, result.delta.abs() <= bound)
    assert result.converged.all() and not uniform.converged.all()
    assert (result.steps % ADAPTIVE_POINTS == 0).all() and (result.steps <= budget).all()
    assert (result.steps > 8).any()  # some instances needed more than the first segment
    assert (result.scores[~real] == 0).all()
    assert torch.allclose(result.scores, reference.scores, atol=0.05 * reference.scores.abs().max().item())
    alone = integrated_gradients(
        model,
        collate([examples[3]], "sos_eos"),
        cls[3:4],
        method="adaptive",
        steps=8,
        max_steps=budget,
        tolerance=tolerance,
    )
    assert torch.allclose(result.scores[3, : alone.scores.shape[1]], alone.scores[0], atol=1e-4)


def test_integrated_gradients_adaptive_keeps_to_its_point_budget():
    """A budget too small to converge: every instance stops at it or before, flagged unconverged."""
    model = flat("cnn", "dot", 3)
    batch = collate(make_examples(), "sos_eos")
    cls = predicted_of(model, batch)
    result = integrated_gradients(model, batch, cls, method="adaptive", steps=8, max_steps=16, tolerance=1e-6)
    assert (result.steps <= 16).all() and not result.converged.all()


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"target": "loss"}, "ig_target"),
        ({"baseline": "zero"}, "ig_baseline"),
        ({"method": "riemann_left"}, "ig_method"),
    ],
)
def test_integrated_gradients_refuse_unknown_settings(kwargs, name):
    model = flat()
    batch = collate(make_examples(), "sos_eos")
    with pytest.raises(ValueError, match=name):
        integrated_gradients(model, batch, predicted_of(model, batch), **kwargs)


# --------------------------------------------------------------------------------------------------
# explain_examples and the explanation file


@pytest.mark.parametrize("factory", [lambda: flat("lstm", "tanh"), lambda: qa("average", "tanh")], ids=["flat", "qa"])
def test_explain_examples_returns_one_record_per_example_in_order(factory):
    model = factory()
    examples = make_examples(question=isinstance(model, QAClassifier))
    logs = []
    records = explain_examples(model, examples, EXPLAIN_SETTINGS, log=logs.append)
    assert [r["id"] for r in records] == [e.id for e in examples]
    assert logs  # progress is reported
    alone_probs = full_probabilities(model, examples)
    for i, (r, e) in enumerate(zip(records, examples)):
        n = len(e.tokens)
        assert r["length"] == n and r["label"] == e.label
        for key in ("attention", "gradient", "loo", "ig"):
            assert len(r[key]) == n, key
        assert np.sum(r["attention"]) == pytest.approx(1.0, abs=1e-6) and (r["attention"] > 0).all()
        assert np.allclose(r["probs"], alone_probs[i], atol=1e-6)
        assert r["predicted"] == int(np.argmax(r["probs"]))
        # each vector is the instance's own, computed alone
        batch = collate([e], "sos_eos")
        with torch.no_grad():
            _, alpha = model(batch)
        assert np.allclose(r["attention"], alpha[0, 1 : n + 1].numpy(), atol=1e-6)
        assert np.allclose(r["gradient"], gradient_importance(model, batch)[0, 1 : n + 1].numpy(), atol=1e-5)
        assert np.allclose(r["loo"], by_hand_leave_one_out(model, e, "delete"), atol=1e-6)
        assert r["ig_converged"] and r["ig_steps"] in (20, 40, 80)
        ig = integrated_gradients(model, batch, torch.tensor([r["predicted"]]), steps=20, max_steps=80, tolerance=0.01)
        assert np.allclose(r["ig"], ig.scores[0, 1 : n + 1].numpy(), atol=1e-4)
        assert r["ig_steps"] == int(ig.steps[0]) and r["ig_delta"] == pytest.approx(float(ig.delta[0]), abs=1e-4)


@pytest.mark.parametrize(
    "factory",
    [lambda: flat("lstm", "tanh"), lambda: qa("lstm", "tanh"), lambda: transformer(layers=2)],
    ids=["flat", "qa", "transformer"],
)
def test_the_gradient_alone_gives_the_records_of_the_gradient_beside_other_methods(factory):
    """A gradient-only call (J&W's gradient job) takes its mask from the gradient's own forward pass,
    without the no-grad pass the other methods read: the same lengths and scores."""
    model = factory()
    examples = make_examples(question=isinstance(model, QAClassifier))
    alone = explain_examples(model, examples, EXPLAIN_SETTINGS, log=lambda _: None, methods=("gradient",))
    beside = explain_examples(model, examples, EXPLAIN_SETTINGS, log=lambda _: None, methods=("attention", "gradient"))
    assert all(set(r) == {"id", "length", "gradient"} for r in alone)
    for a, b in zip(alone, beside, strict=True):
        assert (a["id"], a["length"]) == (b["id"], b["length"]) and np.array_equal(a["gradient"], b["gradient"])


def test_explain_examples_of_the_transformer_add_rollout_and_attention_attribution():
    model = transformer(layers=2)
    examples = make_examples()
    records = explain_examples(model, examples, EXPLAIN_SETTINGS, log=lambda _: None)
    for r, e in zip(records, examples):
        n = len(e.tokens)
        batch = collate([e], "sos_eos")
        target = torch.tensor([r["predicted"]])
        with torch.no_grad():
            alone = rollout(model.attention_maps(batch))[0, 1 : n + 1].numpy()
        assert np.allclose(r["rollout"], alone, atol=1e-6) and (r["rollout"] > 0).all()
        attribution = token_attribution(model, batch, target, steps=10)[0, 1 : n + 1].numpy()
        assert np.allclose(r["attattr"], attribution, atol=1e-6) and np.abs(r["attattr"]).max() > 0
        assert np.sum(r["attention"]) == pytest.approx(1.0, abs=1e-6) and r["ig_converged"]
    assert (
        "rollout" not in explain_examples(flat("lstm", "tanh"), examples[:2], EXPLAIN_SETTINGS, log=lambda _: None)[0]
    )


def test_explain_examples_refuses_guided_and_hierarchical_models():
    examples = make_examples()
    guided = flat("lstm", "guided")
    with pytest.raises(CapabilityError) as err:
        explain_examples(guided, examples, EXPLAIN_SETTINGS, log=lambda _: None)
    assert (
        str(err.value)
        == "model 'lstm-guided-lstm-tanh': the explanation experiments need its own trained attention, which it lacks"
    )
    with pytest.raises(CapabilityError) as err:
        explain_examples(hierarchical("han", "rnn"), examples, EXPLAIN_SETTINGS, log=lambda _: None)
    assert str(err.value) == (
        "model 'han-rnn': the explanation experiments need an encoder over replaceable input embeddings "
        "(a flat, QA/NLI or Transformer model), which it lacks"
    )
    with pytest.raises(CapabilityError, match="'lstm-uniform'.*its own trained attention"):
        explain_examples(flat("lstm", "uniform"), examples, EXPLAIN_SETTINGS, log=lambda _: None)


def explanation_line(**overrides) -> dict:
    record = {
        "id": "a",
        "length": 3,
        "label": 1,
        "predicted": 0,
        "probs": [0.6, 0.4],
        "attention": [0.2, 0.3, 0.5],
        "gradient": [0.1, -0.2, 0.3],
        "loo": [0.0, 0.01, 0.02],
        "ig": [0.5, -0.1, 0.2],
        "ig_delta": 0.001,
        "ig_steps": 20,
        "ig_converged": True,
    }
    return record | overrides


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    io.write_seal(path)
    return path


def test_read_explanations_reads_vectors_as_arrays(tmp_path):
    records = read_explanations(
        write_lines(
            tmp_path / "ok.jsonl",
            [
                explanation_line(),
                explanation_line(id="b", length=1, attention=[1.0], gradient=[0.0], loo=[0.0], ig=[0.0]),
            ],
        )
    )
    assert [r["id"] for r in records] == ["a", "b"]
    assert isinstance(records[0]["gradient"], np.ndarray) and records[0]["gradient"].tolist() == [0.1, -0.2, 0.3]
    assert isinstance(records[0]["probs"], np.ndarray)


@pytest.mark.parametrize("key", ["attention", "gradient", "loo", "ig"])
def test_read_explanations_rejects_a_vector_of_the_wrong_length(tmp_path, key):
    bad = explanation_line(**{key: [0.1, 0.2]})
    with pytest.raises(ValueError, match=key):
        read_explanations(write_lines(tmp_path / "bad.jsonl", [explanation_line(id="first"), bad]))


@pytest.mark.parametrize("key", ["attention", "gradient", "loo", "ig"])
def test_read_explanations_refuses_non_finite_scores_naming_the_instance(tmp_path, key):
    bad = explanation_line(id="b", **{key: [0.1, float("nan"), 0.3]})
    path = write_lines(tmp_path / "bad.jsonl", [explanation_line(id="first"), bad])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: instance 'b' has non-finite {key} values"):
        read_explanations(path)


def test_non_finite_scores_are_never_written():
    from attnexp.explain import _serialisable

    with pytest.raises(ValueError, match=r"^instance 'x': 1 of its gradient values are not finite; nothing written"):
        _serialisable({"id": "x", "length": 2, "gradient": np.array([0.5, np.inf])})


# --- one file per method: written by write_explanations, joined by read_explanations ---


def test_each_method_is_its_own_file_and_read_explanations_joins_them(tmp_path):
    """One file per method, whether the methods were computed one job each or together in one pass
    (the explain_together job, integrated gradients too where `explain.together` adds them): the same
    bytes either way."""
    from tiny_tasks import load_config, run_fit, write_dataset

    data = write_dataset(tmp_path / "data")
    _, checkpoint = run_fit(load_config(), data, tmp_path / "model", epochs=1)
    run_dir = tmp_path / "synthetic" / "lstm-tanh" / "seed10"
    methods = ("attention", "gradient", "loo", "ig")
    for method in methods:
        write_explanations(
            checkpoint,
            data,
            {method: run_dir / f"{method}.jsonl"},
            EXPLAIN_SETTINGS,
            seed=10,
            threads=1,
            log=lambda _: None,
        )
    together = {method: tmp_path / "together" / f"{method}.jsonl" for method in methods}
    write_explanations(checkpoint, data, together, EXPLAIN_SETTINGS, seed=10, threads=1, log=lambda _: None)
    for method in methods:
        assert together[method].read_bytes() == (run_dir / f"{method}.jsonl").read_bytes(), method
    gradient = [json.loads(line) for line in (run_dir / "gradient.jsonl").read_text().splitlines()]
    assert set(gradient[0]) == {"id", "length", "gradient"}  # a method's file holds its own scores only
    joined = read_explanations([run_dir / f"{m}.jsonl" for m in ("attention", "gradient", "loo")])
    alone = read_explanations(run_dir / "attention.jsonl")
    assert [r["id"] for r in joined] == [r["id"] for r in alone]
    assert {"attention", "gradient", "loo", "probs", "predicted"} <= set(joined[0]) and "ig" not in joined[0]


def test_explanations_on_the_cpu_device_are_the_default_files_and_cuda_without_a_gpu_names_the_key(
    tmp_path, monkeypatch
):
    """`device: cpu`, and `auto` on a machine without a GPU, write the bytes a call without a device
    writes (the CPU path is unchanged); `cuda` without a GPU fails before any file is written."""
    from tiny_tasks import load_config, run_fit, write_dataset

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    data = write_dataset(tmp_path / "data")
    _, checkpoint = run_fit(load_config(), data, tmp_path / "model", epochs=1)
    for method in ("attention", "gradient", "loo", "ig"):
        written = {}
        for device in (None, "cpu", "auto"):
            out = tmp_path / str(device) / f"{method}.jsonl"
            kwargs = {} if device is None else {"device": device}
            write_explanations(
                checkpoint, data, {method: out}, EXPLAIN_SETTINGS, seed=10, threads=1, log=lambda _: None, **kwargs
            )
            written[device] = out.read_bytes()
        assert written["cpu"] == written[None] and written["auto"] == written[None], method
    with pytest.raises(RuntimeError, match="config key 'device' is 'cuda'"):
        write_explanations(
            checkpoint,
            data,
            {"loo": tmp_path / "cuda.jsonl"},
            EXPLAIN_SETTINGS,
            seed=10,
            threads=1,
            log=lambda _: None,
            device="cuda",
        )
    assert not (tmp_path / "cuda.jsonl").exists()


def test_read_explanations_refuses_files_of_different_instances_or_runs(tmp_path):
    (tmp_path / "run").mkdir()
    attention = write_lines(tmp_path / "run" / "attention.jsonl", [explanation_line(id="a"), explanation_line(id="b")])
    swapped = write_lines(
        tmp_path / "run" / "gradient.jsonl",
        [{"id": "b", "length": 3, "gradient": [0, 0, 0]}, {"id": "a", "length": 3, "gradient": [0, 0, 0]}],
    )
    with pytest.raises(ValueError, match="gradient.jsonl: its instances .* differ"):
        read_explanations([attention, swapped])
    (tmp_path / "other").mkdir()
    elsewhere = write_lines(tmp_path / "other" / "loo.jsonl", [explanation_line(id="a"), explanation_line(id="b")])
    with pytest.raises(ValueError, match="different runs"):
        read_explanations([attention, elsewhere])
    with pytest.raises(ValueError, match="none of the explanation keys"):
        read_explanations(write_lines(tmp_path / "run" / "empty.jsonl", [{"id": "a", "length": 3}]))


def test_a_self_attention_method_of_a_recurrent_model_is_an_error():
    with pytest.raises(ValueError, match=r"'lstm-tanh' has no \['rollout'\] explanations"):
        explain_examples(
            flat("lstm", "tanh"), make_examples(), EXPLAIN_SETTINGS, log=lambda _: None, methods=("rollout",)
        )


# --- leave-one-out on a BiLSTM: only the states a deletion changes are re-run ---


@pytest.mark.parametrize(
    "factory",
    [
        lambda: flat("lstm", "tanh"),
        lambda: flat("lstm", "dot", n_classes=3),
        lambda: qa("lstm", "tanh"),
        lambda: flat("lstm-ortho", "tanh"),
        lambda: flat("lstm-ortho", "dot", n_classes=3),
        lambda: flat("lstm-diversity", "tanh"),
        lambda: flat("lstm", "sparsemax"),
    ],
    ids=["flat", "flat-dot-3", "qa", "ortho", "ortho-dot-3", "diversity", "sparsemax"],
)
def test_recurrent_deletion_equals_re_running_every_shortened_input(factory):
    from attnexp.explain.perturb import variant_probabilities
    from attnexp.explain.recurrent_deletion import deletion_probabilities, supports_recurrent_deletion

    model = factory().eval()
    examples = make_examples([7, 3, 11, 1, 5, 8, 2, 11], question=isinstance(model, QAClassifier))
    assert supports_recurrent_deletion(model, "delete") and not supports_recurrent_deletion(model, "unk")
    owners = np.concatenate([np.full(len(e.tokens), i) for i, e in enumerate(examples)])
    erase = [row for e in examples for row in np.eye(len(e.tokens), dtype=bool)]
    rerun = variant_probabilities(model, examples, owners, erase, "delete")
    for budget in (10, 30, 100_000):  # one deletion per chunk, a few, and every instance in one batch
        fast = deletion_probabilities(model, examples, max_tokens=budget)
        assert [len(f) for f in fast] == [len(e.tokens) for e in examples]
        assert np.allclose(np.concatenate(fast), rerun, atol=1e-6)


@pytest.mark.parametrize("n_classes", [1, 3])
def test_recurrent_deletion_of_an_instance_without_tokens_is_empty(n_classes):
    """No deletions, (0, C) probabilities, also when a batch holds nothing else."""
    import dataclasses

    from attnexp.explain.recurrent_deletion import deletion_probabilities

    model = flat("lstm", "tanh", n_classes=n_classes).eval()
    examples = make_examples([4, 2])
    empty = dataclasses.replace(examples[0], id="empty", tokens=examples[0].tokens[:0], sentences=[])
    classes = 2 if n_classes == 1 else n_classes
    alone = deletion_probabilities(model, [empty])
    assert len(alone) == 1 and alone[0].shape == (0, classes)
    mixed = deletion_probabilities(model, [examples[0], empty, examples[1]])
    assert [p.shape for p in mixed] == [(4, classes), (0, classes), (2, classes)]
    assert np.array_equal(np.concatenate(mixed), np.concatenate(deletion_probabilities(model, examples)))


@pytest.mark.parametrize("encoder", ["lstm", "cnn"])
def test_leave_one_out_of_instances_without_tokens_is_empty(encoder):
    import dataclasses

    model = flat(encoder, "tanh").eval()
    (example,) = make_examples([3])
    empty = dataclasses.replace(example, id="empty", tokens=example.tokens[:0], sentences=[])
    probs = np.array([[0.5, 0.5], [0.25, 0.75]], dtype=np.float32)
    assert [s.shape for s in leave_one_out(model, [empty], probs[:1])] == [(0,)]
    assert [s.shape for s in leave_one_out(model, [empty, example], probs)] == [(0,), (3,)]


def test_explaining_no_instances_gives_no_records():
    assert explain_examples(flat("lstm", "tanh"), [], EXPLAIN_SETTINGS, log=lambda _: None) == []


def test_recurrent_deletion_refuses_other_encoders():
    from attnexp.explain.recurrent_deletion import deletion_probabilities, supports_recurrent_deletion

    model = flat("cnn", "tanh").eval()
    assert not supports_recurrent_deletion(model, "delete")
    with pytest.raises(ValueError, match="BiLSTM or orthogonal LSTM encoder"):
        deletion_probabilities(model, make_examples())
