"""Training steps of trained models with denormal floats kept (x86's default) against flushed to zero
(what `attnexp.runtime.set_determinism` sets for every job), in one process, the two alternating batch
by batch on one torch thread, so a busy machine slows them alike.

A training that saturates its activations (W&P's adversary, driven away from the base model's
attention) computes on denormals, floats below 1.2e-38, on which x86 arithmetic is many times slower.
Each `--model` folder's checkpoint is restored and put in training mode; a step is the forward pass,
the protocol's supervised loss and the backward pass over a length-bucketed batch of its training
split (no optimiser step, so both settings see the same weights). Reports seconds per batch, the
ratio, the share of the attention weights that are denormal when kept (where the slow arithmetic
starts: a softmax of saturated scores), and the largest difference between the two settings'
gradients.

    python benchmarks/denormals.py --data <run>/results/data/sst --model <run>/results/models/sst/lstm-tanh/seed10 --model <run>/results/models/sst/lstm-tanh-adversary-1e-2/seed10 --out benchmarks/denormals.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
TINY = torch.finfo(torch.float32).tiny  # the smallest normal float32


def step_gradients(model, batch, objective) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    objective(model, batch).backward()
    return [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]


def denormal_attention(model, batch) -> tuple[int, int]:
    """Denormal attention weights of the batch (kept), and the real positions."""
    torch.set_flush_denormal(False)
    with torch.no_grad():
        _, attention = model(batch)
    real = attention[attention != 0] if batch.lengths is not None else attention.flatten()
    return int((real.abs() < TINY).sum()), int(batch.lengths.sum()) if batch.lengths is not None else attention.numel()


def measure(model_dir: Path, folder: Path, batches: int, seed: int) -> dict:
    from dataset_files import dataset_files

    from attnexp.data.splits import read_classes
    from attnexp.models.inputs import length_bucketed_batches
    from attnexp.models.splits import batches_of, load_splits
    from attnexp.runs import restore_run
    from attnexp.train.objectives import class_weights, supervised_objective

    files = dataset_files(folder)
    run = restore_run(model_dir / "model.pt", files)
    splits = load_splits(files, run.vocab, read_classes(files))
    train = splits["train"]
    lengths = np.array([e.length(run.model.layout) for e in train.examples])
    order = length_bucketed_batches(lengths, 32, np.random.RandomState(seed), 0.1, None)[:batches]
    data = list(batches_of(train, order, run.model.layout))
    model = run.model.train()
    objective = supervised_objective(class_weights(train.labels()) if model.decoder.out_features == 1 else None)
    seconds = {False: 0.0, True: 0.0}
    denormal = total = 0
    max_diff = 0.0
    for i, batch in enumerate(data):
        grads = {}
        for flush in (False, True) if i % 2 == 0 else (True, False):
            torch.set_flush_denormal(flush)
            torch.manual_seed(seed + i)  # the same dropout draws for both
            start = time.perf_counter()
            grads[flush] = step_gradients(model, batch, objective)
            seconds[flush] += time.perf_counter() - start
        tiny, real = denormal_attention(model, batch)
        denormal, total = denormal + tiny, total + real
        max_diff = max(max_diff, max(float((a - b).abs().max()) for a, b in zip(grads[False], grads[True])))
    torch.set_flush_denormal(True)
    return {
        "model": f"{folder.name} {run.spec.name}",
        "kept": seconds[False] / len(data),
        "flushed": seconds[True] / len(data),
        "denormal_share": denormal / total,
        "max_diff": max_diff,
    }


def placeholder(path: Path) -> str:
    """The path with its run folder written as `<run>` (the reader's own)."""
    parts = path.resolve().parts
    return "/".join(("<run>",) + parts[parts.index("results") :]) if "results" in parts else str(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="results/data/<dataset> of a run")
    parser.add_argument(
        "--model", type=Path, action="append", required=True, help="a trained model's folder (model.pt); repeatable"
    )
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from benchmark_output import emit

    torch.set_num_threads(1)
    rows = [measure(m, args.data, args.batches, args.seed) for m in args.model]
    command = " ".join(
        ["python benchmarks/denormals.py", f"--data {placeholder(args.data)}"]
        + [f"--model {placeholder(m)}" for m in args.model]
        + [f"--batches {args.batches}", f"--out {args.out}" if args.out else ""]
    ).strip()
    lines = [
        f"Measured {datetime.date.today()} on a {os.cpu_count()}-core {platform.machine()} CPU machine, 1 torch thread, "
        f"{args.batches} training batches of each model: `{command}`",
        "",
        "| model | denormals kept, ms/batch | flushed, ms/batch | speed-up | denormal attention weights | max abs gradient difference |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {1000 * r['kept']:.1f} | {1000 * r['flushed']:.1f} | {r['kept'] / r['flushed']:.2f}× "
            f"| {100 * r['denormal_share']:.1f} % | {r['max_diff']:.1e} |"
        )
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
