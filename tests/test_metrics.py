"""Metrics (attnexp.metrics), each against a brute-force or hand computation: ROC-AUC, F1 and the
classification summary; Kendall τ-b against scipy; JSD and TVD against float64 references; the
ground-truth scores against planted positions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import kendalltau, rankdata

from attnexp.metrics import (
    classification_metrics,
    f1_per_class,
    ground_truth_scores,
    jsd,
    kendall_tau,
    neg_entropy,
    pairwise_jsd_total,
    roc_auc,
    tvd,
)

LN2 = math.log(2)


# --------------------------------------------------------------------------------------------------
# metrics


def brute_force_auc(y, s) -> float:
    pos, neg = s[y == 1], s[y == 0]
    return float(np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg]))


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_is_the_pairwise_probability_with_ties_half(seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, size=40)
    y[:2] = [0, 1]
    score = rng.randint(0, 6, size=40) / 5.0  # many ties
    assert roc_auc(y, score) == pytest.approx(brute_force_auc(y, score), abs=1e-12)
    continuous = rng.randn(40)
    assert roc_auc(y, continuous) == pytest.approx(brute_force_auc(y, continuous), abs=1e-12)
    # to the last bit what scipy's average ranks give (a training's selected epoch must not move)
    for s in (score, continuous):
        ranks = rankdata(s)
        assert roc_auc(y, s) == float((ranks[y == 1].sum() - y.sum() * (y.sum() + 1) / 2) / (y.sum() * (40 - y.sum())))


def test_roc_auc_edge_cases():
    assert roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert roc_auc(np.array([1, 1, 0, 0]), np.array([0.1, 0.2, 0.3, 0.4])) == 0.0
    assert roc_auc(np.array([0, 1, 0, 1]), np.full(4, 0.5)) == 0.5
    assert np.isnan(roc_auc(np.array([1, 1, 1]), np.array([0.1, 0.2, 0.3])))
    assert np.isnan(roc_auc(np.array([0, 0]), np.array([0.1, 0.2])))


def test_f1_per_class_by_hand():
    y_true = np.array([0, 0, 0, 1, 1, 2])
    y_pred = np.array([0, 1, 0, 1, 2, 2])
    # class 0: tp 2 fp 0 fn 1 -> 4/5; class 1: tp 1 fp 1 fn 1 -> 1/2; class 2: tp 1 fp 1 fn 0 -> 2/3; class 3: absent -> 0
    assert f1_per_class(y_true, y_pred, 4) == pytest.approx([0.8, 0.5, 2 / 3, 0.0])
    assert f1_per_class(np.array([1, 1]), np.array([0, 0]), 2) == [0.0, 0.0]


def test_classification_metrics_binary_and_multiclass():
    y = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.2, 0.9, 0.5, 0.6, 0.7])  # 0.5 -> class 0 (argmax takes the first of a tie)
    binary = classification_metrics(y, np.stack([1 - p1, p1], axis=1))
    assert binary["n"] == 5 and binary["accuracy"] == pytest.approx(3 / 5)
    # predicted [0, 1, 0, 1, 1]: class 0 tp 1 fp 1 fn 1 -> 1/2; class 1 tp 2 fp 1 fn 1 -> 2/3
    assert binary["f1"] == pytest.approx([0.5, 2 / 3])
    assert binary["macro_f1"] == pytest.approx(np.mean(binary["f1"]))
    assert binary["roc_auc"] == pytest.approx(brute_force_auc(y, p1))
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
    multi = classification_metrics(np.array([0, 1, 2, 1]), probs)
    assert "roc_auc" not in multi
    assert multi["accuracy"] == 0.75 and multi["f1"] == pytest.approx([2 / 3, 2 / 3, 1.0])


# --------------------------------------------------------------------------------------------------
# Kendall τ-b


def test_kendall_tau_hand_computed():
    # pairs (1,2) and (1,3) concordant, (2,3) discordant: τ = (2 − 1) / 3
    tau, p = kendall_tau(np.array([1, 2, 3]), np.array([1, 3, 2]))
    assert tau == pytest.approx(1 / 3, abs=1e-12)
    assert 0 < p <= 1
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1])[0] == pytest.approx(-1.0)


@pytest.mark.parametrize(
    "a, b",
    [
        ([1, 2, 2, 3, 4], [2, 1, 3, 3, 5]),  # ties in both
        ([0.1, 0.1, 0.1, 0.5, 0.2, 0.9], [3, 1, 2, 2, 0, 4]),
        ([5, 4, 3, 2, 1, 0, 7], [0, 1, 2, 3, 4, 5, 6]),
        (list(np.random.RandomState(0).rand(30)), list(np.random.RandomState(1).rand(30))),
        (list(np.random.RandomState(2).randint(0, 4, 40)), list(np.random.RandomState(3).randint(0, 4, 40))),
    ],
)
def test_kendall_tau_equals_scipy(a, b):
    tau, p = kendall_tau(np.array(a), np.array(b))
    expected = kendalltau(a, b)
    assert tau == pytest.approx(expected.statistic, abs=1e-12)
    assert p == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-15)


def test_kendall_tau_is_nan_for_a_constant_vector():
    for a, b in [([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [0.5, 0.5, 0.5]), ([2.0], [3.0])]:
        tau, p = kendall_tau(np.array(a), np.array(b))
        assert math.isnan(tau) and math.isnan(p)


def test_kendall_tau_refuses_mismatched_shapes():
    with pytest.raises(ValueError):
        kendall_tau(np.array([1, 2, 3]), np.array([1, 2]))
    with pytest.raises(ValueError):
        kendall_tau(np.ones((2, 2)), np.ones((2, 2)))


# --------------------------------------------------------------------------------------------------
# JSD and TVD


def random_distributions(*shape, seed=0, zeros=False):
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(*shape, generator=g) ** 3
    if zeros:
        p = p * (torch.rand(*shape, generator=g) > 0.3)
        p[..., 0] += 0.01  # never all zero
    return p / p.sum(-1, keepdim=True)


def reference_jsd(p, q) -> float:
    """In float64 with 0·log 0 = 0."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    m = (p + q) / 2

    def kl(a, b):
        nz = a > 0
        return float(np.sum(a[nz] * np.log(a[nz] / b[nz])))

    return (kl(p, m) + kl(q, m)) / 2


def test_jsd_of_identical_distributions_is_zero():
    p = random_distributions(6, 9)
    assert torch.equal(jsd(p, p), torch.zeros(6))


def test_jsd_is_symmetric_bounded_and_matches_a_float64_reference():
    p, q = random_distributions(50, 7, seed=1), random_distributions(50, 7, seed=2)
    forward, backward = jsd(p, q), jsd(q, p)
    assert torch.allclose(forward, backward, atol=1e-7)
    assert (forward >= -1e-7).all() and (forward <= LN2 + 1e-7).all()
    assert forward.max() > 0.01  # not trivially zero
    for i in range(5):
        assert forward[i].item() == pytest.approx(reference_jsd(p[i], q[i]), abs=1e-6)


def test_jsd_of_disjoint_supports_is_ln2():
    p = torch.tensor([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    q = torch.tensor([[0.0, 0.0, 0.3, 0.7], [0.0, 0.0, 0.0, 1.0]])
    assert torch.allclose(jsd(p, q), torch.full((2,), LN2), atol=1e-6)


def test_jsd_broadcasts_leading_axes():
    K, B, L = 3, 4, 6
    p, q = random_distributions(K, 1, L, seed=3), random_distributions(1, B, L, seed=4)
    out = jsd(p, q)
    assert out.shape == (K, B)
    for k in range(K):
        for b in range(B):
            assert out[k, b].item() == pytest.approx(jsd(p[k, 0], q[0, b]).item(), abs=1e-7)


def test_jsd_with_zero_weights_is_finite_and_correct():
    p, q = random_distributions(20, 8, seed=5, zeros=True), random_distributions(20, 8, seed=6, zeros=True)
    assert (p == 0).any() and (q == 0).any()
    out = jsd(p, q)
    assert torch.isfinite(out).all()
    for i in range(20):
        assert out[i].item() == pytest.approx(reference_jsd(p[i], q[i]), abs=1e-6)
    # gradients through masked positions stay finite too (the adversary differentiates through it)
    z = torch.zeros(8, requires_grad=True)
    mask = torch.tensor([False, True, True, True, False, True, False, False])
    alpha = torch.softmax(z.masked_fill(~mask, float("-inf")), -1).masked_fill(~mask, 0.0)
    jsd(alpha, p[0]).backward()
    assert torch.isfinite(z.grad).all()


def test_tvd_is_half_l1_and_absolute_difference_for_binary():
    p, q = random_distributions(30, 5, seed=7), random_distributions(30, 5, seed=8)
    assert torch.allclose(tvd(p, q), 0.5 * (p - q).abs().sum(-1))
    assert torch.equal(tvd(p, q), tvd(q, p))
    assert (tvd(p, q) >= 0).all() and (tvd(p, q) <= 1).all()
    a, b = torch.tensor([0.9, 0.2, 0.5]), torch.tensor([0.3, 0.25, 0.5])
    binary = tvd(torch.stack([1 - a, a], -1), torch.stack([1 - b, b], -1))
    assert torch.allclose(binary, (a - b).abs())
    assert tvd(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])).item() == 1.0


# --------------------------------------------------------------------------------------------------
# ground-truth scores


def test_ground_truth_scores_hand_computed():
    scores = np.array([0.1, 0.4, 0.2, 0.3, 0.0])
    out = ground_truth_scores(scores, np.array([3, 2]))
    # mass 0.5 of 1.0 over |G|/n = 2/5; ranking 1,3,2,0,4 -> hits 0,1,1,0,0
    assert out["mass"] == pytest.approx(0.5)
    assert out["mass_ratio"] == pytest.approx(0.5 / 0.4)
    assert out["precision"] == pytest.approx(0.5)
    assert out["first_hit"] == 2
    assert out["auprc"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    perfect = ground_truth_scores(np.array([0.0, 0.7, 0.0, 0.3]), [1, 3])
    assert (perfect["mass"], perfect["precision"], perfect["first_hit"], perfect["auprc"]) == (1.0, 1.0, 1, 1.0)


def test_ground_truth_ties_are_broken_by_the_lower_position():
    # positions 0 and 2 tie for the top; the lower position (0, not in G) comes first
    out = ground_truth_scores(np.array([0.5, 0.2, 0.5, 0.1]), [2])
    assert out["precision"] == 0.0
    assert out["first_hit"] == 2
    assert out["auprc"] == pytest.approx(0.5)
    # and the other way round: the planted position is the lower one
    out = ground_truth_scores(np.array([0.5, 0.2, 0.5, 0.1]), [0])
    assert out["precision"] == 1.0 and out["first_hit"] == 1 and out["auprc"] == 1.0


def test_ground_truth_scores_refuse_bad_input():
    scores = np.array([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="non-empty"):
        ground_truth_scores(scores, [])
    with pytest.raises(ValueError, match="non-empty"):
        ground_truth_scores(scores, [3])
    with pytest.raises(ValueError, match="non-empty"):
        ground_truth_scores(scores, [-1])
    with pytest.raises(ValueError, match="non-negative"):
        ground_truth_scores(np.array([0.2, -0.3, 0.5]), [1])


def test_pairwise_jsd_total_is_the_sum_over_every_ordered_pair_diagonal_included():
    torch.manual_seed(0)
    p = torch.softmax(torch.randn(5, 3, 9), dim=-1)
    p[:, :, -2:] = 0  # masked positions, as the adversary's candidates have
    p = p / p.sum(-1, keepdim=True)
    pairs = jsd(p[:, None], p[None, :]).sum(dim=(0, 1))  # (3,)
    assert torch.allclose(pairwise_jsd_total(p), pairs, atol=1e-6)
    assert torch.allclose(pairwise_jsd_total(p, neg_entropy(p)), pairs, atol=1e-6)
    q = torch.softmax(torch.randn(3, 9), dim=-1)
    assert torch.allclose((neg_entropy(p) + neg_entropy(q)) / 2 - neg_entropy((p + q) / 2), jsd(p, q), atol=1e-6)
    assert torch.equal(pairwise_jsd_total(p[:1]), torch.zeros(3))  # one candidate: only the diagonal
