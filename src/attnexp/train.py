"""The training loop for every model family, deterministic given the seed. Imported by the
train_model rule's script alone; run-time services (determinism, device, checkpoints, splits,
probabilities) live in `attnexp.runtime`.

Read top to bottom: class weights -> objectives -> optimiser -> the training loop with checkpoint
selection (its parts first: the embedding's gradient and clipping, the lr schedules, checkpoint
selection with early stopping, the timing, the snapshot a stopped job resumes from, one epoch's
training and its evaluation; then `train_epochs`) -> building a model -> `fit`, from files to files
(a `TrainingJob`).

Protocols (config `train.protocols`, overridable per dataset): Jain & Wallace §3 for classification
(class-weighted BCE summed over the batch, Adam amsgrad 1e-3, weight decay 1e-5 except attention,
batch 32, 8 epochs, best dev ROC-AUC with the first epoch never selected), their QA/NLI settings
(cross-entropy, one weight-decay group, best dev accuracy), and Serrano & Smith §2 (Adam, dropout,
gradient clipping, ReduceLROnPlateau, early stopping, a cap on padded tokens per batch), and the
small Transformer (AdamW, linear warm-up then decay, best dev accuracy).
`select_on: test` reproduces the papers' test-set checkpoint selection (D-SEL).

The optimiser step (`optimizer_implementation`, `embedding_update` in every protocol): torch's fused
Adam/AdamW kernel by default, one pass over each parameter. The same update rule as the
per-parameter loop that torch runs on the CPU unless told otherwise (`for_loop`, the optimiser of
benchmarks/train_speed.py's `packed_for_loop` variant), only rounded differently: at SST lengths the
loop's dense update of the trainable (V, E) embedding takes about 38 % of a step. `embedding_update: lazy` is a
named deviation from the papers: the embedding gets sparse gradients and only the rows of the batch's
words are updated (`LazyAdam`), so absent rows keep their value, momentum and weight decay until they
next appear (benchmarks/README.md has its measured effect).

The loss is a hook: `train_model(..., objective=...)` takes any function of (model, batch) that
returns the batch's summed loss. The default is the supervised loss of the protocol; Wiegreffe &
Pinter's model-consistent adversary plugs in its own (no gold labels).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import math
import pickle
import random
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnexp import io
from attnexp.data.documents import DATA_FILES, DataFiles
from attnexp.data.embeddings import load_vectors
from attnexp.metrics import classification_metrics
from attnexp.models import ModelSpec, build_model, model_config
from attnexp.models.encoders import conicity
from attnexp.models.inputs import Batch, length_bucketed_batches, sorted_batches
from attnexp.runtime import (
    SplitData,
    batches_of,
    checkpoint_metadata,
    load_splits,
    open_words,
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
    "mean_conicity",
    "train_model",
    "TrainResult",
    "build_and_initialise",
    "TrainingJob",
    "fit",
    "train_epochs",
    "snapshot_path",
    "training_identity",
    "LazyAdam",
    "LazyAdamW",
    "OPTIMIZER_IMPLEMENTATIONS",
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
            return F.binary_cross_entropy_with_logits(
                logits.squeeze(-1), batch.labels.float(), weight=weight, reduction="sum"
            )
        return F.cross_entropy(logits, batch.labels, reduction="sum")

    return objective


class _LazyRows:
    """Lazy Adam for sparse gradients, mixed into torch's Adam/AdamW (`embedding_update: lazy`). A
    parameter whose gradient is sparse (the embedding with `sparse=True`) gets torch's update rule,
    written as in its per-parameter loop (L2 or decoupled weight decay, amsgrad, bias correction by
    the parameter's step count), applied to the rows its gradient touches only: the other rows keep
    their values and moments. Every other parameter takes torch's own step. Where every row is
    touched, the update is torch's dense one (tests/test_train_speed.py)."""

    def step(self, closure=None):
        if closure is not None:
            raise ValueError("the lazy optimiser takes no closure")
        sparse = [
            (g, p, p.grad) for g in self.param_groups for p in g["params"] if p.grad is not None and p.grad.is_sparse
        ]
        for _, p, _ in sparse:
            p.grad = None  # torch's dense step skips them
        try:
            super().step()
        finally:
            for _, p, grad in sparse:
                p.grad = grad
        with torch.no_grad():
            for group, p, grad in sparse:
                self._update_rows(group, p, grad.coalesce())

    def _update_rows(self, group: dict, p: torch.Tensor, grad: torch.Tensor) -> None:
        state = self.state[p]
        if not state:
            state["step"] = torch.tensor(0.0, dtype=torch.float32)
            for key in ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ()):
                state[key] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["step"] += 1
        step = state["step"].item()
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["weight_decay"]
        rows, g = grad.indices()[0], grad.values()  # coalesced: each row once
        g = -g if group["maximize"] else g
        param = p.index_select(0, rows)
        if decay and group.get("decoupled_weight_decay"):  # AdamW
            param.mul_(1 - lr * decay)
        elif decay:  # Adam: L2 on the gradient
            g = g.add(param, alpha=decay)
        exp_avg = state["exp_avg"].index_select(0, rows).lerp_(g, 1 - beta1)
        exp_avg_sq = state["exp_avg_sq"].index_select(0, rows).mul_(beta2).addcmul_(g, g, value=1 - beta2)
        updated = [(state["exp_avg"], exp_avg), (state["exp_avg_sq"], exp_avg_sq)]
        if group["amsgrad"]:
            second = torch.maximum(state["max_exp_avg_sq"].index_select(0, rows), exp_avg_sq)
            updated.append((state["max_exp_avg_sq"], second))
        else:
            second = exp_avg_sq
        denom = (second.sqrt() / math.sqrt(1 - beta2**step)).add_(group["eps"])
        param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))
        for full, part in [(p, param), *updated]:
            full.index_put_((rows,), part)  # unique rows; deterministic under torch.use_deterministic_algorithms


class _Eager:
    """Torch's optimiser, called without the wrappers it carries for torch.compile. Those wrappers
    (graph breaks around `step`, dynamo's `disable` on `zero_grad`, `add_param_group` and the state-dict
    methods) import torch._dynamo on first use: about 2 s of CPU in every training process, as much
    as importing torch itself. Training here is eager, so each method calls torch's own undecorated
    function, with the grad mode torch's `step` sets: the same updates bit for bit (tests/test_train_speed.py)."""

    def step(self, closure=None):
        with torch.set_grad_enabled(self.defaults["differentiable"]):
            return inspect.unwrap(super().step.__func__)(self, closure)

    def zero_grad(self, set_to_none: bool = True) -> None:
        inspect.unwrap(torch.optim.Optimizer.zero_grad)(self, set_to_none)

    def add_param_group(self, param_group: dict) -> None:
        inspect.unwrap(torch.optim.Optimizer.add_param_group)(self, param_group)

    def state_dict(self) -> dict:
        return inspect.unwrap(torch.optim.Optimizer.state_dict)(self)

    def load_state_dict(self, state_dict: dict) -> None:
        inspect.unwrap(torch.optim.Optimizer.load_state_dict)(self, state_dict)


class Adam(_Eager, torch.optim.Adam):
    """torch.optim.Adam, eager (`_Eager`)."""


class AdamW(_Eager, torch.optim.AdamW):
    """torch.optim.AdamW, eager (`_Eager`)."""


class LazyAdam(_LazyRows, Adam):
    """torch.optim.Adam; sparse gradients update only their rows (`_LazyRows`)."""


class LazyAdamW(_LazyRows, AdamW):
    """torch.optim.AdamW; sparse gradients update only their rows (`_LazyRows`)."""


# `optimizer_implementation`: torch's kernels for the same update rule. `for_loop` is torch's
# default on the CPU (the step before 2026-11-23; on a GPU torch chose foreach, equal up to rounding);
# `fused` makes one pass over each parameter.
OPTIMIZER_IMPLEMENTATIONS = {
    "fused": {"fused": True},
    "foreach": {"foreach": True},
    "for_loop": {"foreach": False},
}


def _optimizer(model: nn.Module, settings: dict) -> torch.optim.Optimizer:
    """Adam (J&W, S&S: L2 weight decay, amsgrad per protocol) or AdamW (the Transformer: decoupled
    weight decay); the top-level attention's parameters get their own decay (J&W BC: 0). Torch's
    kernel per `optimizer_implementation`; `embedding_update: lazy`: the lazy variant (`LazyAdam`),
    which updates the rows of sparse gradients only."""
    attention = [p for n, p in model.named_parameters() if n.startswith("attention.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("attention.")]
    groups = [{"params": rest, "weight_decay": settings["weight_decay"]}]
    if attention:
        groups.append({"params": attention, "weight_decay": settings["attention_weight_decay"]})
    lazy = settings["embedding_update"] == "lazy"
    optimizer = {
        ("adam", False): Adam,
        ("adamw", False): AdamW,
        ("adam", True): LazyAdam,
        ("adamw", True): LazyAdamW,
    }[settings["optimizer"], lazy]
    return optimizer(
        groups,
        lr=settings["lr"],
        amsgrad=settings["amsgrad"],
        **OPTIMIZER_IMPLEMENTATIONS[settings["optimizer_implementation"]],
    )


def _warmup_schedule(optimizer: torch.optim.Optimizer, warmup: float | None, total_steps: int):
    """Linear warm-up over the first `warmup` share of the steps, then linear decay to 0;
    None: a constant learning rate."""
    if warmup is None:
        return None
    warm = max(1, round(warmup * total_steps))

    def factor(step: int) -> float:
        return step / warm if step < warm else max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


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


# ---------------------------------------------------------------------------------------------
# Training loop: its parts, then the loop


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


class _EmbeddingGradients:
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


class _Schedules:
    """The protocol's learning-rate schedules, each possibly absent: ReduceLROnPlateau on the
    epoch's selection score (S&S: halve the lr when the validation metric stalls), and the
    Transformer's warm-up then decay, which moves after every optimiser step."""

    def __init__(self, optimizer: torch.optim.Optimizer, settings: dict, n_train: int):
        self.plateau = None
        if settings["lr_plateau"] is not None:
            self.plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
                optimizer,
                mode="max",
                factor=settings["lr_plateau"]["factor"],
                patience=settings["lr_plateau"]["patience"],
            )
        # steps per epoch: exact without a padded-token cap (the Transformer protocol has none)
        self.warmup = _warmup_schedule(
            optimizer, settings["warmup"], settings["epochs"] * -(-n_train // settings["batch_size"])
        )

    def after_step(self) -> None:
        if self.warmup is not None:
            self.warmup.step()

    def after_epoch(self, score: float) -> None:
        if self.plateau is not None:
            self.plateau.step(score)

    def state_dict(self) -> dict:
        return {
            name: None if s is None else s.state_dict()
            for name, s in (("plateau", self.plateau), ("warmup", self.warmup))
        }

    def load_state_dict(self, state: dict) -> None:
        for name, schedule in (("plateau", self.plateau), ("warmup", self.warmup)):
            if schedule is not None:
                schedule.load_state_dict(state[name])


class _Best(NamedTuple):
    score: float
    epoch: int
    state_dict: dict
    dev: dict
    test: dict


class _CheckpointSelection:
    """The best epoch's weights and metrics so far (higher scores are better), and early stopping
    after `patience` selectable epochs without improvement. `skip_first_epoch`: J&W never select
    epoch 1 (of several), which then does not count towards the patience either."""

    def __init__(self, settings: dict):
        self.skip_first = settings["skip_first_epoch"] and settings["epochs"] > 1
        self.patience = settings["patience"]
        self.best: _Best | None = None
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
            self.best = _Best(score, epoch, copy.deepcopy(model.state_dict()), dev, test)
            self.since_best = 0
        elif selectable:
            self.since_best += 1
        return improved

    @property
    def stop(self) -> bool:
        return self.patience is not None and self.since_best >= self.patience


@dataclass
class _Timing:
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


class _Snapshot:
    """The whole state of a training after its last finished epoch, so that a job stopped mid-training
    (Ctrl-C, a SIGTERM, a scheduler's time limit, a lost node) goes on from there when Snakemake
    runs it again, with the result a run never stopped gives, byte for byte: the weights, the
    optimiser's and the schedules' states, the best epoch so far and the early-stopping count, the
    history and timing, and every random generator (batch order, dropout, Python's and NumPy's).

    Written after every epoch beside the model (`.model.resume`, dot-named: no glob of the pipeline
    sees it), atomically and sealed, and removed once the model is written. `identity`: what the
    training is (settings, seed, threads, device, the digests of the files it reads, the code's
    digest, `training_identity`): the snapshot of any other training, or a damaged one, is not
    resumed from, and the log says why."""

    def __init__(self, path: str | Path | None, identity: str, log: Callable[[str], None]):
        self.path = None if path is None else Path(path)
        self.identity, self.log = identity, log

    def save(self, run: _Run, epoch: int, stop: bool, rng, checkpoints, timing, history) -> None:
        if self.path is None:
            return
        best = checkpoints.best
        batch_order, numpy_random = rng.get_state(), np.random.get_state()  # (name, keys, pos, has_gauss, gauss)
        record = {  # JSON: floats round-trip exactly (repr), NaN and infinities included
            "identity": self.identity,
            "epoch": epoch,
            "stop": stop,
            "history": history,
            "since_best": checkpoints.since_best,
            "best": None
            if best is None
            else {"score": best.score, "epoch": best.epoch, "dev": best.dev, "test": best.test},
            "timing": asdict(timing),
            "batch_order": [batch_order[0], *batch_order[2:]],
            "python_random": random.getstate(),
            "numpy_random": [numpy_random[0], *numpy_random[2:]],
        }
        state = {
            "record": json.dumps(record),
            "model": run.model.state_dict(),
            "best_model": None if best is None else best.state_dict,
            "optimizer": run.optimizer.state_dict(),
            "schedules": run.schedules.state_dict(),
            "batch_order_keys": torch.from_numpy(batch_order[1].astype(np.int64)),
            "numpy_random_keys": torch.from_numpy(numpy_random[1].astype(np.int64)),
            "torch_random": torch.get_rng_state(),
            "cuda_random": torch.cuda.get_rng_state_all() if run.device.type == "cuda" else [],
        }
        with io.atomic_path(self.path, seal=True) as tmp, open(tmp, "wb") as f:
            torch.save(state, f)

    def load(self) -> tuple[dict, dict] | None:
        """-> (the JSON record, the tensors) of this training's snapshot, or None (none, another
        training's, or damaged: said in the log, and the training starts from its first epoch)."""
        if self.path is None or not self.path.exists():
            return None
        try:
            io.verify_seal(self.path)
            state = torch.load(self.path, map_location="cpu", weights_only=True)
            record = json.loads(state.pop("record"))
        except (ValueError, RuntimeError, OSError, EOFError, KeyError, TypeError, pickle.UnpicklingError) as err:
            self.log(f"{self.path}: not resumed from, unreadable ({err}); training from the first epoch")
            return None
        if record.get("identity") != self.identity:
            self.log(
                f"{self.path}: not resumed from, the snapshot of another training (its settings, inputs or code differ); training from the first epoch"
            )
            return None
        return record, state

    def restore(self, saved: tuple[dict, dict], run: _Run, rng, checkpoints, timing) -> tuple[int, bool, list[dict]]:
        """Put the snapshot's state into the run, its checkpoint selection, timing and generators;
        -> (the last finished epoch, whether it stopped early, the history)."""
        record, state = saved
        run.model.load_state_dict(state["model"])
        run.optimizer.load_state_dict(state["optimizer"])
        run.schedules.load_state_dict(state["schedules"])
        best = record["best"]
        if best is not None:
            checkpoints.best = _Best(best["score"], best["epoch"], state["best_model"], best["dev"], best["test"])
        checkpoints.since_best = record["since_best"]
        for name, value in record["timing"].items():
            setattr(timing, name, value)
        name, *rest = record["batch_order"]
        rng.set_state((name, state["batch_order_keys"].numpy().astype(np.uint32), *rest))
        name, *rest = record["numpy_random"]
        np.random.set_state((name, state["numpy_random_keys"].numpy().astype(np.uint32), *rest))
        version, internal, gauss = record["python_random"]
        random.setstate((version, tuple(internal), gauss))
        torch.set_rng_state(state["torch_random"])
        if state["cuda_random"]:
            torch.cuda.set_rng_state_all(state["cuda_random"])
        self.log(f"resumed after epoch {record['epoch']} from {self.path}, the snapshot a stopped run left")
        return record["epoch"], record["stop"], record["history"]

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            io.seal_path(self.path).unlink(missing_ok=True)


@dataclass(frozen=True)
class _Run:
    """One training run: the model, its data and settings, and what trains and judges it."""

    model: nn.Module
    splits: dict[str, SplitData]
    settings: dict
    select_on: str
    device: torch.device
    objective: Objective
    optimizer: torch.optim.Optimizer
    embedding_gradients: _EmbeddingGradients
    schedules: _Schedules
    monitor: Monitor | None
    log: Callable[[str], None]


def _train_epoch(run: _Run, order: list[np.ndarray], timing: _Timing) -> float:
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
    run: _Run, epoch: int, train_loss: float, checkpoints: _CheckpointSelection, started: float
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
    the training keeps its snapshot after every epoch (`_Snapshot`), and resumes from one of the same
    `identity` that a stopped run left (None: neither)."""
    epochs = train_epochs(model, splits, settings, select_on, seed, device, log, objective, monitor, resume, identity)
    while True:
        try:
            next(epochs)
        except StopIteration as finished:
            return finished.value


def train_epochs(
    model: nn.Module,
    splits: dict[str, SplitData],
    settings: dict,
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
    embedding_gradients = _EmbeddingGradients(model, settings)
    optimizer = _optimizer(model, settings)
    if objective is None:
        objective = supervised_objective(class_weights(train.labels()) if model.decoder.out_features == 1 else None)
    lengths = np.array([e.length(model.layout) for e in train.examples])
    schedules = _Schedules(optimizer, settings, len(lengths))
    run = _Run(
        model, splits, settings, select_on, device, objective, optimizer, embedding_gradients, schedules, monitor, log
    )
    checkpoints, timing, history = _CheckpointSelection(settings), _Timing(), []
    snapshot, first, stopped = _Snapshot(resume, identity, log), 1, False
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
            snapshot.save(run, epoch, stop, rng, checkpoints, timing, history)
            yield record
            if stop:
                break
    _, best_epoch, state, dev, test = checkpoints.best
    return TrainResult(state, best_epoch, history, _rounded(dev), _rounded(test), timing.record(len(history), device))


# ---------------------------------------------------------------------------------------------
# From files to files: what the train_model rule's script calls


def build_and_initialise(spec: ModelSpec, vocab: list[str], n_classes: int, vectors: np.ndarray | None, settings: dict):
    """Seeded model construction; pretrained/word2vec vectors copied into the embedding (PAD row 0)."""
    embedding_dim = settings["embedding_dim"] if vectors is None else vectors.shape[1]
    if vectors is not None and vectors.shape[0] != len(vocab):
        raise ValueError(f"the embedding matrix has {vectors.shape[0]} rows for a vocabulary of {len(vocab)} words")
    output_size = spec.output_size(n_classes)
    config = model_config(spec, len(vocab), output_size, embedding_dim, settings)
    model = build_model(spec, config)
    if hasattr(model, "bind_vocabulary"):  # a pretrained encoder: the dataset's words as its word pieces
        model.bind_vocabulary(vocab)
    if vectors is not None:
        with torch.no_grad():
            model.embedding.weight.copy_(torch.from_numpy(vectors))
            model.embedding.weight[0].zero_()
    return model, config


@dataclass(frozen=True)
class TrainingJob:
    """One train_model job: what it reads (`data`: the dataset's splits and vocabulary), how it
    trains, what it writes. `guide_path`: another model's exported attention
    (`runtime.export_attention`), carried by every batch as `batch.guide`: a guided model imposes
    it, W&P's adversary diverges from it."""

    data: DataFiles
    vectors_path: str | Path | None
    guide_path: str | Path | None
    settings: dict
    select_on: str
    seed: int
    threads: int
    device_setting: str
    out_model: str | Path
    out_metrics: str | Path
    out_timing: str | Path
    provenance: dict


def snapshot_path(model_path: str | Path) -> Path:
    """Where a training keeps the snapshot it resumes from (`_Snapshot`): beside its model, dot-named."""
    model_path = Path(model_path)
    return model_path.with_name(f".{model_path.stem}.resume")


def _code_digest() -> str:
    """The digest of attnexp's own source files: a snapshot is resumed only by the code that wrote it."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def training_identity(spec: ModelSpec, job: TrainingJob, device: torch.device) -> str:
    """What makes a training the same one: its model, settings, seed, threads and device, the digests
    of the files it reads, and the code's digest (`_code_digest`)."""
    files = {name: getattr(job.data, name) for name in DATA_FILES}
    files |= {"vectors": job.vectors_path, "guide": job.guide_path}
    what = {
        "spec": spec.record(),
        "settings": job.settings,
        "select_on": job.select_on,
        "seed": job.seed,
        "threads": job.threads,
        "device": str(device),
        "files": {name: None if path is None else io.file_digest(path) for name, path in files.items()},
        "code": _code_digest(),
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def _metrics(spec: ModelSpec, job: TrainingJob, classes: list, result: TrainResult, extra: dict) -> dict:
    """metrics.json: the selected epoch's dev and test metrics, every epoch's, and what made them."""
    return {
        "model": spec.name,
        "spec": spec.record(),
        "classes": [str(c) for c in classes],
        "select_on": job.select_on,
        "select_metric": job.settings["select_metric"],
        "selected_epoch": result.best_epoch,
        "seed": job.seed,
        "test": result.test,
        "dev": result.dev,
        "history": result.history,
        **extra,
        "settings": job.settings,
        "provenance": job.provenance,
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
    }


def fit(
    spec: ModelSpec,
    job: TrainingJob,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
) -> dict:
    """Train one model from the preprocessed data and write its checkpoint, metrics and timing;
    -> the metrics."""
    set_determinism(job.seed, job.threads)
    device = resolve_device(job.device_setting)
    vocab = read_vocab(job.data.path("vocab"))
    extra_words = open_words(job.data, vocab) if spec.traits.open_vocabulary else []
    classes = read_classes(job.data)
    guides = read_guides(job.guide_path) if job.guide_path else None
    splits = load_splits(job.data, vocab + extra_words, classes, guides)
    vectors = load_vectors(job.vectors_path) if job.vectors_path else None
    model, config = build_and_initialise(spec, vocab + extra_words, len(classes), vectors, job.settings)
    n_params = sum(p.numel() for p in model.parameters())
    log(
        f"{spec.name}: {n_params:,} parameters, {len(classes)} classes, {len(splits['train'].examples)} training instances, device {device}"
    )
    resume = snapshot_path(job.out_model)
    identity = training_identity(spec, job, device)
    result = train_model(
        model, splits, job.settings, job.select_on, job.seed, device, log, objective, monitor, resume, identity
    )
    save_checkpoint(job.out_model, result.state_dict, checkpoint_metadata(spec, config, vocab, classes, extra_words))
    extra = {}
    if spec.family in ("flat", "qa"):  # token states to attend over: their conicity (the zoo's measure)
        model.load_state_dict(result.state_dict)
        test_conicity = mean_conicity(model, splits["test"], job.settings["eval_batch_size"], device)
        extra["conicity"] = {"test": round(test_conicity, 6)}
    metrics = _metrics(spec, job, classes, result, extra)
    io.write_json(job.out_metrics, metrics, seal=True)
    io.write_json(job.out_timing, result.timing)
    _Snapshot(resume, identity, log).remove()  # the outputs are whole: nothing to resume
    log(
        f"selected epoch {result.best_epoch}: test accuracy {result.test['accuracy']:.4f}, macro F1 {result.test['macro_f1']:.4f}"
    )
    return metrics
