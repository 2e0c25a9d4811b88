"""The training loop's parts, each keeping its own state from epoch to epoch: the embedding's
gradient with the clipping of every gradient (`EmbeddingGradients`), checkpoint selection with early
stopping (`CheckpointSelection`, D-SEL), the timing (`Timing`), and the run they act on
(`TrainingRun`). `attnexp.train.loop` puts them together.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from attnexp.models.inputs import Batch
from attnexp.models.splits import SplitData
from attnexp.train.objectives import Monitor, Objective
from attnexp.train.optimizers import Schedules

__all__ = ["EmbeddingGradients", "Best", "CheckpointSelection", "Timing", "TrainingRun"]


class EmbeddingGradients:
    """The trainable (V, E) embedding's gradient. While training, the backward pass writes it sparse,
    as (rows, E) values (`sparse=True`); then, per `embedding_update`:

    - `dense` (the papers' Adam): it is clipped with the other gradients and scattered into one
      persistent (V, E) gradient whose previous rows are zeroed, so the optimiser's dense step sees
      the gradient nn.Embedding's dense backward gives (its sums taken in another order, equal to
      float rounding). That backward allocates and zero-fills a fresh (V, E) tensor per call of the
      layer, freshly mapped memory each time: about 20 ms for imdb_ratings' 36,012 x 200 on 2 cores,
      once per sentence chunk of a HAN step, against the batch's rows here;
    - `lazy` (a named deviation): left sparse for `LazyAdam`, which updates those rows only.

    A model without an `embedding` layer, or with a frozen one, trains as it is; the layer's own
    setting is back after training, also when the epochs stop early."""

    def __init__(self, model: nn.Module, settings: dict):
        self.lazy = settings["embedding_update"] == "lazy"
        embedding = getattr(model, "embedding", None)
        if self.lazy and not isinstance(embedding, nn.Embedding):
            raise ValueError(
                f"embedding_update: lazy needs a model with an `embedding` layer, {type(model).__name__} has none"
            )
        if self.lazy and settings["grad_clip"] is not None:
            raise ValueError(
                "embedding_update: lazy gives the embedding sparse gradients, which grad_clip cannot clip: set grad_clip: null or embedding_update: dense"
            )
        trainable = isinstance(embedding, nn.Embedding) and embedding.weight.requires_grad
        self.embedding = embedding if trainable else None
        self._gradient: torch.Tensor | None = None  # dense: the persistent (V, E) gradient
        self._rows: torch.Tensor | None = None  # dense: its non-zero rows

    @contextmanager
    def sparse(self) -> Iterator[None]:
        """Sparse embedding gradients for the duration of training."""
        if self.embedding is None:
            yield
            return
        sparse_before = self.embedding.sparse
        try:
            self.embedding.sparse = True
            yield
        finally:
            self.embedding.sparse = sparse_before

    def after_backward(self, model: nn.Module, max_norm: float | None) -> None:
        """Clip every gradient to a total 2-norm of `max_norm` (None: no clipping; torch's
        clip_grad_norm_ rule, the embedding's norm taken over its batch rows), then give the
        embedding its dense gradient (`dense`) or leave it sparse (`lazy`)."""
        weight = None if self.embedding is None else self.embedding.weight
        rows = values = None
        if weight is not None and weight.grad is not None and weight.grad.is_sparse and not self.lazy:
            grad = weight.grad.coalesce()  # each row once, duplicates summed
            rows, values = grad.indices()[0], grad.values()
        if max_norm is not None:
            dense = [p.grad for p in model.parameters() if p.grad is not None and (p is not weight or values is None)]
            norms = [torch.linalg.vector_norm(g) for g in dense] + (
                [torch.linalg.vector_norm(values)] if values is not None else []
            )
            if norms:
                coefficient = torch.clamp(max_norm / (torch.linalg.vector_norm(torch.stack(norms)) + 1e-6), max=1.0)
                if not bool(coefficient == 1.0):  # times one changes nothing; a non-finite norm spreads as in torch
                    torch._foreach_mul_(dense, coefficient)
                    values = None if values is None else values * coefficient
        if rows is None:
            return
        if self._gradient is None:
            self._gradient = torch.zeros_like(weight)
        else:
            self._gradient.index_fill_(0, self._rows, 0.0)
        self._gradient.index_copy_(0, rows, values)
        self._rows = rows
        weight.grad = self._gradient


class Best(NamedTuple):
    score: float
    epoch: int
    state_dict: dict
    dev: dict
    test: dict


class CheckpointSelection:
    """The best epoch's weights and metrics so far (higher scores are better), and early stopping
    after `patience` selectable epochs without improvement. `skip_first_epoch`: J&W never select
    epoch 1 (of several), which then does not count towards the patience either."""

    def __init__(self, settings: dict):
        self.skip_first = settings["skip_first_epoch"] and settings["epochs"] > 1
        self.patience = settings["patience"]
        self.best: Best | None = None
        self.since_best = 0

    @staticmethod
    def comparable(score: float) -> float:
        """NaN (e.g. ROC-AUC of a one-class split) as -inf: never better than another epoch."""
        return float("-inf") if np.isnan(score) else score

    def consider(self, epoch: int, score: float, model: nn.Module, dev: dict, test: dict) -> bool:
        """Keep a copy of the weights if the epoch's score beats the best so far; whether it did."""
        selectable = not (self.skip_first and epoch == 1)
        improved = selectable and (self.best is None or score > self.best.score)
        if improved:
            self.best = Best(score, epoch, copy.deepcopy(model.state_dict()), dev, test)
            self.since_best = 0
        elif selectable:
            self.since_best += 1
        return improved

    @property
    def stop(self) -> bool:
        return self.patience is not None and self.since_best >= self.patience


@dataclass
class Timing:
    """The epochs' seconds, training steps and evaluation apart, and the padding in the batches."""

    step_seconds: float = 0.0
    eval_seconds: float = 0.0
    computed: int = 0  # token positions the batches hold
    real: int = 0  # of which real tokens

    def count(self, batch: Batch) -> None:
        self.computed += batch.tokens.numel()
        self.real += int(batch.lengths.sum()) if batch.sentence_lengths is None else int(batch.sentence_lengths.sum())

    def record(self, epochs_run: int, device: torch.device) -> dict:
        """timing.json"""
        seconds = self.step_seconds + self.eval_seconds
        return {
            "train_seconds": round(seconds, 3),
            "epochs_run": epochs_run,
            "seconds_per_epoch": round(seconds / epochs_run, 3),
            "step_seconds": round(self.step_seconds, 3),  # training batches: forward, backward, optimiser
            "eval_seconds": round(self.eval_seconds, 3),  # dev and test after each epoch, monitor, selection
            "padding_share": round(1 - self.real / self.computed, 4) if self.computed else 0.0,
            "device": str(device),
            "threads": torch.get_num_threads(),
        }


@dataclass(frozen=True, kw_only=True)
class TrainingRun:
    """One training run: the model, its data and settings, and what trains and judges it."""

    model: nn.Module
    splits: dict[str, SplitData]
    settings: dict
    select_on: str
    device: torch.device
    objective: Objective
    optimizer: torch.optim.Optimizer
    embedding_gradients: EmbeddingGradients
    schedules: Schedules
    monitor: Monitor | None
    log: Callable[[str], None]
