"""Per-instance explanations of a trained flat, QA/NLI or Transformer model (Jain & Wallace §5.1–5.2;
integrated gradients, attention rollout and attention attribution).

Each explanation method has its own file, `results/explain/{dataset}/{model}/seed{seed}/{method}.jsonl`,
written by a job of its own or, for the cheap ones, by one job that computes several in one pass
(`explain.together`, `attnexp.plan.explained_together`); it holds one JSON object per test instance, in
the order of `test.jsonl`, with `id` and `length` (n) and that method's keys. A consumer asks only for
the methods it reads, so the J&W tables never wait on integrated gradients (`jain_wallace.measures`)
unless `explain.together` computes them with the others. Every vector covers the
n real tokens w_1..w_n (passage or premise tokens for QA/NLI; never SOS/EOS/PAD), and n is stored,
never inferred from zeros (D-ALIGN):

| method | keys |
|---|---|
| `attention` | `label`, `predicted` (class indices into `classes` of metrics.json), `probs` (C,; BC: [1 − ŷ, ŷ]), `attention` α over the real tokens (sums to 1) |
| `gradient` | signed g_t = Σ_d e_{t,d} ∂p_j/∂e_{t,d}, p_j the predicted class's probability, α held constant; J&W use |g_t| |
| `loo` | leave-one-out output change TVD(p(x₋t), p(x)) (D-LOO-OP: `explain.loo_op`) |
| `ig` | signed integrated gradients, and `ig_delta`, `ig_steps`, `ig_converged`: completeness gap δ, points used, whether δ met the tolerance |
| `rollout` | self-attention models only: attention rollout's `[CLS]` row (Abnar & Zuidema; `explain.rollout_readout`) |
| `attattr` | self-attention models only: attention attribution of the top layer's `[CLS]` row, summed over heads (Hao et al.; signed) |

`read_explanations` joins the files of one run back into one record per instance.

Floats are written as the shortest decimal that reads back to the same float32, so the files are
deterministic and compact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.explain.attention_attribution import token_attribution
from attnexp.explain.gradient import gradient_and_mask, gradient_importance
from attnexp.explain.integrated_gradients import integrated_gradients
from attnexp.explain.leave_one_out import leave_one_out
from attnexp.explain.rollout import rollout
from attnexp.explanations import (
    METHODS,
    SELF_ATTENTION_VECTORS,
    VECTORS,
    explanation_sets,
    importance,
    read_explanations,
)
from attnexp.models.inputs import Example, collate, sorted_batches
from attnexp.models.outputs import probabilities
from attnexp.plan import SELF_ATTENTION_METHODS, require
from attnexp.runs import restore_run
from attnexp.runtime import model_device, set_determinism

__all__ = [
    "gradient_importance",
    "leave_one_out",
    "integrated_gradients",
    "rollout",
    "token_attribution",
    "explain_examples",
    "write_explanations",
    "read_explanations",
    "explanation_sets",
    "METHODS",
    "VECTORS",
    "SELF_ATTENTION_VECTORS",
    "importance",
]


def _method_scores(model: nn.Module, method: str, batch, probs: torch.Tensor, settings: dict) -> dict[str, object]:
    """One method's per-batch outputs: key -> (B, L) tensor over padded positions, or (B,) tensor."""
    predicted = probs.argmax(dim=-1)
    if method == "gradient":
        return {"gradient": gradient_importance(model, batch)}
    if method == "ig":
        ig = integrated_gradients(
            model,
            batch,
            predicted,
            target=settings["ig_target"],
            baseline=settings["ig_baseline"],
            method=settings["ig_method"],
            steps=settings["ig_steps"],
            max_steps=settings["ig_max_steps"],
            tolerance=settings["ig_tolerance"],
        )
        return {"ig": ig.scores, "ig_delta": ig.delta, "ig_steps": ig.steps, "ig_converged": ig.converged}
    if method == "rollout":
        with torch.no_grad():  # over the model's positions, then per token
            return {
                "rollout": model.token_scores(
                    batch, rollout(model.attention_maps(batch), model.position_mask(batch), settings["rollout_readout"])
                )
            }
    return {
        "attattr": token_attribution(model, batch, predicted, settings["attattr_steps"], settings["attattr_riemann"])
    }


def _checked_methods(model: nn.Module, methods: tuple[str, ...] | None) -> tuple[str, ...]:
    """`methods` (default: every method the model has), refused unless the model has each."""
    require(model.spec, "explain")
    own = tuple(m for m in METHODS if model.spec.self_attention or m not in SELF_ATTENTION_METHODS)
    methods = own if methods is None else tuple(methods)
    unknown = [m for m in methods if m not in own]
    if unknown:
        raise ValueError(f"model {model.spec.name!r} has no {unknown} explanations; its methods are {own}")
    return methods


def _batch_scores(
    model: nn.Module, batch, methods: tuple[str, ...], settings: dict
) -> tuple[dict[str, object], np.ndarray, np.ndarray | None]:
    """Every batched method's outputs for one batch, on the CPU (leave-one-out runs apart) -> (key ->
    (B, L) or (B,) values, the (B, L) mask of real tokens, the (B, C) probabilities; None for the
    gradient alone)."""
    scores: dict[str, object] = {}
    # Gradient alone (J&W's gradient job) takes the mask from the gradient's own forward pass: a
    # separate no-grad pass would give it nothing else (0.17 s of 0.72 s on SST's test split).
    if methods == ("gradient",):
        scores["gradient"], mask = gradient_and_mask(model, batch)
        methods_left, probs = (), None
    else:
        with torch.no_grad():
            encoded = model.encode(batch)
            logits, attention = model.decode(encoded)
            probs = probabilities(logits)
        methods_left, mask = methods, encoded.mask
    for method in methods_left:
        if method == "attention":
            scores |= {"predicted": probs.argmax(dim=-1), "probs": probs, "attention": attention}
        elif method != "loo":  # leave-one-out batches its variants over every instance, in explain_examples
            scores |= _method_scores(model, method, batch, probs, settings)
    # one copy per batch to the CPU (a no-op there), not one per instance and key
    scores = {key: values.cpu() if isinstance(values, torch.Tensor) else values for key, values in scores.items()}
    return scores, mask.cpu().numpy(), None if probs is None else probs.cpu().numpy()


def _instance_record(
    example: Example, real: np.ndarray, scores: dict[str, object], row: int, methods: tuple[str, ...]
) -> dict:
    """One instance's record from row `row` of its batch's scores, vectors cut to its real tokens."""
    record = {"id": example.id, "length": int(real.sum())}
    if "attention" in methods:
        record["label"] = int(example.label)
    for key, values in scores.items():
        value = values[row]
        if isinstance(value, torch.Tensor):
            value = value.numpy()
        if np.ndim(value) == 0:  # predicted, ig_delta, ig_steps, ig_converged: Python scalars
            value = np.asarray(value).item()
        record[key] = value[real] if key in METHODS else value
    return record


def _log_ig_summary(records: list[dict], settings: dict, log: Callable[[str], None]) -> None:
    """Integrated gradients' points per instance, and the instances whose completeness gap stayed
    above the tolerance."""
    unconverged = [r["id"] for r in records if not r["ig_converged"]]
    steps = np.array([r["ig_steps"] for r in records])
    log(
        f"integrated gradients: points per instance median {np.median(steps):.0f}, max {steps.max()}; "
        f"{len(unconverged)} of {len(records)} keep |δ| > {settings['ig_tolerance']} after {settings['ig_max_steps']} points"
        + (f", e.g. {unconverged[0]!r}" if unconverged else "")
    )


def explain_examples(
    model: nn.Module,
    examples: list[Example],
    settings: dict,
    log: Callable[[str], None] = print,
    methods: tuple[str, ...] | None = None,
) -> list[dict]:
    """Explanations of every example by each of `methods` (default: every method the model has; see
    the module docstring), one record per example in the examples' order. Runs on the model's device;
    the records hold CPU values."""
    methods = _checked_methods(model, methods)
    model.eval()
    device = model_device(model)
    records: list[dict | None] = [None] * len(examples)
    full_probs: list[np.ndarray | None] = [None] * len(examples)
    order = sorted_batches(np.array([len(e.tokens) + 2 for e in examples]), settings["batch_size"])
    for done, indices in enumerate(order):
        batch = collate([examples[i] for i in indices], model.layout).to(device)
        scores, mask, probs = _batch_scores(model, batch, methods, settings)
        for row, i in enumerate(indices):
            if probs is not None:  # what leave-one-out compares its deletions with
                full_probs[i] = probs[row]
            records[i] = _instance_record(examples[i], mask[row], scores, row, methods)
        counted = f"{sum(len(o) for o in order[: done + 1])}/{len(examples)} instances"
        batched = [m for m in methods if m != "loo"]  # leave-one-out runs after this loop, with its own progress
        log(
            f"{'+'.join(batched)}: explained {counted}"
            if batched
            else f"leave-one-out: predictions of the full inputs, {counted}"
        )
    if "loo" in methods and examples:  # one call: the n deletions of every instance are batched together
        for record, scores in zip(
            records, leave_one_out(model, examples, np.stack(full_probs), settings["loo_op"], log=log)
        ):
            record["loo"] = scores
        log(f"leave-one-out: {sum(len(e.tokens) for e in examples)} deletions of {len(examples)} instances")
    if "ig" in methods and records:
        _log_ig_summary(records, settings, log)
    return records


def _float32s(values) -> list[float]:
    """Shortest decimals that read back to the same float32 values (deterministic, compact)."""
    return [float(str(v)) for v in np.asarray(values, dtype=np.float32)]


def _serialisable(record: dict) -> dict:
    """The record as JSON values; scores or probabilities that are not finite (a model or method
    that diverged) are refused, never written, with the instance named."""
    out = dict(record)
    for key in ("probs", *METHODS):
        if key in record:
            bad = int((~np.isfinite(np.asarray(record[key], dtype=np.float64))).sum())
            if bad:
                raise ValueError(
                    f"instance {record['id']!r}: {bad} of its {key} values are not finite; nothing written"
                )
            out[key] = _float32s(record[key])
    if "ig_delta" in record:
        out["ig_delta"] = _float32s([record["ig_delta"]])[0]
    return out


# the keys of each method's records beyond `id` and `length` (module docstring); other methods: their name
METHOD_KEYS = {
    "attention": ("label", "predicted", "probs", "attention"),
    "ig": ("ig", "ig_delta", "ig_steps", "ig_converged"),
}


def write_explanations(
    checkpoint: str | Path,
    data: DataFiles,
    outputs: Mapping[str, str | Path],
    settings: dict,
    *,
    seed: int,
    threads: int,
    log: Callable[[str], None] = print,
    device: str = "cpu",
) -> None:
    """Explain every test instance of a trained model by each method of `outputs` (method -> the path
    of its `{method}.jsonl`), all in one pass over the test split, on `device` (the config's `device`
    setting: auto | cpu | cuda). Each file holds its own method's keys, whichever methods were
    computed with it."""
    unknown = sorted(set(outputs) - set(METHODS))
    if unknown:  # before any work
        raise ValueError(f"unknown explanation methods {unknown}; expected some of {METHODS}")
    methods = tuple(m for m in METHODS if m in outputs)
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "explain")
    examples = run.test_examples(data)
    log(
        f"{run.spec.name}: {', '.join(methods)} of {len(examples)} test instances ({settings})"
    )  # the job logs its device
    records = explain_examples(run.model, examples, settings, log, methods)
    for method in methods:
        keys = ("id", "length", *METHOD_KEYS.get(method, (method,)))
        io.write_jsonl(outputs[method], (_serialisable({k: r[k] for k in keys}) for r in records), seal=True)
