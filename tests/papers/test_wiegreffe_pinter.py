"""Wiegreffe & Pinter experiments: per-instance comparisons of exported runs checked by hand
(TVD, JSD, KL both ways), alignment refusals, the model-consistent adversary's objective against a
per-instance reference sum (and the directions its gradient pushes), its monitor, the seed-variance
and frontier tables, Tables 2-4 and their claims, and the figures."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import flat, load_benchmark, random_examples, transformer

from attnexp import io
from attnexp.claims import Setting, read_claims
from attnexp.config import load_config
from attnexp.data.documents import DataFiles
from attnexp.metrics import f1_per_class, kl
from attnexp.models.inputs import collate
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData
from attnexp.papers.wiegreffe_pinter import experiment as wp
from attnexp.papers.wiegreffe_pinter import plots as wpp
from attnexp.papers.wiegreffe_pinter import tables as wpt
from attnexp.plan import RunKey, wiegreffe_pinter_companions
from attnexp.runtime import predict

EPS = 1e-10  # D-KL: inside the logarithms
LN2 = math.log(2)
CPU = torch.device("cpu")


# ----------------------------------------------------------------------------- helpers


def exported(attention, positive, ids=None, path="run") -> wp.Exported:
    """An Exported split from per-instance weights and P(class 1)."""
    ids = ids or [f"i{k}" for k in range(len(attention))]
    positive = np.asarray(positive, dtype=np.float64)
    return wp.Exported(
        path,
        list(ids),
        [np.asarray(a, dtype=np.float64) for a in attention],
        np.stack([1 - positive, positive], axis=1),
    )


def records(split: str, e: wp.Exported) -> list[dict]:
    return [
        {"id": i, "split": split, "length": len(a), "attention": a.tolist(), "probs": p.tolist()}
        for i, a, p in zip(e.ids, e.attention, e.probs)
    ]


def write_export(path: Path, **splits: wp.Exported) -> Path:
    io.write_jsonl(path, [r for split, e in splits.items() for r in records(split, e)], seal=True)
    return path


def np_kl(p, q) -> float:
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return float(np.sum(p * (np.log(p + EPS) - np.log(q + EPS))))


def np_jsd(p, q) -> float:
    m = (np.asarray(p, dtype=np.float64) + np.asarray(q, dtype=np.float64)) / 2
    return (np_kl(p, m) + np_kl(q, m)) / 2


JSD_HALF_VS_ONEHOT = 0.75 * math.log(4 / 3)  # JSD([.5, .5], [1, 0]) by hand


# ----------------------------------------------------------------------------- compare, alignment, reading


A = exported([[0.5, 0.5], [0.2, 0.3, 0.5], [1.0, 0.0]], [0.7, 0.1, 1.0], ["a", "b", "c"], "A")
B = exported([[1.0, 0.0], [0.6, 0.3, 0.1], [0.0, 1.0]], [0.4, 0.1, 0.0], ["a", "b", "c"], "B")


def test_compare_by_hand():
    table = wp.compare(A, B)
    assert list(table["id"]) == ["a", "b", "c"] and list(table["length"]) == [2, 3, 2]
    assert table["tvd"].to_numpy() == pytest.approx([0.3, 0.0, 1.0], abs=1e-12)
    jsd_b = (0.2 * math.log(0.5) + 0.5 * math.log(5 / 3) + 0.6 * math.log(1.5) + 0.1 * math.log(1 / 3)) / 2
    assert table["jsd"].to_numpy() == pytest.approx([JSD_HALF_VS_ONEHOT, jsd_b, LN2], abs=1e-8)
    assert (table["jsd"] <= LN2 + 1e-9).all() and (table["jsd"] >= 0).all()
    # KL(A || B): B's zero weight only stays finite through the 1e-10 inside the logarithm
    kl_ab_a = 0.5 * (math.log(0.5 + EPS) - math.log(1 + EPS)) + 0.5 * (math.log(0.5 + EPS) - math.log(EPS))
    kl_ab = [kl_ab_a, 0.2 * math.log(1 / 3) + 0.5 * math.log(5), math.log(1 + EPS) - math.log(EPS)]
    kl_ba = [LN2, 0.6 * math.log(3) + 0.1 * math.log(0.2), math.log(1 + EPS) - math.log(EPS)]
    assert table["kl_ab"].to_numpy() == pytest.approx(kl_ab, rel=1e-7)
    assert table["kl_ba"].to_numpy() == pytest.approx(kl_ba, rel=1e-7)
    assert table["kl_ab"].iloc[0] == pytest.approx(11.0, abs=0.5)  # ~ ½ ln(0.5 / 1e-10): eps, not 1e-8 or 1e-12
    # the direction is the argument order
    swapped = wp.compare(B, A)
    assert swapped["kl_ab"].to_numpy() == pytest.approx(kl_ba, rel=1e-7)
    assert swapped["jsd"].to_numpy() == pytest.approx(table["jsd"].to_numpy(), abs=1e-12)


def test_compare_of_a_run_with_itself_is_zero():
    table = wp.compare(A, A)
    for column in ("tvd", "jsd", "kl_ab", "kl_ba"):
        assert table[column].to_numpy() == pytest.approx(0.0, abs=1e-12)


def test_misaligned_ids_name_the_first_mismatch():
    other = exported([[0.5, 0.5], [0.2, 0.3, 0.5], [1.0, 0.0]], [0.7, 0.1, 1.0], ["a", "x", "y"], "other")
    with pytest.raises(ValueError, match=r"^other: instance 1 is 'x' of length 3, but A has 'b'"):
        wp.compare(A, other)


def test_a_length_mismatch_is_refused_even_with_the_same_ids():
    other = exported([[0.5, 0.5], [0.5, 0.5], [1.0, 0.0]], [0.7, 0.1, 1.0], ["a", "b", "c"], "other")
    with pytest.raises(ValueError, match=r"instance 1 is 'b' of length 2, but A has 'b' of length 3"):
        wp.compare(A, other)


def test_a_missing_instance_is_refused():
    shorter = exported([[0.5, 0.5], [0.2, 0.3, 0.5]], [0.7, 0.1], ["a", "b"], "shorter")
    with pytest.raises(ValueError, match="shorter: 2 instances, but A has 3"):
        wp.compare(A, shorter)
    with pytest.raises(ValueError, match="A: 3 instances, but shorter has 2"):
        wp.compare(shorter, A)


def test_read_export_keeps_one_split_in_file_order(tmp_path):
    dev = exported([[1.0]], [0.3], ["dev0"])
    path = write_export(tmp_path / "attention.jsonl", train=exported([[0.4, 0.6]], [0.2], ["tr0"]), dev=dev, test=B)
    test = wp.read_export(path, "test")
    assert test.ids == ["a", "b", "c"] and test.lengths == [2, 3, 2] and test.path == str(path)
    assert test.probs.dtype == np.float64 and test.probs.shape == (3, 2)
    assert test.positive == pytest.approx([0.4, 0.1, 0.0])
    assert test.attention[1] == pytest.approx([0.6, 0.3, 0.1])
    assert wp.read_export(path, "dev").ids == ["dev0"]
    with pytest.raises(ValueError, match="no nonexistent instances"):
        wp.read_export(path, "nonexistent")


def test_read_export_refuses_a_length_that_disagrees_with_the_weights(tmp_path):
    rows = records("test", A)
    rows[1]["length"] = 4
    io.write_jsonl(tmp_path / "bad.jsonl", rows, seal=True)
    with pytest.raises(ValueError, match=r"instance 'b' stores 3 weights for length 4"):
        wp.read_export(tmp_path / "bad.jsonl", "test")


# ----------------------------------------------------------------------------- the model-consistent adversary


ADV = {"lambda": 0.5, "tvd_scale": 1.0, "kl": "adv_base", "loss_scale": "mean"}


def dirichlet(n: int, rng) -> np.ndarray:
    return rng.dirichlet(np.ones(n))


@pytest.fixture
def adversary_setup(tmp_path):
    """A tiny lstm-tanh model, train/test examples (ids unique across splits) and a synthetic base
    export: random attention over each instance's tokens, random P(class 1)."""
    rng = np.random.RandomState(3)
    train = [replace(e, label=label) for e, label in zip(random_examples([3, 5, 4, 2], seed=0), [1, 1, 1, 0])]
    test = [replace(e, id=f"test{k}") for k, e in enumerate(random_examples([4, 3, 6], seed=1))]
    base = {
        split: exported(
            [dirichlet(len(e.tokens), rng) for e in examples],
            rng.uniform(0.05, 0.95, len(examples)),
            [e.id for e in examples],
        )
        for split, examples in (("train", train), ("test", test))
    }
    path = write_export(tmp_path / "base.jsonl", **base)
    return flat(), train, test, base, path


def reference_objective(model, examples, base: wp.Exported, settings) -> float:
    """Σ_i tvd_scale·|σ(z_i) − p_b,i| − λ·KL, one unpadded instance at a time."""
    positive = dict(zip(base.ids, base.positive))
    guides = dict(zip(base.ids, base.attention))
    total = 0.0
    with torch.no_grad():
        for e in examples:
            logit, alpha = model(collate([e], model.layout))
            a = alpha[0, 1 : len(e.tokens) + 1].double().numpy()  # sos_eos: w_1..w_n
            assert a.sum() == pytest.approx(1.0, abs=1e-5)
            divergence = np_kl(a, guides[e.id]) if settings["kl"] == "adv_base" else np_kl(guides[e.id], a)
            p = torch.sigmoid(logit).item()
            total += settings["tvd_scale"] * abs(p - positive[e.id]) - settings["lambda"] * divergence
    return total


def batch_of(model, examples, base: wp.Exported):
    return collate(examples, model.layout, dict(zip(base.ids, base.attention)))


@pytest.mark.parametrize("direction", ["adv_base", "base_adv"])
@pytest.mark.parametrize("tvd_scale", [1.0, 0.5])
def test_objective_is_the_summed_per_instance_loss(adversary_setup, direction, tvd_scale):
    model, train, _, base, path = adversary_setup
    settings = {**ADV, "kl": direction, "tvd_scale": tvd_scale}
    adversary = wp.ModelConsistentAdversary(path, settings, pos_weight=3.0)
    loss = adversary.objective(model, batch_of(model, train, base["train"]))
    assert loss.dim() == 0
    assert loss.item() == pytest.approx(reference_objective(model, train, base["train"], settings), rel=1e-5, abs=1e-6)


def test_the_kl_setting_flips_the_direction(adversary_setup):
    model, train, _, base, path = adversary_setup
    batch = batch_of(model, train, base["train"])
    ab = wp.ModelConsistentAdversary(path, {**ADV, "kl": "adv_base"}, 1.0).objective(model, batch).item()
    ba = wp.ModelConsistentAdversary(path, {**ADV, "kl": "base_adv"}, 1.0).objective(model, batch).item()
    assert abs(ab - ba) > 1e-3  # the directions differ on these weights, so the settings must too


def test_terms_by_hand():
    adversary = wp.ModelConsistentAdversary.__new__(wp.ModelConsistentAdversary)  # terms needs only the settings
    logits, attention = torch.tensor([[0.0]]), torch.tensor([[0.5, 0.5]])
    base_positive, base_attention = torch.tensor([0.9]), torch.tensor([[0.9, 0.1]])
    adversary.settings = {**ADV, "tvd_scale": 1.0, "kl": "adv_base"}
    change, divergence = adversary.terms(logits, attention, base_positive, base_attention)
    assert change.item() == pytest.approx(0.4) and divergence.item() == pytest.approx(0.5 * math.log(25 / 9), rel=1e-6)
    adversary.settings = {**ADV, "tvd_scale": 0.5, "kl": "base_adv"}
    change, divergence = adversary.terms(logits, attention, base_positive, base_attention)
    assert change.item() == pytest.approx(0.2) and divergence.item() == pytest.approx(
        0.9 * math.log(1.8) + 0.1 * math.log(0.2), rel=1e-6
    )


def test_classweight_sum_multiplies_by_the_batch_class_weights(adversary_setup):
    model, train, _, base, path = adversary_setup
    batch = batch_of(model, train, base["train"])  # labels 1, 1, 1, 0
    mean = wp.ModelConsistentAdversary(path, ADV, pos_weight=3.0).objective(model, batch)
    scaled = wp.ModelConsistentAdversary(path, {**ADV, "loss_scale": "classweight_sum"}, pos_weight=3.0).objective(
        model, batch
    )
    assert scaled.item() == pytest.approx(10.0 * mean.item(), rel=1e-6)  # 3 + 3 + 3 + 1 (pos_weight on label 1 only)


def test_no_gold_label_enters_the_mean_loss(adversary_setup):
    model, train, _, base, path = adversary_setup
    adversary = wp.ModelConsistentAdversary(path, ADV, pos_weight=3.0)
    batch = batch_of(model, train, base["train"])
    flipped = replace(batch, labels=1 - batch.labels)
    assert adversary.objective(model, flipped).item() == pytest.approx(adversary.objective(model, batch).item(), abs=0)


def test_base_predictions_are_looked_up_by_id_not_position(adversary_setup):
    model, train, _, base, path = adversary_setup
    adversary = wp.ModelConsistentAdversary(path, ADV, pos_weight=1.0)
    shuffled = [train[k] for k in (2, 0, 3, 1)]
    assert adversary.objective(model, batch_of(model, shuffled, base["train"])).item() == pytest.approx(
        adversary.objective(model, batch_of(model, train, base["train"])).item(), rel=1e-5
    )
    assert adversary.base_positive["test1"] == pytest.approx(base["test"].positive[1])


def test_terms_gradient_keeps_the_prediction_and_pushes_attention_away():
    """One descent step on (z, attention logits): |σ(z) − p_b| shrinks, KL to the base grows (λ > 0),
    in either KL direction."""
    adversary = wp.ModelConsistentAdversary.__new__(wp.ModelConsistentAdversary)
    base_positive, base_attention = (
        torch.tensor([0.9, 0.2], dtype=torch.float64),
        torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], dtype=torch.float64),
    )
    for direction in ("adv_base", "base_adv"):
        adversary.settings = {**ADV, "lambda": 1.0, "kl": direction}
        z = torch.tensor([[0.0], [0.0]], dtype=torch.float64, requires_grad=True)
        theta = torch.log(base_attention * 0.7 + 0.1).clone().requires_grad_(True)

        def loss_parts(z, theta):
            change, divergence = adversary.terms(z, torch.softmax(theta, -1), base_positive, base_attention)
            return change, divergence, (change - adversary.settings["lambda"] * divergence).sum()

        change, divergence, loss = loss_parts(z, theta)
        loss.backward()
        with torch.no_grad():
            change2, divergence2, loss2 = loss_parts(z - 0.1 * z.grad, theta - 0.1 * theta.grad)
        assert loss2 < loss
        assert (change2 < change).all() and (divergence2 > divergence).all()


def sgd(model, adversary, batch, steps=3, lr=0.1):
    optimiser = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimiser.zero_grad()
        adversary.objective(model, batch).backward()
        optimiser.step()


@pytest.mark.parametrize("make", [flat, lambda: transformer(layers=2, heads=2)], ids=["lstm-tanh", "transformer-cls"])
def test_training_on_the_objective_moves_the_model_the_right_way(adversary_setup, make):
    """On the BiLSTM and on the Transformer (its attention: the [CLS] row, mean over heads)."""
    _, train, _, base, path = adversary_setup
    model = make()
    batch = batch_of(model, train, base["train"])
    positive = torch.tensor(base["train"].positive, dtype=torch.float32)

    def state(m, direction):
        with torch.no_grad():
            logits, attention = m(batch)
        divergence = kl(attention, batch.guide) if direction == "adv_base" else kl(batch.guide, attention)
        return divergence.sum().item(), (probabilities(logits)[:, 1] - positive).abs().sum().item()

    for direction in ("adv_base", "base_adv"):  # only the divergence term: KL to the base must grow
        m = make()
        before, _ = state(m, direction)
        sgd(m, wp.ModelConsistentAdversary(path, {**ADV, "tvd_scale": 0.0, "lambda": 1.0, "kl": direction}, 1.0), batch)
        after, _ = state(m, direction)
        assert after > before
    m = make()  # only the TVD term: the outputs move toward the base's
    _, before = state(m, "adv_base")
    sgd(m, wp.ModelConsistentAdversary(path, {**ADV, "lambda": 0.0}, 1.0), batch)
    _, after = state(m, "adv_base")
    assert after < before


def export_predictions(model, splits: dict[str, SplitData]) -> dict[str, wp.Exported]:
    out = {}
    for split, data in splits.items():
        probs, attention = predict(model, data, 128, CPU)
        out[split] = wp.Exported(split, [e.id for e in data.examples], attention, probs.astype(np.float64))
    return out


def test_monitor_of_the_base_itself_is_zero(adversary_setup, tmp_path):
    model, train, test, _, _ = adversary_setup
    splits = {"train": SplitData(train), "dev": SplitData(test[:1]), "test": SplitData(test)}
    own = export_predictions(model, splits)
    path = write_export(tmp_path / "own.jsonl", **own)
    record = wp.ModelConsistentAdversary(path, ADV, 1.0).monitor(model, splits, CPU)
    assert set(record) == {"adversary"} and set(record["adversary"]) == {"train", "test"}
    for split in ("train", "test"):
        values = record["adversary"][split]
        assert set(values) == {"tvd", "jsd", "kl", "f1"}
        assert values["tvd"] == pytest.approx(0.0, abs=1e-9) and values["jsd"] == pytest.approx(0.0, abs=1e-9)
        assert values["kl"] == pytest.approx(0.0, abs=1e-6)
        labels = splits[split].labels()
        assert values["f1"] == pytest.approx(f1_per_class(labels, own[split].probs.argmax(axis=1), 2)[1])


@pytest.mark.parametrize("direction", ["adv_base", "base_adv"])
def test_monitor_against_another_base_by_hand(adversary_setup, direction):
    """Against the synthetic base (random attention and P(class 1)): mean |ŷ − p_b|, mean JSD, and
    the mean KL of the configured direction, per split, from the model's own predictions."""
    model, train, test, base, path = adversary_setup
    splits = {"train": SplitData(train), "test": SplitData(test)}
    own = export_predictions(model, splits)
    record = wp.ModelConsistentAdversary(path, {**ADV, "kl": direction}, 1.0).monitor(model, splits, CPU)["adversary"]
    for split, e in own.items():
        b = [a.astype(np.float32) for a in base[split].attention]  # read_export stores float32 weights
        forward, backward = (
            [np_kl(x, y) for x, y in zip(e.attention, b)],
            [np_kl(y, x) for x, y in zip(e.attention, b)],
        )
        assert abs(np.mean(forward) - np.mean(backward)) > 0.01  # the two directions are told apart here
        assert record[split]["tvd"] == pytest.approx(np.mean(np.abs(e.positive - base[split].positive)), rel=1e-6)
        assert record[split]["jsd"] == pytest.approx(np.mean([np_jsd(x, y) for x, y in zip(e.attention, b)]), rel=1e-5)
        assert record[split]["kl"] == pytest.approx(np.mean(forward if direction == "adv_base" else backward), rel=1e-5)


def test_the_adversary_needs_train_and_test_in_the_export(tmp_path):
    path = write_export(tmp_path / "train_only.jsonl", train=A)
    with pytest.raises(ValueError, match="no test instances"):
        wp.ModelConsistentAdversary(path, ADV, 1.0)


# ----------------------------------------------------------------------------- Figure 2: seed variance


SEED_BASE = exported([[1.0, 0.0], [0.2, 0.3, 0.5]], [0.5, 0.2], ["u", "v"], "base")
SEEDS = {
    50: exported([[1.0, 0.0], [0.2, 0.3, 0.5]], [0.4, 0.2], ["u", "v"], "s50"),
    257: exported([[0.0, 1.0], [0.5, 0.3, 0.2]], [0.7, 0.5], ["u", "v"], "s257"),
    2: exported([[0.5, 0.5], [0.2, 0.3, 0.5]], [0.5, 0.3], ["u", "v"], "s2"),
}


def test_seed_variance_by_hand():
    table = wp.seed_variance(SEED_BASE, SEEDS)
    assert list(table["id"]) == ["u", "v"] and list(table["length"]) == [2, 3]
    assert (table["comparison"] == "seeds").all() and (table["models"] == 3).all()
    # JSDs of u: 0, ln 2, 0.75 ln(4/3) -> median 0.75 ln(4/3) (the mean would be 0.30); of v: 0, x, 0 -> 0
    assert table["attention_jsd"].to_numpy() == pytest.approx([JSD_HALF_VS_ONEHOT, 0.0], abs=1e-8)
    # |Δŷ| of u: 0.1, 0.2, 0 -> mean 0.1; of v: 0, 0.3, 0.1 -> mean 0.4 / 3
    assert table["output_tvd"].to_numpy() == pytest.approx([0.1, 0.4 / 3], abs=1e-12)
    assert list(table["predicted"]) == [1, 0]  # the base's ŷ >= 0.5, 0.5 included
    assert table["max_attention"].to_numpy() == pytest.approx([1.0, 0.5])


def test_seed_variance_refusals():
    with pytest.raises(ValueError, match="at least one seed"):
        wp.seed_variance(SEED_BASE, {})
    swapped = exported([[0.2, 0.3, 0.5], [1.0, 0.0]], [0.2, 0.5], ["v", "u"], "swapped")
    with pytest.raises(ValueError, match=r"swapped: instance 0 is 'v'"):
        wp.seed_variance(SEED_BASE, {**SEEDS, 9: swapped})


def jw_records(ids=("u", "v"), lengths=(2, 3), jsds=(0.6, 0.1), outputs=(0.05, 0.2)):
    return [
        {"id": i, "length": n, "jsd": j, "output_difference": o, "attention": [1.0 / n] * n}
        for i, n, j, o in zip(ids, lengths, jsds, outputs)
    ]


def test_jw_adversary_variance_takes_the_adversarys_numbers():
    table = wp.jw_adversary_variance(SEED_BASE, jw_records(), "jw.jsonl")
    assert (table["comparison"] == "jw_adversary").all() and (table["models"] == 1).all()
    assert list(table["attention_jsd"]) == [0.6, 0.1] and list(table["output_tvd"]) == [0.05, 0.2]
    assert list(table["predicted"]) == [1, 0] and list(table["max_attention"]) == [1.0, 0.5]


def test_jw_adversary_variance_refuses_a_misaligned_export():
    with pytest.raises(ValueError, match=r"jw.jsonl: instance 1 is 'v' of length 4"):
        wp.jw_adversary_variance(SEED_BASE, jw_records(lengths=(2, 4)), "jw.jsonl")
    with pytest.raises(ValueError, match="jw.jsonl: 1 instances"):
        wp.jw_adversary_variance(SEED_BASE, jw_records()[:1], "jw.jsonl")


# ----------------------------------------------------------------------------- Figure 4 / Table 4


FRONT_BASE = exported([[0.5, 0.5], [1.0, 0.0], [0.2, 0.3, 0.5]], [0.9, 0.2, 0.6], ["x", "y", "z"], "base")
LABELS = np.array([1, 0, 1])
ADVERSARIES = {  # deliberately out of λ order
    1.0: exported([[1.0, 0.0], [0.0, 1.0], [0.2, 0.3, 0.5]], [0.9, 0.2, 0.6], ["x", "y", "z"], "adv1"),
    0.1: exported([[0.5, 0.5], [1.0, 0.0], [0.2, 0.3, 0.5]], [0.8, 0.6, 0.3], ["x", "y", "z"], "adv01"),
}


def test_adversary_frontier_by_hand():
    table = wp.adversary_frontier(FRONT_BASE, ADVERSARIES, LABELS)
    assert list(table["kind"]) == ["adversary", "adversary"] and list(table["lambda"]) == [0.1, 1.0]
    small, large = table.iloc[0], table.iloc[1]
    assert small["n"] == 3 and small["tvd"] == pytest.approx((0.1 + 0.4 + 0.3) / 3)
    assert small["jsd"] == pytest.approx(0.0, abs=1e-12) and small["kl_adv_base"] == pytest.approx(0.0, abs=1e-12)
    assert small["f1"] == pytest.approx(0.5)  # predicted 1, 1, 0 against 1, 0, 1
    assert large["tvd"] == pytest.approx(0.0, abs=1e-12) and large["f1"] == pytest.approx(1.0)
    assert large["jsd"] == pytest.approx((JSD_HALF_VS_ONEHOT + LN2) / 3, abs=1e-8)
    ln_1e10 = math.log(1 + EPS) - math.log(EPS)
    # KL(adversary ‖ base) for x is KL([1, 0] ‖ [.5, .5]) = ln 2; the other way round it is ~ ½ ln(.5 / 1e-10)
    assert large["kl_adv_base"] == pytest.approx((np_kl([1, 0], [0.5, 0.5]) + ln_1e10) / 3, rel=1e-7)
    assert large["kl_base_adv"] == pytest.approx((np_kl([0.5, 0.5], [1, 0]) + ln_1e10) / 3, rel=1e-7)
    assert np_kl([1, 0], [0.5, 0.5]) == pytest.approx(LN2)


def test_reference_points():
    uniform = exported([[0.5, 0.5], [0.5, 0.5], [1 / 3] * 3], [0.5, 0.5, 0.5], ["x", "y", "z"], "uniform")
    variance = pd.DataFrame(
        {
            "comparison": ["seeds", "seeds", "jw_adversary"],
            "output_tvd": [0.1, 0.3, 0.5],
            "attention_jsd": [0.2, 0.4, 0.6],
        }
    )
    table = wp.reference_points(FRONT_BASE, uniform, variance, LABELS).set_index("kind")
    assert list(table.index) == ["uniform", "jw_adversary", "seeds"]
    u = table.loc["uniform"]
    assert u["n"] == 3 and u["tvd"] == pytest.approx((0.4 + 0.3 + 0.1) / 3)
    assert u["jsd"] == pytest.approx((0 + JSD_HALF_VS_ONEHOT + np_jsd([1 / 3] * 3, [0.2, 0.3, 0.5])) / 3, abs=1e-8)
    assert u["f1"] == pytest.approx(0.8)  # ŷ = 0.5 counts as class 1: TP 2, FP 1
    assert (
        table.loc["seeds", "n"] == 2
        and table.loc["seeds", "tvd"] == pytest.approx(0.2)
        and table.loc["seeds", "jsd"] == pytest.approx(0.3)
    )
    assert table.loc["jw_adversary", "n"] == 1 and table.loc["jw_adversary", "jsd"] == pytest.approx(0.6)


def test_adversary_epochs_marks_the_kept_epoch():
    metrics = {
        "selected_epoch": 2,
        "history": [
            {
                "epoch": e,
                "train_loss": 1.0 / e,
                "adversary": {
                    "train": {"tvd": 0.1 * e, "jsd": 0.2, "kl": 0.3, "f1": 0.9},
                    "test": {"tvd": 0.2 * e, "jsd": 0.1, "kl": 0.4, "f1": 0.8},
                },
            }
            for e in (1, 2, 3)
        ],
    }
    table = wp.adversary_epochs(metrics)
    assert list(table["epoch"]) == [1, 2, 3] and list(table["selected"]) == [False, True, False]
    assert table["test_tvd"].to_numpy() == pytest.approx([0.2, 0.4, 0.6]) and list(table["train_f1"]) == [0.9] * 3
    assert {"train_loss", "train_tvd", "train_jsd", "train_kl", "test_jsd", "test_kl", "test_f1"} <= set(table.columns)


EXAMPLE_BASE = exported([[0.5, 0.5], [1, 0, 0, 0, 0], [1, 0, 0], [1.0]], [0.5] * 4, ["e0", "e1", "e2", "e3"], "base")
EXAMPLE_ADV = exported([[1.0, 0.0], [0, 0, 0, 0, 1], [0, 1, 0], [1.0]], [0.5] * 4, ["e0", "e1", "e2", "e3"], "adv")


@pytest.mark.parametrize("max_tokens, expected", [(60, 1), (5, 1), (4, 2), (3, 2), (2, 0)])
def test_example_instance_is_the_largest_jsd_within_the_token_limit(max_tokens, expected):
    # JSDs: 0.75 ln(4/3), ln 2, ln 2, 0: a tie between e1 and e2 goes to the first
    assert wp.example_instance(EXAMPLE_BASE, EXAMPLE_ADV, max_tokens) == expected


def test_example_instance_needs_two_tokens():
    """No instance of 2 to `max_tokens` tokens (one-token documents): no example, and Table 1's figure
    says so (`plots.attention_example` of no tokens)."""
    assert wp.example_instance(EXAMPLE_BASE, EXAMPLE_ADV, 1) is None
    one_token = exported([[1.0]], [0.5], ["only"], "one")
    assert wp.example_instance(one_token, one_token, 60) is None


# ----------------------------------------------------------------------------- from files to files


def write_data(folder: Path, test_ids, test_lengths, test_labels) -> DataFiles:
    """A training and a test split, the files the frontier reads."""
    folder.mkdir(parents=True, exist_ok=True)

    def rows(prefix, ids, lengths, labels):
        return [
            {"id": i, "tokens": [f"{prefix}{i}w{k}" for k in range(n)], "label": y, "sentences": [[0, n]]}
            for i, n, y in zip(ids, lengths, labels)
        ]

    data = DataFiles(train=folder / "train.jsonl", test=folder / "test.jsonl")
    io.write_jsonl(data.train, rows("t", ["train-0", "train-1"], [2, 3], [0, 1]))
    io.write_jsonl(data.test, rows("", test_ids, test_lengths, test_labels))
    return data


def adversary_metrics(path: Path, selected: int, epochs: int) -> Path:
    history = [
        {"epoch": e, "train_loss": 1.0 / e, "adversary": {"test": {"tvd": 0.1, "jsd": 0.1 * e, "kl": 0.2, "f1": 0.7}}}
        for e in range(1, epochs + 1)
    ]
    io.write_json(path, {"selected_epoch": selected, "history": history}, seal=True)
    return path


def test_files_to_files(tmp_path):
    """write_seed_variance -> write_frontier -> example_records on one tiny base run."""
    train = exported([[0.5, 0.5]], [0.3], ["train-0"])
    base = write_export(tmp_path / "base.jsonl", train=train, test=FRONT_BASE)
    seeds = [write_export(tmp_path / f"seed{s}.jsonl", test=replace(ADVERSARIES[1.0], path=f"s{s}")) for s in (50, 257)]
    jw = tmp_path / "jw.jsonl"
    io.write_jsonl(jw, jw_records(("x", "y", "z"), (2, 2, 3), (0.6, 0.1, 0.3), (0.05, 0.2, 0.1)), seal=True)
    variance = wp.write_seed_variance(base, seeds, [50, 257], jw, tmp_path / "variance.csv")
    stored = pd.read_csv(tmp_path / "variance.csv", dtype={"id": str})
    assert (
        list(stored["comparison"]) == ["seeds"] * 3 + ["jw_adversary"] * 3 and list(stored["id"]) == ["x", "y", "z"] * 2
    )
    assert stored["attention_jsd"].iloc[:3].to_numpy() == pytest.approx([JSD_HALF_VS_ONEHOT, LN2, 0.0], abs=1e-5)
    assert len(variance) == 6

    data = write_data(tmp_path / "data", ["x", "y", "z"], [2, 2, 3], [1, 0, 1])
    assert list(wp.test_labels(data, FRONT_BASE)) == [1, 0, 1]
    uniform = write_export(
        tmp_path / "uniform.jsonl", test=exported([[0.5, 0.5], [0.5, 0.5], [1 / 3] * 3], [0.5] * 3, ["x", "y", "z"])
    )
    adversaries = [write_export(tmp_path / f"adv{lam}.jsonl", test=ADVERSARIES[lam]) for lam in (1.0, 0.1)]
    logs = [adversary_metrics(tmp_path / "m1.json", 3, 4), adversary_metrics(tmp_path / "m01.json", 1, 2)]
    table = wp.write_frontier(
        base,
        uniform,
        adversary_exports=adversaries,
        adversary_metrics=logs,
        lambdas=[1.0, 0.1],
        variance_csv=tmp_path / "variance.csv",
        data=data,
        out_frontier=tmp_path / "frontier.csv",
        out_epochs=tmp_path / "epochs.csv",
    )
    frontier = pd.read_csv(tmp_path / "frontier.csv")
    assert list(frontier["kind"]) == ["adversary", "adversary", "uniform", "jw_adversary", "seeds"]
    assert list(frontier["lambda"].iloc[:2]) == [0.1, 1.0]
    assert list(frontier["selected_epoch"].iloc[:2]) == [1, 3] and list(frontier["epochs_run"].iloc[:2]) == [2, 4]
    assert frontier["f1"].iloc[:3].to_numpy() == pytest.approx([0.5, 1.0, 0.8])
    assert len(table) == 5
    epochs = pd.read_csv(tmp_path / "epochs.csv")
    assert epochs.columns[0] == "lambda" and list(epochs["lambda"]) == [0.1, 0.1, 1.0, 1.0, 1.0, 1.0]
    assert list(epochs["selected"]) == [True, False, False, False, True, False]

    tokens, rows, chosen = wp.example_records(base, adversaries[0], data.test, 60)  # λ = 1: y differs most
    assert chosen == "y" and tokens == ["yw0", "yw1"]
    assert rows["base"] == pytest.approx([1.0, 0.0]) and rows["adversary"] == pytest.approx([0.0, 1.0])
    assert wp.example_records(base, adversaries[0], data.test, 1) == ([], {}, None)  # no instance of 2 to 1 tokens


def test_test_labels_refuses_a_different_test_split(tmp_path):
    data = write_data(tmp_path / "data", ["x", "q", "z"], [2, 2, 3], [1, 0, 1])
    with pytest.raises(ValueError, match=r"test.jsonl: instance 1 is 'q'") as err:
        wp.test_labels(data, FRONT_BASE)
    assert str(err.value).startswith(f"{data.test}: ")  # the file itself


def test_example_records_refuses_a_test_split_that_disagrees_with_the_export(tmp_path):
    base = write_export(tmp_path / "base.jsonl", test=FRONT_BASE)
    adversary = write_export(tmp_path / "adv.jsonl", test=ADVERSARIES[1.0])
    data = write_data(tmp_path / "data", ["x", "q", "z"], [2, 2, 3], [1, 0, 1])
    with pytest.raises(ValueError, match=r"instance 1 is 'q', the export has 'y'") as err:
        wp.example_records(base, adversary, data.test, 60)
    assert str(err.value).startswith(f"{data.test}: ")


# ----------------------------------------------------------------------------- Tables 2-4 and claims


def write_metrics(root: Path, dataset: str, model: str, f1: float, select_on: str = "test", seed: int = 1) -> Path:
    path = root / dataset / model / f"seed{seed}" / "metrics.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    io.write_json(
        path,
        {
            "model": model,
            "seed": seed,
            "select_on": select_on,
            "test": {"f1": [0.5, f1]},
            "settings": {"epochs": 8},
            "provenance": {"dataset": dataset, "embeddings": "word2vec", "substitutes": "none"},
        },
        seal=True,
    )
    return path


PUBLISHED_ROWS = [
    ("sst", "lstm-tanh", 0.831),
    ("sst", "lstm-uniform", 0.822),
    ("imdb", "lstm-tanh", 0.902),
    ("imdb", "lstm-uniform", 0.879),
    ("agnews", "lstm-tanh", 0.964),
    ("agnews", "lstm-uniform", 0.96),
]


def write_published(path: Path) -> Path:
    rows = [
        {
            "dataset": "sst",
            "model": "lstm-tanh",
            "metric": "f1_class1",
            "value": 0.5,
            "selection": "test",
            "paper": "Jain & Wallace 2019",
            "source": "not W&P",
        }
    ]
    rows += [
        {
            "dataset": d,
            "model": m,
            "metric": "f1_class1",
            "value": v,
            "selection": "test",
            "paper": "Wiegreffe & Pinter 2019",
            "source": "W&P Table 2",
        }
        for d, m, v in PUBLISHED_ROWS
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def write_variance(path: Path, seed_jsd, jw_jsd) -> Path:
    ids = [f"t{k}" for k in range(len(seed_jsd))]
    seeds = pd.DataFrame(
        {
            "id": ids,
            "length": 3,
            "predicted": [0, 1] * (len(ids) // 2),
            "max_attention": 0.5,
            "comparison": "seeds",
            "models": 7,
            "attention_jsd": seed_jsd,
            "output_tvd": np.linspace(0.0, 0.3, len(ids)),
        }
    )
    jw = pd.DataFrame(
        {
            "id": ids[::-1],
            "length": 3,
            "predicted": 0,
            "max_attention": 0.5,
            "comparison": "jw_adversary",
            "models": 1,
            "attention_jsd": jw_jsd[::-1],
            "output_tvd": 0.01,
        }
    )  # reversed: matched by id, not row
    io.write_csv(path, pd.concat([seeds, jw], ignore_index=True), seal=True)
    return path


def write_frontier_csv(path: Path, jsds, f1s=(0.7, 0.71, 0.72)) -> Path:
    lambdas = [1e-3, 1e-2, 0.1]
    rows = [
        {
            "kind": "adversary",
            "lambda": lam,
            "n": 4,
            "tvd": 0.01 * k,
            "jsd": j,
            "kl_adv_base": 2 * j,
            "kl_base_adv": 3 * j,
            "f1": f,
            "selected_epoch": 5 + k,
            "epochs_run": 9 + k,
        }
        for k, (lam, j, f) in enumerate(zip(lambdas, jsds, f1s))
    ]
    rows += [
        {"kind": "uniform", "n": 4, "tvd": 0.2, "jsd": 0.3, "kl_adv_base": 0.1, "kl_base_adv": 0.1, "f1": 0.6},
        {"kind": "seeds", "n": 4, "tvd": 0.05, "jsd": 0.02},
    ]
    io.write_csv(path, pd.DataFrame(rows), seal=True)
    return path


DIAGNOSTIC = {  # guide -> F1, GUIDES order: uniform, trained, base, adversary
    "sst": (0.60, 0.70, 0.75, 0.65),  # base > uniform, adversary < base: both hold
    "imdb": (0.80, 0.70, 0.76, 0.78),  # neither holds
}


@pytest.fixture
def tables(tmp_path):
    root = tmp_path / "models"
    bases = {  # dataset -> (base F1, uniform F1, select_on)
        "sst": (0.80, 0.78, "test"),  # gap 0.02 vs published 0.009: match within 0.02
        "imdb": (0.90, 0.80, "test"),  # gap 0.10 vs 0.023: differs
        "agnews": (0.95, 0.90, "dev"),  # not comparable: selected on dev
        "synthetic": (0.99, 0.98, "test"),  # no published value: no Table 2 claim
    }
    base_metrics = [write_metrics(root, d, "lstm-tanh", b, s) for d, (b, _, s) in bases.items()]
    uniform_metrics = [write_metrics(root, d, "lstm-uniform", u, s) for d, (_, u, s) in bases.items()]
    full = ["sst", "imdb"]
    diagnostic_metrics = [
        write_metrics(root, d, name, f1)
        for d in full
        for name, f1 in zip(
            ("average-uniform", "average-tanh", "average-guided-lstm-tanh", "average-guided-lstm-tanh-adversary-1e-2"),
            DIAGNOSTIC[d],
        )
    ]
    variances = [
        write_variance(
            tmp_path / "sst_variance.csv", [0.01, 0.02, 0.5, 0.03], [0.02, 0.3, 0.6, 0.1]
        ),  # share 1 (0.5 matched by row)
        write_variance(tmp_path / "imdb_variance.csv", [0.2, 0.3, 0.05, 0.4], [0.1, 0.1, 0.1, 0.1]),  # share 0.25
    ]
    frontiers = [
        write_frontier_csv(tmp_path / "sst_frontier.csv", [0.1, 0.2, 0.3]),  # grows with λ
        write_frontier_csv(tmp_path / "imdb_frontier.csv", [0.3, 0.2, 0.1]),  # shrinks
    ]
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("uniform", "seeds", "diagnostic", "adversary")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    wpt.write_tables(
        base_metrics,
        uniform_metrics,
        full_base_metrics=[base_metrics[0], base_metrics[1]],
        diagnostic_metrics=diagnostic_metrics,
        variances=variances,
        frontiers=frontiers,
        published=write_published(tmp_path / "performance.csv"),
        table_lambda=1e-2,
        tolerance=0.02,
        out=out,
    )
    return out


def test_read_model(tmp_path):
    model = wpt.read_model(write_metrics(tmp_path, "sst", "lstm-tanh", 0.8, "dev", seed=7))
    assert model == {
        "dataset": "sst",
        "model": "lstm-tanh",
        "seed": 7,
        "select_on": "dev",
        "f1": 0.8,
        "setting": Setting("dev", "word2vec", "none"),
        "epochs": "epochs=8",
    }


def test_table2_numbers(tables):
    table = pd.read_csv(tables["uniform_csv"]).set_index("dataset")
    assert list(table.index) == ["sst", "imdb", "agnews", "synthetic"]
    assert table.loc["sst", "difference"] == pytest.approx(0.02) and table.loc["imdb", "difference"] == pytest.approx(
        0.10
    )
    assert table.loc["sst", "published_base_f1"] == pytest.approx(0.831)  # W&P's row, not J&W's 0.5
    assert table.loc["sst", "published_difference"] == pytest.approx(0.009)
    assert table.loc["imdb", "published_difference"] == pytest.approx(0.023)
    assert table.loc["sst", "uniform_model"] == "lstm-uniform"
    assert pd.isna(table.loc["synthetic", "published_difference"])
    assert "Table 2" in tables["uniform_md"].read_text()


def test_seeds_table(tables):
    table = pd.read_csv(tables["seeds_csv"]).set_index(["dataset", "comparison"])
    sst = table.loc[("sst", "seeds")]
    assert sst["models"] == 7 and sst["n"] == 4
    assert sst["mean_jsd"] == pytest.approx(0.14) and sst["median_jsd"] == pytest.approx(0.025)
    assert sst["mean_tvd"] == pytest.approx(0.15) and sst["share_seed_jsd_below_jw"] == pytest.approx(1.0)
    assert table.loc[("imdb", "seeds"), "share_seed_jsd_below_jw"] == pytest.approx(0.25)
    assert pd.isna(table.loc[("sst", "jw_adversary"), "share_seed_jsd_below_jw"])
    assert table.loc[("sst", "jw_adversary"), "models"] == 1


def markdown_rows(path: Path) -> list[list[str]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith("|") and not line.startswith("|---")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_table3_tidy_csv_and_pivoted_markdown(tables):
    tidy = pd.read_csv(tables["diagnostic_csv"])
    assert len(tidy) == 8 and list(tidy["guide"].iloc[:4]) == list(wpt.GUIDES)
    assert tidy.set_index(["dataset", "guide"]).loc[("imdb", "adversary"), "f1"] == pytest.approx(0.78)
    header, *rows = markdown_rows(tables["diagnostic_md"])
    assert header[0] == "guide" and set(header[1:]) == {"sst", "imdb"}
    assert [r[0] for r in rows] == ["Uniform", "Trained MLP", "Base model", "Adversary"]
    by_guide = {r[0]: dict(zip(header[1:], map(float, r[1:]))) for r in rows}
    for dataset, values in DIAGNOSTIC.items():
        for label, f1 in zip(["Uniform", "Trained MLP", "Base model", "Adversary"], values):
            assert by_guide[label][dataset] == pytest.approx(f1)


def test_table4(tables):
    table = pd.read_csv(tables["adversary_csv"]).set_index("dataset")
    assert list(table.index) == ["sst", "imdb"]
    sst = table.loc["sst"]
    assert sst["lambda"] == pytest.approx(1e-2) and sst["base_f1"] == pytest.approx(0.80)
    assert (
        sst["adversary_f1"] == pytest.approx(0.71)
        and sst["jsd"] == pytest.approx(0.2)
        and sst["kl_adv_base"] == pytest.approx(0.4)
    )
    assert sst["selected_epoch"] == 6 and sst["epochs_run"] == 10
    assert "λ = 0.01" in tables["adversary_md"].read_text()


def test_table4_needs_the_table_lambda(tmp_path):
    frontier = pd.read_csv(write_frontier_csv(tmp_path / "f.csv", [0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match=r"sst/lstm-tanh: no adversary with λ = 1"):
        wpt.adversary_table([{"dataset": "sst", "model": "lstm-tanh", "seed": 1, "f1": 0.8}], [frontier], 1.0)


def test_claims_verdicts(tables):
    claims = read_claims(tables["claims"])
    assert (claims["paper"] == "Wiegreffe & Pinter 2019").all()

    table2 = claims[claims["table"] == "Table 2"].set_index("dataset")
    assert set(table2.index) == {"sst", "imdb", "agnews"}  # synthetic has no published value
    assert table2.loc["sst", "verdict"] == "match" and table2.loc["sst", "ours"] == pytest.approx(0.02)
    assert table2.loc["sst", "published"] == pytest.approx(0.009) and table2.loc["sst", "tolerance"] == pytest.approx(
        0.02
    )
    assert table2.loc["imdb", "verdict"] == "differs"
    assert table2.loc["agnews", "verdict"].startswith("not comparable") and "dev" in table2.loc["agnews", "verdict"]

    def verdict(table, dataset, quantity_start):
        rows = claims[
            (claims["table"] == table)
            & (claims["dataset"] == dataset)
            & claims["quantity"].str.startswith(quantity_start)
        ]
        assert len(rows) == 1, (table, dataset, quantity_start)
        return rows.iloc[0]

    # one base seed: the findings are listed with our numbers, not compared
    findings = claims[claims["seed"].isna()]
    assert len(findings) == 2 * 6 and set(findings["verdict"]) == {"not comparable: 1 seed, a finding needs 3"}
    assert verdict("Figure 2", "sst", "share").ours == pytest.approx(1.0)
    assert verdict("Table 3", "sst", "F1(Base model guide) - F1(Uniform guide)").ours == pytest.approx(0.15)

    numbers = claims[
        claims["seed"].notna()
        & (claims["quantity"].str.contains("diagnostic MLP test F1") | (claims["table"] == "Table 4"))
    ]
    assert len(numbers) == 2 * (4 + 3)  # per full base run: 4 guides, 3 Table 4 numbers
    assert numbers["verdict"].str.startswith("not public").all()
    table4 = numbers[(numbers["table"] == "Table 4") & (numbers["dataset"] == "sst")]
    assert table4["quantity"].str.contains("λ = 0.01").all()
    assert sorted(table4["ours"]) == pytest.approx(sorted([0.71, 0.01, 0.2]))


def test_findings_on_three_seeds_of_each_base_model(tmp_path):
    """Every finding on each base model's seeds; Table 3's central comparison (base guide at least as
    good as the MLP's own trained attention) among them."""
    root = tmp_path / "models"
    full, bases, diagnostics, variances, frontiers = {"sst": 0.80, "imdb": 0.90}, [], [], [], []
    for seed in (1, 2, 3):
        for dataset, f1 in full.items():
            bases.append(write_metrics(root, dataset, "lstm-tanh", f1, seed=seed))
            guides = (
                DIAGNOSTIC[dataset] if seed != 3 or dataset == "imdb" else (0.6, 0.80, 0.79, 0.7)
            )  # sst seed 3: trained above base
            names = (
                "average-uniform",
                "average-tanh",
                "average-guided-lstm-tanh",
                "average-guided-lstm-tanh-adversary-1e-2",
            )
            diagnostics += [write_metrics(root, dataset, name, value, seed=seed) for name, value in zip(names, guides)]
            variances.append(
                write_variance(
                    tmp_path / f"{dataset}{seed}_variance.csv", [0.01, 0.02, 0.5, 0.03], [0.02, 0.3, 0.6, 0.1]
                )
            )
            frontiers.append(
                write_frontier_csv(
                    tmp_path / f"{dataset}{seed}_frontier.csv", [0.1, 0.2, 0.3] if dataset == "sst" else [0.3, 0.2, 0.1]
                )
            )
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("uniform", "seeds", "diagnostic", "adversary")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    wpt.write_tables(
        bases[:2],
        bases[:2],
        full_base_metrics=bases,
        diagnostic_metrics=diagnostics,
        variances=variances,
        frontiers=frontiers,
        published=write_published(tmp_path / "performance.csv"),
        table_lambda=1e-2,
        tolerance=0.02,
        out=out,
    )
    claims = read_claims(out["claims"])
    findings = claims[claims["seed"].isna()].set_index(["dataset", "quantity"])
    assert (findings["seeds"] == 3).all() and len(findings) == 2 * 6

    def row(dataset, quantity):
        return findings.loc[(dataset, quantity)]

    central = "F1(Base model guide) - F1(Trained MLP guide)"
    # sst: 0.05 above on seeds 1 and 2, 0.01 below on seed 3: the interval over the seeds spans 0
    assert row("sst", central).verdict == "inconclusive"
    assert "(one value per seed); per seed 1: 0.050, 2: 0.050, 3: -0.010" in row("sst", central).condition
    assert row("imdb", central).verdict == (
        "holds" if DIAGNOSTIC["imdb"][2] > DIAGNOSTIC["imdb"][1] else "does not hold"
    )
    spread = row("sst", "share of instances whose seed-model JSD (median) is below J&W's adversarial JSD")
    assert spread.verdict == "holds" and "over 3 seeds and their test instances" in spread.condition
    assert row("sst", "Spearman ρ(λ, mean test JSD) over the λ grid").verdict == "holds"
    assert row("imdb", "Spearman ρ(λ, mean test JSD) over the λ grid").verdict == "does not hold"
    cost = row("sst", "F1(adversary) - F1(base) at the table's λ")
    assert cost.verdict == "holds" and cost.ours == pytest.approx(0.71 - 0.80)


@pytest.mark.parametrize(
    "lambdas, jsds, rho",
    [
        ([1e-3, 1e-2, 0.1], [0.1, 0.2, 0.3], 1.0),
        ([0.1, 1e-3, 1e-2], [0.3, 0.1, 0.2], 1.0),  # sorted by λ before ranking
        ([1e-3, 1e-2, 0.1], [0.3, 0.2, 0.1], -1.0),
    ],
)
def test_jsd_lambda_correlation(lambdas, jsds, rho):
    frontier = pd.DataFrame({"kind": "adversary", "lambda": lambdas, "jsd": jsds})
    frontier = pd.concat(
        [frontier, pd.DataFrame([{"kind": "uniform", "lambda": np.nan, "jsd": 9.0}])], ignore_index=True
    )
    assert wpt._jsd_lambda_correlation(frontier) == pytest.approx(rho)


def test_a_single_lambda_is_undefined():
    assert (
        wpt._jsd_lambda_correlation(
            pd.DataFrame({"kind": ["adversary", "uniform"], "lambda": [1e-3, np.nan], "jsd": [0.1, 0.5]})
        )
        is None
    )


def test_write_tables_refuses_a_wrong_number_of_diagnostic_models(tmp_path):
    base = write_metrics(tmp_path, "sst", "lstm-tanh", 0.8)
    with pytest.raises(ValueError, match="3 diagnostic models for 1 base runs: expected 4 each"):
        wpt.write_tables(
            [base],
            [base],
            full_base_metrics=[base],
            diagnostic_metrics=[base] * 3,
            variances=[],
            frontiers=[],
            published=write_published(tmp_path / "p.csv"),
            table_lambda=1e-2,
            tolerance=0.02,
            out={},
        )


def test_table3_markdown_keeps_every_base_run_of_a_dataset(tmp_path):
    root = tmp_path / "models"
    bases = [write_metrics(root, "sst", model, 0.8) for model in ("lstm-tanh", "cnn-tanh")]
    diagnostics = [
        write_metrics(root, "sst", f"{base}-{guide}", f1)
        for base, f1s in (("lstm", (0.61, 0.71, 0.81, 0.51)), ("cnn", (0.23, 0.33, 0.43, 0.13)))
        for guide, f1 in zip(wpt.GUIDES, f1s)
    ]
    variances = [write_variance(tmp_path / f"v{k}.csv", [0.01, 0.02], [0.1, 0.1]) for k in range(2)]
    frontiers = [write_frontier_csv(tmp_path / f"f{k}.csv", [0.1, 0.2, 0.3]) for k in range(2)]
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("uniform", "seeds", "diagnostic", "adversary")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    wpt.write_tables(
        bases,
        bases,
        full_base_metrics=bases,
        diagnostic_metrics=diagnostics,
        variances=variances,
        frontiers=frontiers,
        published=write_published(tmp_path / "p.csv"),
        table_lambda=1e-2,
        tolerance=0.02,
        out=out,
    )
    shown = out["diagnostic_md"].read_text()
    assert "0.81" in shown and "0.43" in shown, (
        shown
    )  # each run's Base model guide F1; the pivot shows their mean, 0.62


# ----------------------------------------------------------------------------- figures


@pytest.fixture
def close_figures():
    yield
    plt.close("all")


def has_no_data(fig) -> bool:
    return any(t.get_text() == "no data" for ax in fig.axes for t in ax.texts)


def test_max_attention_bin_edges():
    values = pd.Series([0.0, 0.2499, 0.25, 0.5, 0.74, 0.75, 0.999, 1.0], index=list("abcdefgh"))
    bins = wpp.max_attention_bin(values, [0.25, 0.5, 0.75])
    assert list(bins.cat.categories) == ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]"] and bins.cat.ordered
    assert list(bins.index) == list("abcdefgh")
    assert list(bins.astype(str)) == [
        "[0, 0.25)",
        "[0, 0.25)",
        "[0.25, 0.5)",
        "[0.5, 0.75)",
        "[0.5, 0.75)",
        "[0.75, 1]",
        "[0.75, 1]",
        "[0.75, 1]",
    ]
    two = wpp.max_attention_bin(pd.Series([0.3, 1.0]), [0.5])
    assert list(two.astype(str)) == ["[0, 0.5)", "[0.5, 1]"]


def variance_table(n=24, seed=0) -> pd.DataFrame:
    rng = np.random.RandomState(seed)
    rows = []
    for comparison in ("seeds", "jw_adversary"):
        rows.append(
            pd.DataFrame(
                {
                    "id": [f"t{k}" for k in range(n)],
                    "length": rng.randint(2, 9, n),
                    "predicted": np.arange(n) % 2,
                    "max_attention": rng.uniform(0.1, 1.0, n),
                    "comparison": comparison,
                    "models": 3 if comparison == "seeds" else 1,
                    "attention_jsd": rng.uniform(0, LN2, n),
                    "output_tvd": rng.uniform(0, 0.3, n),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("comparison", ["seeds", "jw_adversary"])
def test_seed_figures_small_one_class_and_empty(close_figures, comparison):
    table = variance_table()
    edges = [0.25, 0.5, 0.75]
    for fig in (wpp.seed_violin(table, comparison, edges, "t"), wpp.seed_scatter(table, comparison, "t")):
        assert isinstance(fig, plt.Figure) and fig.axes and not has_no_data(fig)
        assert fig.axes[0].get_xlim() == pytest.approx((0, LN2))
    one_class = table[table["predicted"] == 0]
    assert wpp.seed_violin(one_class, comparison, edges, "t").axes
    assert wpp.seed_scatter(one_class, comparison, "t").axes
    for fig in (
        wpp.seed_violin(table.iloc[:0], comparison, edges, "t"),
        wpp.seed_scatter(table.iloc[:0], comparison, "t"),
    ):
        assert isinstance(fig, plt.Figure) and has_no_data(fig)
    # a table with only the other comparison block is empty for this one
    other = table[table["comparison"] != comparison]
    assert has_no_data(wpp.seed_violin(other, comparison, edges, "t"))


def test_frontier_figure(close_figures):
    curve = wp.adversary_frontier(FRONT_BASE, ADVERSARIES, LABELS)
    references = pd.DataFrame(
        [
            {"kind": "uniform", "tvd": 0.2, "jsd": 0.3},
            {"kind": "seeds", "tvd": 0.05, "jsd": 0.02},
            {"kind": "jw_adversary", "tvd": 0.01, "jsd": 0.5},
        ]
    )
    fig = wpp.frontier(pd.concat([curve, references], ignore_index=True), "t")
    ax = fig.axes[0]
    assert not has_no_data(fig) and ax.get_xlim()[1] == pytest.approx(LN2 * 1.02)
    labels = ax.get_legend_handles_labels()[1]
    # one legend entry per λ, in λ order, and no text labels beside the points
    assert labels == ["adversary, λ = 0.1", "adversary, λ = 1", "seed models", "uniform model", "J&W adversary"]
    assert not ax.texts
    only_references = wpp.frontier(references.assign(**{"lambda": np.nan}), "t")  # as write_frontier stores them
    assert only_references.axes[0].get_legend_handles_labels()[1] == ["seed models", "uniform model", "J&W adversary"]
    empty = wpp.frontier(pd.DataFrame(columns=["kind", "lambda", "tvd", "jsd"]), "t")
    assert isinstance(empty, plt.Figure) and has_no_data(empty)


def test_attention_example(close_figures):
    tokens = ["a", "good", "film"]
    fig = wpp.attention_example(
        tokens, {"base": np.array([0.2, 0.5, 0.3]), "adversary": np.array([0.9, 0.05, 0.05])}, "t"
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    assert [t.get_text() for t in ax.get_yticklabels()] == ["base", "adversary"]
    with pytest.raises(ValueError, match="2 weights for 3 tokens"):
        wpp.attention_example(tokens, {"base": np.array([0.5, 0.5])}, "t")
    with pytest.raises(ValueError):
        wpp.attention_example(tokens, {"base": np.array([0.2, 0.5, 0.3]), "adversary": np.array([0.5, 0.5])}, "t")


def test_attention_example_draws_no_data_when_empty(close_figures):
    assert has_no_data(wpp.attention_example([], {"base": np.array([])}, "t"))


# --- benchmarks/wiegreffe_pinter_cost.py: a run's training cost from its timing.json files ---


def test_cost_table_sums_each_role_and_counts_what_is_not_trained(tmp_path):
    overlay = tmp_path / "run.yaml"
    overlay.write_text(
        "wiegreffe_pinter: {datasets: [sst, imdb], models: [lstm-tanh], table2_only: [imdb], seeds: [50, 257],"
        " adversary: {lambdas: [1.0e-3, 1.0], table_lambda: 1.0}}\ntrain: {seeds: [10]}\n"
    )
    config = load_config(overlay)
    sst = wiegreffe_pinter_companions(config, RunKey("sst", "lstm-tanh", 10))
    trained = {sst.base: 100.0, sst.seeds[0]: 30.0, sst.seeds[1]: 20.0, sst.adversaries[1.0]: 7.5}
    for run, seconds in trained.items():
        io.write_json(
            tmp_path / run.path("results/models") / "timing.json",
            {"train_seconds": seconds, "epochs_run": 5, "device": "cpu", "threads": 1},
        )
    rows = {
        tuple(c.strip() for c in line.split("|")[1:3]): line
        for line in load_benchmark("wiegreffe_pinter_cost").cost_table(tmp_path, config)
    }
    assert "| 2 | 2 | 10 | 50 | 5.0 | cpu × 1 |" in rows[("sst", "seed models")]
    assert "| 2 | 1 | 5 | 8 | 1.5 |" in rows[("sst", "adversaries")]
    assert "| 4 | 0 | 0 | 0 | – | – |" in rows[("sst", "diagnostic MLPs")]
    assert "**158** (6 not trained yet)" in rows[("**sst**", "**all**")]  # 1 uniform + 1 adversary + 4 MLPs missing
    assert ("imdb", "seed models") not in rows  # Table 2 only: base and uniform
    assert "**0** (2 not trained yet)" in rows[("**imdb**", "**all**")]


def test_numbers_the_paper_never_reports_are_not_in_the_paper(tmp_path):
    """W&P report Tables 3-4 on Diabetes, Anemia, IMDb and SST: our 20News numbers are `not in the
    paper`, not `not public`."""
    root = tmp_path / "models"
    base = write_metrics(root, "20news", "lstm-tanh", 0.9)
    names = ("average-uniform", "average-tanh", "average-guided-lstm-tanh", "average-guided-lstm-tanh-adversary-1e-2")
    diagnostics = [write_metrics(root, "20news", name, value) for name, value in zip(names, DIAGNOSTIC["sst"])]
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("uniform", "seeds", "diagnostic", "adversary")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    wpt.write_tables(
        [base],
        [base],
        full_base_metrics=[base],
        diagnostic_metrics=diagnostics,
        variances=[write_variance(tmp_path / "v.csv", [0.01, 0.02], [0.1, 0.1])],
        frontiers=[write_frontier_csv(tmp_path / "f.csv", [0.1, 0.2, 0.3])],
        published=write_published(tmp_path / "p.csv"),
        table_lambda=1e-2,
        tolerance=0.02,
        out=out,
    )
    numbers = read_claims(out["claims"])
    numbers = numbers[numbers["seed"].notna() & numbers["table"].isin(["Table 3", "Table 4"])]
    assert len(numbers) == 4 + 3 and set(numbers["verdict"]) == {wpt.NOT_IN_THE_PAPER}
