"""One definition per metric. Classification: accuracy, F1 per class and macro, ROC-AUC.
(Attention-distribution metrics — JSD, TVD, Kendall τ — join here with the experiments.)"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["roc_auc", "f1_per_class", "classification_metrics"]


def roc_auc(y_true: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve = P(score of a random positive > a random negative), ties count ½
    (the Mann-Whitney U statistic, via average ranks). NaN when one class is absent."""
    y_true = np.asarray(y_true).astype(bool)
    n_pos, n_neg = int(y_true.sum()), int((~y_true).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(score)  # average ranks for ties
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
