"""The training loop for every model family, deterministic given the seed. Imported by the
train_model rule's script alone; run-time services (determinism, device, checkpoints, splits,
probabilities) live in `attnexp.runtime`.

Read top to bottom: class weights -> objectives -> optimiser -> the training loop with checkpoint
selection -> building a model -> `fit`, from files to files.

Protocols (config `train.protocols`, overridable per dataset): Jain & Wallace §3 for classification
(class-weighted BCE summed over the batch, Adam amsgrad 1e-3, weight decay 1e-5 except attention,
batch 32, 8 epochs, best dev ROC-AUC with the first epoch never selected), their QA/NLI settings
(cross-entropy, one weight-decay group, best dev accuracy), and Serrano & Smith §2 (Adam, dropout,
gradient clipping, ReduceLROnPlateau, early stopping, a cap on padded tokens per batch), and the
small Transformer of beyond.md §5 (AdamW, linear warm-up then decay, best dev accuracy).
`select_on: test` reproduces the papers' test-set checkpoint selection (D-SEL).

The loss is a hook: `train_model(..., objective=...)` takes any function of (model, batch) that
returns the batch's summed loss. The default is the supervised loss of the protocol; Wiegreffe &
Pinter's model-consistent adversary plugs in its own (no gold labels).
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnexp import io
from attnexp.metrics import classification_metrics
from attnexp.models import ModelSpec, build_model, model_config
from attnexp.models.inputs import Batch, length_bucketed_batches
from attnexp.runtime import (
    SplitData,
    batches_of,
    checkpoint_metadata,
    load_splits,
    predict,
    read_classes,
    read_guides,
    read_vocab,
    resolve_device,
    save_checkpoint,
    set_determinism,
)

__all__ = [
    "Objective",
    "Monitor",
    "class_weights",
    "supervised_objective",
    "train_model",
    "TrainResult",
    "build_and_initialise",
    "fit",
]

Objective = Callable[[nn.Module, Batch], torch.Tensor]  # (model, batch) -> the batch's summed loss
# (model, splits, device) -> extra metrics recorded in each epoch's history (W&P's adversary: TVD/JSD/KL)
Monitor = Callable[[nn.Module, dict, torch.device], dict]


def class_weights(labels: np.ndarray) -> float:
    """J&W §3 pos_weight = N / N_pos - 1, so both classes weigh the same in the summed loss."""
    n_pos = int(np.sum(labels == 1))
    if n_pos == 0:
        raise ValueError("the training split has no positive instance")
    return len(labels) / n_pos - 1


# ---------------------------------------------------------------------------------------------
# Objectives and optimiser


def supervised_objective(pos_weight: float | None) -> Objective:
    """The papers' loss, summed over the batch: J&W BC class-weighted BCE with logits for a single
    sigmoid output, cross-entropy otherwise."""

    def objective(model: nn.Module, batch: Batch) -> torch.Tensor:
        logits, _ = model(batch)
        if logits.shape[-1] == 1:
            weight = torch.where(batch.labels == 1, pos_weight, 1.0)
            return F.binary_cross_entropy_with_logits(logits.squeeze(-1), batch.labels.float(), weight=weight, reduction="sum")
        return F.cross_entropy(logits, batch.labels, reduction="sum")

    return objective


def _optimizer(model: nn.Module, settings: dict) -> torch.optim.Optimizer:
    """Adam (J&W, S&S: L2 weight decay, amsgrad per protocol) or AdamW (the Transformer: decoupled
    weight decay); the top-level attention's parameters get their own decay (J&W BC: 0)."""
    attention = [p for n, p in model.named_parameters() if n.startswith("attention.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("attention.")]
    groups = [{"params": rest, "weight_decay": settings["weight_decay"]}]
    if attention:
        groups.append({"params": attention, "weight_decay": settings["attention_weight_decay"]})
    optimizer = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[settings["optimizer"]]
    return optimizer(groups, lr=settings["lr"], amsgrad=settings["amsgrad"])


def _warmup_schedule(optimizer: torch.optim.Optimizer, warmup: float | None, total_steps: int):
    """Linear warm-up over the first `warmup` share of the steps, then linear decay to 0 (beyond.md
    §5); None: a constant learning rate."""
    if warmup is None:
        return None
    warm = max(1, round(warmup * total_steps))

    def factor(step: int) -> float:
        return step / warm if step < warm else max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _evaluate(model, split, settings, device) -> dict:
    probs, _ = predict(model, split, settings["eval_batch_size"], device, settings["max_tokens"])
    return classification_metrics(split.labels(), probs)


# ---------------------------------------------------------------------------------------------
# Training loop


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


def train_model(
    model: nn.Module,
    splits: dict[str, SplitData],
    settings: dict,
    select_on: str,
    seed: int,
    device: torch.device,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
) -> TrainResult:
    """Train, evaluating dev and test after every epoch; keep the weights of the best epoch on
    `select_on` (`settings.select_metric`; `skip_first_epoch`: J&W never select epoch 1), where
    `select_on: train` with `select_metric: loss` keeps the epoch of the lowest training loss (W&P's
    adversary). `objective`: the batch loss (default: the protocol's supervised loss);
    `settings.loss_reduction` says whether its sum (J&W BC) or its mean over the batch (QA/NLI, S&S,
    the adversary) is minimised. `monitor`: extra per-epoch metrics for the history."""
    model.to(device)
    train = splits["train"]
    rng = np.random.RandomState(seed)  # batch order (J&W left it unseeded: D-SEED)
    optimizer = _optimizer(model, settings)
    plateau = None
    if settings["lr_plateau"] is not None:  # S&S: halve the lr when the validation metric stalls
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=settings["lr_plateau"]["factor"], patience=settings["lr_plateau"]["patience"]
        )
    if objective is None:
        objective = supervised_objective(class_weights(train.labels()) if model.decoder.out_features == 1 else None)
    lengths = np.array([e.length(model.layout) for e in train.examples])
    # steps per epoch: exact without a padded-token cap (the Transformer protocol has none)
    schedule = _warmup_schedule(optimizer, settings["warmup"], settings["epochs"] * -(-len(lengths) // settings["batch_size"]))
    best, history, since_best = None, [], 0
    computed = real = 0
    started = time.perf_counter()
    for epoch in range(1, settings["epochs"] + 1):
        epoch_start = time.perf_counter()
        model.train()
        order = length_bucketed_batches(lengths, settings["batch_size"], rng, settings["batch_noise"], settings["max_tokens"])
        total_loss = 0.0
        for batch in batches_of(train, order, model.layout):
            computed += batch.tokens.numel()
            real += int(batch.lengths.sum()) if batch.sentence_lengths is None else int(batch.sentence_lengths.sum())
            batch = batch.to(device)
            loss = objective(model, batch)
            optimizer.zero_grad()
            # J&W BC sums the loss over the batch; QA/NLI and S&S average it
            (loss if settings["loss_reduction"] == "sum" else loss / len(batch)).backward()
            if settings["grad_clip"] is not None:
                nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
            optimizer.step()
            if schedule is not None:
                schedule.step()
            total_loss += loss.item()
        dev, test = (_evaluate(model, splits[s], settings, device) for s in ("dev", "test"))
        train_loss = total_loss / len(train.examples)
        selection = {"dev": dev, "test": test, "train": {"loss": -train_loss}}[select_on]  # higher is better
        score = selection[settings["select_metric"]]
        record = {
            "epoch": epoch,
            "train_loss": train_loss,
            "lr": optimizer.param_groups[0]["lr"],
            "dev": {k: v for k, v in dev.items() if k != "f1"},
            "test": {k: v for k, v in test.items() if k != "f1"},
        }
        if monitor is not None:
            record.update(monitor(model, splits, device))
        history.append(_rounded(record))
        selectable = not (settings["skip_first_epoch"] and epoch == 1 and settings["epochs"] > 1)
        score = float("-inf") if np.isnan(score) else score  # e.g. ROC-AUC of a one-class split
        improved = selectable and (best is None or score > best[0])
        if improved:
            best = (score, epoch, copy.deepcopy(model.state_dict()), dev, test)
            since_best = 0
        elif selectable:
            since_best += 1
        criterion = "kept on the lowest one" if select_on == "train" else f"{select_on} {settings['select_metric']} {score:.4f}"
        log(
            f"epoch {epoch}/{settings['epochs']}: train loss {record['train_loss']:.4f}, "
            f"{criterion} (dev acc {dev['accuracy']:.4f}, "
            f"test acc {test['accuracy']:.4f}){' *' if improved else ''} ({time.perf_counter() - epoch_start:.1f} s)"
        )
        if plateau is not None:
            plateau.step(score)
        if settings["patience"] is not None and since_best >= settings["patience"]:
            log(f"early stop: no {select_on} improvement for {since_best} epochs")
            break
    _, best_epoch, state, dev, test = best
    seconds = time.perf_counter() - started
    timing = {
        "train_seconds": round(seconds, 3),
        "epochs_run": len(history),
        "seconds_per_epoch": round(seconds / len(history), 3),
        "padding_share": round(1 - real / computed, 4) if computed else 0.0,
        "device": str(device),
        "threads": torch.get_num_threads(),
    }
    return TrainResult(state, best_epoch, history, _rounded(dev), _rounded(test), timing)


# ---------------------------------------------------------------------------------------------
# From files to files: what the train_model rule's script calls


def build_and_initialise(spec: ModelSpec, vocab: list[str], n_classes: int, vectors: np.ndarray | None, settings: dict):
    """Seeded model construction; pretrained/word2vec vectors copied into the embedding (PAD row 0)."""
    embedding_dim = settings["embedding_dim"] if vectors is None else vectors.shape[1]
    if vectors is not None and vectors.shape[0] != len(vocab):
        raise ValueError(f"the embedding matrix has {vectors.shape[0]} rows for a vocabulary of {len(vocab)} words")
    output_size = 1 if n_classes == 2 and spec.family == "flat" else n_classes
    config = model_config(spec, len(vocab), output_size, embedding_dim, settings)
    model = build_model(spec, config)
    if vectors is not None:
        with torch.no_grad():
            model.embedding.weight.copy_(torch.from_numpy(vectors))
            model.embedding.weight[0].zero_()
    return model, config


def fit(
    spec: ModelSpec,
    data_dir: str | Path,
    vectors_path: str | Path | None,
    guide_path: str | Path | None,
    settings: dict,
    select_on: str,
    seed: int,
    threads: int,
    device_setting: str,
    out_model: str | Path,
    out_metrics: str | Path,
    out_timing: str | Path,
    provenance: dict,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
) -> dict:
    """Train one model from the preprocessed data and write its checkpoint, metrics and timing.
    `guide_path`: another model's exported attention (`runtime.export_attention`), carried by every
    batch as `batch.guide`: a guided model imposes it, W&P's adversary diverges from it."""
    set_determinism(seed, threads)
    device = resolve_device(device_setting)
    vocab = read_vocab(Path(data_dir) / "vocab.txt")
    classes = read_classes(data_dir)
    guides = read_guides(guide_path) if guide_path else None
    splits = load_splits(data_dir, vocab, classes, guides)
    vectors = np.load(vectors_path) if vectors_path else None
    model, config = build_and_initialise(spec, vocab, len(classes), vectors, settings)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{spec.name}: {n_params:,} parameters, {len(classes)} classes, {len(splits['train'].examples)} training instances, device {device}")
    result = train_model(model, splits, settings, select_on, seed, device, log, objective, monitor)
    metadata = checkpoint_metadata(spec, config, vocab, classes)
    save_checkpoint(out_model, result.state_dict, metadata)
    metrics = {
        "model": spec.name,
        "spec": spec.record(),
        "classes": [str(c) for c in classes],
        "select_on": select_on,
        "select_metric": settings["select_metric"],
        "selected_epoch": result.best_epoch,
        "seed": seed,
        "test": result.test,
        "dev": result.dev,
        "history": result.history,
        "settings": settings,
        "provenance": provenance,
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
    }
    io.write_json(out_metrics, metrics)
    io.write_json(out_timing, result.timing)
    log(f"selected epoch {result.best_epoch}: test accuracy {result.test['accuracy']:.4f}, macro F1 {result.test['macro_f1']:.4f}")
    return metrics
