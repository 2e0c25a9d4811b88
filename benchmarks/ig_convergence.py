"""Whether integrated gradients converge: on a trained model's test instances, the share whose
completeness gap meets `explain.ig_tolerance` for each integration rule (`explain.ig_method`), within the
same point budget, with the points used, the time per instance, and how far the scores of two rules lie
apart where both converged (the same path and baseline: they estimate the same integral).

    python benchmarks/ig_convergence.py --model results/models/synthetic/lstm-dot/seed10 --data results/data/synthetic [--instances 200] [--steps 48] [--max-steps 400] [--threads 1] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402
from dataset_files import evenly_spaced_test_examples  # noqa: E402

from attnexp.explain.integrated_gradients import IG_METHODS, integrated_gradients  # noqa: E402
from attnexp.models.inputs import collate, sorted_batches  # noqa: E402
from attnexp.models.outputs import probabilities  # noqa: E402
from attnexp.runtime import set_determinism  # noqa: E402


def run_method(model, examples, method, steps, max_steps, tolerance, batch_size=32):
    """Every instance's IG under one rule -> scores (each instance's padded row: the batches are the same
    for every rule), converged and points per instance, seconds."""
    scores, converged, points = [None] * len(examples), {}, {}
    started = time.perf_counter()
    for indices in sorted_batches([len(e.tokens) for e in examples], batch_size):
        batch = collate([examples[i] for i in indices], model.layout)
        with torch.no_grad():
            cls = probabilities(model.decode(model.encode(batch))[0]).argmax(dim=-1)
        result = integrated_gradients(
            model, batch, cls, method=method, steps=steps, max_steps=max_steps, tolerance=tolerance
        )
        for row, i in enumerate(indices):
            scores[i] = result.scores[row].numpy()
            converged[i] = bool(result.converged[row])
            points[i] = int(result.steps[row])
    seconds = time.perf_counter() - started
    return scores, converged, points, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="results/models/synthetic/lstm-dot/seed10")
    parser.add_argument("--data", default="results/data/synthetic")
    parser.add_argument("--instances", type=int, default=200, help="test instances, evenly spaced")
    parser.add_argument("--steps", type=int, default=48, help="points at first (explain.ig_steps)")
    parser.add_argument("--max-steps", type=int, default=400, help="the point budget (explain.ig_max_steps)")
    parser.add_argument("--tolerance", type=float, default=0.01, help="explain.ig_tolerance")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    set_determinism(10, args.threads)
    run, examples = evenly_spaced_test_examples(args.model, args.data, args.instances)
    import captum.attr  # noqa: F401 - loaded before the clock starts: the first rule timed would pay for it

    found = {m: run_method(run.model, examples, m, args.steps, args.max_steps, args.tolerance) for m in IG_METHODS}
    lines = [
        f"{date.today().isoformat()}, {os.cpu_count()}-core {platform.machine()} CPU machine, {args.threads} torch "
        f"thread(s): `python benchmarks/ig_convergence.py --model {args.model} --data {args.data} "
        f"--instances {args.instances} --steps {args.steps} --max-steps {args.max_steps} --threads {args.threads}`",
        "",
        f"Integrated gradients of `{args.model}` on {len(examples)} test instances: {args.steps} points at first, "
        f"at most {args.max_steps}, tolerance {args.tolerance} · max(1, |F(e) − F(e′)|).",
        "",
        "| `ig_method` | converged | median points | most points | seconds per instance |",
        "|---|---|---|---|---|",
    ]
    for method, (_, converged, points, seconds) in found.items():
        used = np.array(list(points.values()))
        lines.append(
            f"| `{method}` | {np.mean(list(converged.values())):.3f} | {np.median(used):.0f} | {used.max()} | "
            f"{seconds / len(examples):.4f} |"
        )
    reference = "gausslegendre"
    lines += [
        "",
        f"| `ig_method` | instances both converged | largest difference from `{reference}`, relative to its largest score |",
        "|---|---|---|",
    ]
    for method in IG_METHODS:
        if method == reference:
            continue
        both = [i for i in range(len(examples)) if found[method][1][i] and found[reference][1][i]]
        worst = max(
            (
                np.abs(found[method][0][i] - found[reference][0][i]).max()
                / max(np.abs(found[reference][0][i]).max(), 1e-12)
                for i in both
            ),
            default=float("nan"),
        )
        lines.append(f"| `{method}` | {len(both)} | {worst:.4f} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
