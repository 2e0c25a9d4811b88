"""The training loop for every model family, deterministic given the seed: after every epoch's
training the dev and test metrics, the checkpoint selection and the snapshot a stopped job resumes
from; `train_model` runs it to the end, `train_epochs` one epoch at a time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnexp.metrics import classification_metrics
from attnexp.models.encoders import conicity
from attnexp.models.inputs import length_bucketed_batches, sorted_batches
from attnexp.models.splits import SplitData, batches_of
from attnexp.runtime import predict
from attnexp.train.objectives import Monitor, Objective, class_weights, supervised_objective
from attnexp.train.optimizers import Schedules, build_optimizer
from attnexp.train.parts import CheckpointSelection, EmbeddingGradients, Timing, TrainingRun
from attnexp.train.snapshot import Snapshot

__all__ = ["TrainResult", "train_model", "train_epochs", "mean_conicity"]


def mean_conicity(model: nn.Module, split: SplitData, batch_size: int, device: torch.device) -> float:
    """Mohankumar et al. (2020)'s conicity of the states a flat or QA model attends over, averaged over
    a split's instances (`attnexp.models.encoders.conicity`), in eval mode."""
    model.eval()
    lengths = np.array([e.length(model.layout) for e in split.examples])
    total = 0.0
    with torch.no_grad():
        for batch in batches_of(split, sorted_batches(lengths, batch_size), model.layout):
            encoded = model.encode(batch.to(device))
            total += float(conicity(encoded.hidden, encoded.mask).double().sum())
    return total / len(split.examples)


def _evaluate(model, split, settings, device) -> dict:
    probs, _ = predict(model, split, settings["eval_batch_size"], device, settings["max_tokens"])
    return classification_metrics(split.labels(), probs)


@dataclass
class TrainResult:
    state_dict: dict
    best_epoch: int
    history: list[dict]
    dev: dict
    test: dict
    timing: dict = field(default_factory=dict)


def _rounded(metrics: dict) -> dict:
    return json.loads(json.dumps(metrics), parse_float=lambda x: round(float(x), 6))


def _train_epoch(run: TrainingRun, order: list[np.ndarray], timing: Timing) -> float:
    """One pass over the training batches in `order`; the sum of their losses."""
    model, settings = run.model, run.settings
    model.train()
    total_loss = 0.0
    for batch in batches_of(run.splits["train"], order, model.layout):
        timing.count(batch)
        batch = batch.to(run.device)
        loss = run.objective(model, batch)
        if hasattr(
            model, "training_penalty"
        ):  # a model's own term (the diversity LSTM's conicity), under every objective
            loss = loss + model.training_penalty()
        run.optimizer.zero_grad(set_to_none=True)  # (torch's default) the backward writes fresh gradients, no zero fill
        # J&W BC sums the loss over the batch; QA/NLI and S&S average it
        (loss if settings["loss_reduction"] == "sum" else loss / len(batch)).backward()
        run.embedding_gradients.after_backward(model, settings["grad_clip"])
        run.optimizer.step()
        run.schedules.after_step()
        total_loss += loss.item()
    return total_loss


def _evaluate_epoch(
    run: TrainingRun, epoch: int, train_loss: float, checkpoints: CheckpointSelection, started: float
) -> tuple[dict, float]:
    """After an epoch's training: dev and test metrics, the monitor's, the epoch offered to the
    checkpoint selection, and its log line. -> its history record (rounded) and selection score."""
    settings = run.settings
    dev, test = (_evaluate(run.model, run.splits[s], settings, run.device) for s in ("dev", "test"))
    selection = {"dev": dev, "test": test, "train": {"loss": -train_loss}}[run.select_on]  # higher is better
    score = selection[settings["select_metric"]]
    record = {
        "epoch": epoch,
        "train_loss": train_loss,
        "lr": run.optimizer.param_groups[0]["lr"],
        "dev": {k: v for k, v in dev.items() if k != "f1"},
        "test": {k: v for k, v in test.items() if k != "f1"},
    }
    if run.monitor is not None:
        record.update(run.monitor(run.model, run.splits, run.device))
    score = checkpoints.comparable(score)
    improved = checkpoints.consider(epoch, score, run.model, dev, test)
    criterion = (
        "kept on the lowest one"
        if run.select_on == "train"
        else f"{run.select_on} {settings['select_metric']} {score:.4f}"
    )
    run.log(
        f"epoch {epoch}/{settings['epochs']}: train loss {record['train_loss']:.4f}, "
        f"{criterion} (dev acc {dev['accuracy']:.4f}, "
        f"test acc {test['accuracy']:.4f}){' *' if improved else ''} ({time.perf_counter() - started:.1f} s)"
    )
    return _rounded(record), score


def train_model(
    model: nn.Module,
    splits: dict[str, SplitData],
    settings: dict,
    *,
    select_on: str,
    seed: int,
    device: torch.device,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
    resume: str | Path | None = None,
    identity: str = "",
) -> TrainResult:
    """Train, evaluating dev and test after every epoch; keep the weights of the best epoch on
    `select_on` (`settings.select_metric`; `skip_first_epoch`: J&W never select epoch 1), where
    `select_on: train` with `select_metric: loss` keeps the epoch of the lowest training loss (W&P's
    adversary). `objective`: the batch loss (default: the protocol's supervised loss);
    `settings.loss_reduction` says whether its sum (J&W BC) or its mean over the batch (QA/NLI, S&S,
    the adversary) is minimised. `monitor`: extra per-epoch metrics for the history. `resume`: where
    the training keeps its snapshot after every epoch (`attnexp.train.snapshot.Snapshot`), and resumes from one of the same
    `identity` that a stopped run left (None: neither)."""
    epochs = train_epochs(
        model,
        splits,
        settings,
        select_on=select_on,
        seed=seed,
        device=device,
        log=log,
        objective=objective,
        monitor=monitor,
        resume=resume,
        identity=identity,
    )
    while True:
        try:
            next(epochs)
        except StopIteration as finished:
            return finished.value


def train_epochs(
    model: nn.Module,
    splits: dict[str, SplitData],
    settings: dict,
    *,
    select_on: str,
    seed: int,
    device: torch.device,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
    resume: str | Path | None = None,
    identity: str = "",
) -> Generator[dict, None, TrainResult]:
    """`train_model` one epoch at a time: yields each epoch's history record and returns the
    TrainResult, so a benchmark can alternate the epochs of two runs in one process. The timing
    counts the epochs only (training steps and evaluation apart), not the time spent suspended; a
    resumed training yields the epochs after its snapshot's."""
    model.to(device)
    train = splits["train"]
    rng = np.random.RandomState(seed)  # batch order (J&W left it unseeded: D-SEED)
    embedding_gradients = EmbeddingGradients(model, settings)
    optimizer = build_optimizer(model, settings)
    if objective is None:
        objective = supervised_objective(class_weights(train.labels()) if model.decoder.out_features == 1 else None)
    lengths = np.array([e.length(model.layout) for e in train.examples])
    schedules = Schedules(optimizer, settings, len(lengths))
    run = TrainingRun(
        model=model,
        splits=splits,
        settings=settings,
        select_on=select_on,
        device=device,
        objective=objective,
        optimizer=optimizer,
        embedding_gradients=embedding_gradients,
        schedules=schedules,
        monitor=monitor,
        log=log,
    )
    checkpoints, timing, history = CheckpointSelection(settings), Timing(), []
    snapshot, first, stopped = Snapshot(resume, identity, log), 1, False
    if (saved := snapshot.load()) is not None:
        last, stopped, history = snapshot.restore(saved, run, rng, checkpoints, timing)
        first = last + 1
    epochs_left = range(0) if stopped else range(first, settings["epochs"] + 1)
    with embedding_gradients.sparse():
        for epoch in epochs_left:
            started = time.perf_counter()
            order = length_bucketed_batches(
                lengths, settings["batch_size"], rng, settings["batch_noise"], settings["max_tokens"]
            )
            train_loss = _train_epoch(run, order, timing) / len(train.examples)
            evaluation_start = time.perf_counter()
            timing.step_seconds += evaluation_start - started
            record, score = _evaluate_epoch(run, epoch, train_loss, checkpoints, started)
            history.append(record)
            schedules.after_epoch(score)
            timing.eval_seconds += time.perf_counter() - evaluation_start
            stop = checkpoints.stop
            if stop:
                log(f"early stop: no {select_on} improvement for {checkpoints.since_best} epochs")
            snapshot.save(run, epoch=epoch, stop=stop, rng=rng, checkpoints=checkpoints, timing=timing, history=history)
            yield record
            if stop:
                break
    _, best_epoch, state, dev, test = checkpoints.best
    return TrainResult(state, best_epoch, history, _rounded(dev), _rounded(test), timing.record(len(history), device))
