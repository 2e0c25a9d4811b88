"""The optimiser step and the learning-rate schedules of every protocol.

Adam (J&W, S&S: L2 weight decay, amsgrad per protocol) or AdamW (the Transformer), with the top-level
attention's own weight decay. The step (`optimizer_implementation`, `embedding_update` in every
protocol): torch's fused Adam/AdamW kernel by default, one pass over each parameter. The same update
rule as the per-parameter loop that torch runs on the CPU unless told otherwise (`for_loop`, the
optimiser of benchmarks/train_speed.py's `packed_for_loop` variant), only rounded differently: at SST
lengths the loop's dense update of the trainable (V, E) embedding takes about 38 % of a step.
`embedding_update: lazy` is a named deviation from the papers: the embedding gets sparse gradients
and only the rows of the batch's words are updated (`LazyAdam`), so absent rows keep their value,
momentum and weight decay until they next appear (benchmarks/README.md has its measured effect).

The schedules (`Schedules`): S&S's ReduceLROnPlateau on the epoch's selection score, and the
Transformer's linear warm-up then decay.
"""

from __future__ import annotations

import inspect
import math

import torch
from torch import nn

__all__ = [
    "Adam",
    "AdamW",
    "LazyAdam",
    "LazyAdamW",
    "OPTIMIZER_IMPLEMENTATIONS",
    "build_optimizer",
    "Schedules",
]


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


def build_optimizer(model: nn.Module, settings: dict) -> torch.optim.Optimizer:
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


class Schedules:
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
