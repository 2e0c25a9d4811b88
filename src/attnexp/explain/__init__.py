"""Per-instance explanations of a trained flat or QA/NLI model (Jain & Wallace §5.1–5.2, beyond.md §1).

`results/explain/{dataset}/{model}/seed{seed}/explanations.jsonl` holds one JSON object per test
instance, in the order of `test.jsonl`. Every vector covers the n real tokens w_1..w_n (passage or
premise tokens for QA/NLI; never SOS/EOS/PAD), and n is stored, never inferred from zeros (D-ALIGN):

| key | meaning |
|---|---|
| `id`, `length` | instance id and n |
| `label`, `predicted` | gold and predicted class index (into `classes` of the model's metrics.json) |
| `probs` | class probabilities (C,); BC models: [1 − ŷ, ŷ] |
| `attention` | α over the real tokens (sums to 1) |
| `gradient` | signed g_t = Σ_d e_{t,d} ∂p_j/∂e_{t,d}, p_j the predicted class's probability, α held constant; J&W use |g_t| (for BC the sign is that of ∂P(y = 1) when j = 1, flipped when j = 0) |
| `loo` | leave-one-out output change TVD(p(x₋t), p(x)) (D-LOO-OP: `explain.loo_op`) |
| `ig`, `ig_delta`, `ig_steps`, `ig_converged` | signed integrated gradients, completeness gap δ, points used, whether δ met the tolerance |
| `rollout` | Transformer only: attention rollout's `[CLS]` row (Abnar & Zuidema; `explain.rollout_readout`) |
| `attattr` | Transformer only: attention attribution of the top layer's `[CLS]` row, summed over heads (Hao et al.; signed) |

Floats are written as the shortest decimal that reads back to the same float32, so the file is
deterministic and compact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from attnexp import io
from attnexp.explain.attention_attribution import token_attribution
from attnexp.explain.gradient import gradient_importance
from attnexp.explain.integrated_gradients import integrated_gradients
from attnexp.explain.leave_one_out import leave_one_out
from attnexp.explain.rollout import rollout
from attnexp.models.attention import present_mask
from attnexp.models.inputs import Example, collate, sorted_batches
from attnexp.plan import require
from attnexp.runtime import probabilities, restore_run, set_determinism

__all__ = [
    "gradient_importance", "leave_one_out", "integrated_gradients", "rollout", "token_attribution",
    "explain_examples", "write_explanations", "read_explanations", "VECTORS", "SELF_ATTENTION_VECTORS", "importance",
]

VECTORS = ("attention", "gradient", "loo", "ig")
SELF_ATTENTION_VECTORS = ("rollout", "attattr")  # models with self-attention in every layer (the Transformer)
SIGNED = ("gradient", "ig", "attattr")


def importance(record: dict, measure: str) -> np.ndarray:
    """A record's token importance by one measure, as magnitudes: |gradient| (J&W §5.1), |IG|
    (beyond.md §1) and |attention attribution|; attention, LOO and rollout are non-negative already.
    What every rank correlation uses."""
    if measure not in VECTORS + SELF_ATTENTION_VECTORS:
        raise ValueError(f"unknown importance measure {measure!r}; expected one of {VECTORS + SELF_ATTENTION_VECTORS}")
    if measure not in record:
        raise ValueError(f"instance {record['id']!r} has no {measure!r} scores (only models with self-attention in every layer do)")
    return np.abs(record[measure]) if measure in SIGNED else np.asarray(record[measure])


def explain_examples(model: nn.Module, examples: list[Example], settings: dict, log: Callable[[str], None] = print) -> list[dict]:
    """Every explanation of every example (see the module docstring), in the examples' order."""
    require(model.spec, "explain")
    model.eval()
    records: list[dict | None] = [None] * len(examples)
    order = sorted_batches(np.array([len(e.tokens) + 2 for e in examples]), settings["batch_size"])
    for done, indices in enumerate(order):
        batch = collate([examples[i] for i in indices], model.layout)
        with torch.no_grad():
            encoded = model.encode(batch)
            logits, attention = model.decode(encoded)
            probs = probabilities(logits)
            predicted = probs.argmax(dim=-1)
        gradient = gradient_importance(model, batch)
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
        loo = leave_one_out(model, [examples[i] for i in indices], probs.numpy(), settings["loo_op"])
        extra = {}
        if model.spec.self_attention:
            with torch.no_grad():
                present = present_mask(batch.lengths, batch.tokens.shape[1])
                extra["rollout"] = rollout(model.attention_maps(batch), present, settings["rollout_readout"])
            extra["attattr"] = token_attribution(model, batch, predicted, settings["attattr_steps"], settings["attattr_riemann"])
        mask = encoded.mask.numpy()
        for row, i in enumerate(indices):
            real = mask[row]
            records[i] = {
                "id": examples[i].id,
                "length": int(real.sum()),
                "label": int(examples[i].label),
                "predicted": int(predicted[row]),
                "probs": probs[row].numpy(),
                "attention": attention[row].numpy()[real],
                "gradient": gradient[row].numpy()[real],
                "loo": loo[row],
                "ig": ig.scores[row].numpy()[real],
                "ig_delta": float(ig.delta[row]),
                "ig_steps": int(ig.steps[row]),
                "ig_converged": bool(ig.converged[row]),
                **{key: values[row].numpy()[real] for key, values in extra.items()},
            }
        log(f"explained {sum(len(o) for o in order[: done + 1])}/{len(examples)} instances")
    unconverged = [r["id"] for r in records if not r["ig_converged"]]
    if unconverged:
        log(f"integrated gradients: {len(unconverged)} instances keep |δ| > {settings['ig_tolerance']} after {settings['ig_max_steps']} points, e.g. {unconverged[0]!r}")
    return records


def _float32s(values) -> list[float]:
    """Shortest decimals that read back to the same float32 values (deterministic, compact)."""
    return [float(str(v)) for v in np.asarray(values, dtype=np.float32)]


def _serialisable(record: dict) -> dict:
    out = dict(record)
    for key in ("probs", *VECTORS, *SELF_ATTENTION_VECTORS):
        if key in record:
            out[key] = _float32s(record[key])
    out["ig_delta"] = _float32s([record["ig_delta"]])[0]
    return out


def write_explanations(checkpoint: str | Path, data_dir: str | Path, out: str | Path, settings: dict, seed: int, threads: int, log: Callable[[str], None] = print) -> None:
    """Explain every test instance of a trained model and write explanations.jsonl."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data_dir)
    require(run.spec, "explain")
    examples = run.test_examples(data_dir)
    log(f"{run.spec.name}: explaining {len(examples)} test instances ({settings})")
    records = explain_examples(run.model, examples, settings, log)
    io.write_jsonl(out, (_serialisable(r) for r in records))


def read_explanations(path: str | Path) -> list[dict]:
    """explanations.jsonl -> records with numpy vectors; every vector's length is checked against n."""
    records = []
    for record in io.read_jsonl(path):
        for key in VECTORS + tuple(k for k in SELF_ATTENTION_VECTORS if k in record):
            vector = np.asarray(record[key], dtype=np.float64)
            if len(vector) != record["length"]:
                raise ValueError(f"{path}: instance {record['id']!r} has {len(vector)} {key} values for length {record['length']}")
            record[key] = vector
        record["probs"] = np.asarray(record["probs"], dtype=np.float64)
        records.append(record)
    return records
