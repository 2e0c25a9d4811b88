"""What a training minimises: the protocol's supervised loss (J&W BC's class-weighted BCE summed over
the batch, cross-entropy otherwise) and the hooks that replace or watch it. The loss is a hook:
`train_model(..., objective=...)` takes any function of (model, batch) that returns the batch's
summed loss; Wiegreffe & Pinter's model-consistent adversary plugs in its own (no gold labels), and
its `monitor` adds per-epoch metrics to the history.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnexp.models.inputs import Batch

__all__ = ["Objective", "Monitor", "class_weights", "supervised_objective"]

Objective = Callable[[nn.Module, Batch], torch.Tensor]  # (model, batch) -> the batch's summed loss
# (model, splits, device) -> extra metrics recorded in each epoch's history (W&P's adversary: TVD/JSD/KL)
Monitor = Callable[[nn.Module, dict, torch.device], dict]


def class_weights(labels: np.ndarray) -> float:
    """J&W §3 pos_weight = N / N_pos - 1, so both classes weigh the same in the summed loss."""
    n_pos = int(np.sum(labels == 1))
    if n_pos == 0:
        raise ValueError("the training split has no positive instance")
    return len(labels) / n_pos - 1


def supervised_objective(pos_weight: float | None) -> Objective:
    """The papers' loss, summed over the batch: J&W BC class-weighted BCE with logits for a single
    sigmoid output, cross-entropy otherwise."""

    def objective(model: nn.Module, batch: Batch) -> torch.Tensor:
        logits, _ = model(batch)
        if logits.shape[-1] == 1:
            weight = torch.where(batch.labels == 1, pos_weight, 1.0)
            return F.binary_cross_entropy_with_logits(
                logits.squeeze(-1), batch.labels.float(), weight=weight, reduction="sum"
            )
        return F.cross_entropy(logits, batch.labels, reduction="sum")

    return objective
