"""One definition per metric (DESIGN.md), used by training, the experiments and the tests alike.

- Classification: accuracy, F1 per class and macro, ROC-AUC.
- Distributions: JSD (natural log, 0..ln 2) and TVD (½‖p − q‖₁ over the full distribution), on
  torch tensors so that the adversary can differentiate through them.
- Rank agreement: Kendall τ-b with its two-sided p-value (scipy defaults; D-TAU).
- Agreement with a planted right answer G: mass, precision@|G|, first-hit rank, AUPRC.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import scipy  # the version alone: scipy.stats (~1.7 s to import) is loaded by kendall_tau, the one function using it

if TYPE_CHECKING:
    # Annotations only: the distributions use tensor methods (and pairwise_jsd_total imports torch
    # itself), so a job that only ranks scores (jw_correlations) never loads torch (~1.5 s).
    import torch

__all__ = [
    "roc_auc",
    "f1_per_class",
    "classification_metrics",
    "JSD_EPS",
    "neg_entropy",
    "pairwise_jsd_total",
    "jsd",
    "kl",
    "tvd",
    "kendall_tau",
    "SCIPY_VERSION",
    "ground_truth_scores",
]

# J&W §5.5 add 1e-10 inside the logarithms so that zero weights (masked positions) are finite.
JSD_EPS = 1e-10
# p-values of short sequences depend on scipy's method choice (D-TAU): every table records this.
SCIPY_VERSION = scipy.__version__


def roc_auc(y_true: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve = P(score of a random positive > a random negative), ties count ½
    (the Mann-Whitney U statistic, via average ranks). NaN when one class is absent."""
    y_true = np.asarray(y_true).astype(bool)
    n_pos, n_neg = int(y_true.sum()), int((~y_true).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    # Average ranks for ties, as scipy.stats.rankdata gives them (half-integers: the sums are exact);
    # without scipy.stats, whose import (~1.7 s) would be a sixth of a quick training job.
    values, group, counts = np.unique(np.asarray(score), return_inverse=True, return_counts=True)
    if np.isnan(values).any():  # rankdata propagates NaN
        return float("nan")
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[group.reshape(-1)]
    return float((ranks[y_true].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def f1_per_class(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> list[float]:
    """F1 of each class; 0 where a class is never predicted nor present (no division by zero)."""
    scores = []
    for c in range(n_classes):
        tp = np.sum((y_pred == c) & (y_true == c))
        fp = np.sum((y_pred == c) & (y_true != c))
        fn = np.sum((y_pred != c) & (y_true == c))
        scores.append(float(2 * tp / (2 * tp + fp + fn)) if tp + fp + fn else 0.0)
    return scores


def classification_metrics(y_true: np.ndarray, probs: np.ndarray) -> dict:
    """y_true (N,) class indices; probs (N, C) class probabilities (C = 2 for a sigmoid output).
    Binary tasks add ROC-AUC of P(class 1). Predicted class = argmax, so p = 0.5 -> class 0."""
    y_true = np.asarray(y_true)
    y_pred = probs.argmax(axis=1)
    per_class = f1_per_class(y_true, y_pred, probs.shape[1])
    metrics = {
        "n": int(len(y_true)),
        "accuracy": float(np.mean(y_pred == y_true)),
        "macro_f1": float(np.mean(per_class)),
        "f1": per_class,
    }
    if probs.shape[1] == 2:
        metrics["roc_auc"] = roc_auc(y_true == 1, probs[:, 1])
    return metrics


def jsd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence over the last axis: ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2, natural
    log, in [0, ln 2]. Broadcasts leading axes. Zero weights contribute 0 (up to JSD_EPS)."""
    m = (p + q) / 2
    kl_pm = (p * ((p + JSD_EPS).log() - (m + JSD_EPS).log())).sum(-1)
    kl_qm = (q * ((q + JSD_EPS).log() - (m + JSD_EPS).log())).sum(-1)
    return (kl_pm + kl_qm) / 2


def neg_entropy(p: torch.Tensor) -> torch.Tensor:
    """Σ p log(p + ε) over the last axis, with `jsd`'s ε: JSD(p, q) = ½ neg_entropy(p) + ½ neg_entropy(q)
    − neg_entropy((p + q)/2), the form that lets many divergences of one p share its logarithms."""
    return (p * (p + JSD_EPS).log()).sum(-1)


def pairwise_jsd_total(p: torch.Tensor, own: torch.Tensor | None = None) -> torch.Tensor:
    """Σ_{k,k′} JSD(p_k, p_k′) over the first axis (K, ..., L) -> (...): `jsd` of every ordered pair,
    diagonal included (where it is 0), as (K − 1) Σ_k e_k − 2 Σ_{k<k′} e((p_k + p_k′)/2) with
    e = `neg_entropy` (`own`: e_k when already computed): a third of the logarithms and products of
    evaluating the K² pairs (J&W's adversary diversity term)."""
    import torch  # see the module's imports

    K = p.shape[0]
    own = neg_entropy(p) if own is None else own  # (K, ...)
    if K == 1:
        return torch.zeros_like(own[0])
    mixtures = torch.cat(
        [(p[k : k + 1] + p[k + 1 :]) / 2 for k in range(K - 1)]
    )  # (K(K−1)/2, ..., L); slices, not gathers
    return (K - 1) * own.sum(0) - 2 * neg_entropy(mixtures).sum(0)


def kl(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """KL(p‖q) over the last axis, natural log, with JSD_EPS inside the logarithms (finite where q
    has zeros). Broadcasts leading axes."""
    return (p * ((p + JSD_EPS).log() - (q + JSD_EPS).log())).sum(-1)


def tvd(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Total variation distance ½ Σ|p − q| over the last axis (class probabilities). For a binary
    output [1 − ŷ, ŷ] it is |Δŷ|, the J&W BC output difference."""
    return (p - q).abs().sum(-1) / 2


def kendall_tau(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Kendall τ-b of two score vectors and its two-sided p-value (scipy defaults, D-TAU). Both are
    NaN when either vector is constant (τ undefined; J&W §5.3 exclude and count such instances)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"kendall_tau needs two vectors of one length, got shapes {a.shape} and {b.shape}")
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan, math.nan
    from scipy.stats import kendalltau

    # scipy's function itself, under the wrapper that broadcasts axes and applies a NaN policy
    # (functools.wraps keeps it as __wrapped__): two finite vectors need neither, and a J&W
    # correlations job calls it thousands of times at less than half the cost. The same numbers.
    result = kendalltau.__wrapped__(a, b)
    return float(result.statistic), float(result.pvalue)


def ground_truth_scores(scores: np.ndarray, truth: np.ndarray) -> dict:
    """How well token scores s (n,) find the planted positions G, all over real tokens:

    - mass = Σ_{t∈G} s_t / Σ_t s_t, and mass_ratio = mass / (|G|/n) (1 = chance);
    - precision = |top-|G| ∩ G| / |G|;
    - first_hit = the best (smallest, 1-based) rank of any t ∈ G;
    - auprc = average precision with labels 1[t ∈ G].

    Scores are ranked descending, ties broken by the lower position. Higher is better except for
    first_hit. Scores must be non-negative (attention, or |attribution|)."""
    scores = np.asarray(scores, dtype=np.float64)
    truth = np.unique(np.asarray(truth, dtype=np.int64))
    n, k = len(scores), len(truth)
    if k == 0 or np.any(truth < 0) or np.any(truth >= n):
        raise ValueError(f"the planted positions {truth.tolist()} must be a non-empty subset of 0..{n - 1}")
    if np.any(scores < 0):
        raise ValueError("ground-truth metrics need non-negative scores (attention or |attribution|)")
    relevant = np.zeros(n, dtype=bool)
    relevant[truth] = True
    order = np.lexsort((np.arange(n), -scores))  # descending score, then lower position first
    hits = relevant[order]
    total = scores.sum()
    mass = float(scores[relevant].sum() / total) if total > 0 else math.nan
    precision_at = np.cumsum(hits) / np.arange(1, n + 1)
    return {
        "mass": mass,
        "mass_ratio": mass / (k / n),
        "precision": float(hits[:k].mean()),
        "first_hit": int(np.argmax(hits)) + 1,
        "auprc": float(precision_at[hits].mean()),
    }
