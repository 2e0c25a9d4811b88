"""Explanations of long documents: seconds per document of each explanation method (the explain jobs'
code, `attnexp.explain.explain_examples`), and for integrated gradients the convergence per document
(points used, completeness gap δ against the configured tolerance).

    python benchmarks/long_documents.py --model results/models/20news/lstm-tanh/seed10 --data results/data/20news \
        [--instances 0] [--methods attention gradient loo ig] [--threads 2] [--out benchmarks/long_documents.md]

`--instances 0` explains the whole test split (the acceptance check: 20News, every method, <= 6 min).
Settings are the config's `explain` section; `--ig-steps` / `--ig-max-steps` override it to measure a
cheaper setting's completeness.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402

from attnexp.explain import explain_examples  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--instances", type=int, default=0, help="the first N test instances (0: all)")
    parser.add_argument("--methods", nargs="+", default=["attention", "gradient", "loo", "ig"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ig-steps", type=int, default=None)
    parser.add_argument("--ig-max-steps", type=int, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    import yaml
    from dataset_files import dataset_files

    from attnexp.config import validate_config
    from attnexp.runs import restore_run
    from attnexp.runtime import set_determinism

    settings = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))["explain"]
    if args.ig_steps:
        settings["ig_steps"] = args.ig_steps
    if args.ig_max_steps:
        settings["ig_max_steps"] = args.ig_max_steps
    set_determinism(10, args.threads)
    data = dataset_files(args.data)
    run = restore_run(Path(args.model) / "model.pt", data)
    examples = run.test_examples(data)
    if args.instances:
        examples = examples[: args.instances]
    lengths = np.array([len(e.tokens) for e in examples])
    lines = [
        f"Explanations of `{args.model}` ({run.spec.name}), {len(examples)} test documents (tokens: mean {lengths.mean():.0f}, "
        f"max {lengths.max()}), {args.threads} CPU threads; IG: {settings['ig_method']}, {settings['ig_steps']} points doubled up "
        f"to {settings['ig_max_steps']} while |δ| > {settings['ig_tolerance']}·max(1, |F(e) − F(e′)|).",
        "",
        "| method | seconds | seconds per document |",
        "|---|---|---|",
    ]
    total = 0.0
    for method in args.methods:
        start = time.perf_counter()
        records = explain_examples(run.model, examples, settings, lambda _: None, (method,))
        seconds = time.perf_counter() - start
        total += seconds
        lines.append(f"| {method} | {seconds:,.1f} | {seconds / len(examples):.3f} |")
        if method == "ig":
            steps = np.array([r["ig_steps"] for r in records])
            delta = np.abs([r["ig_delta"] for r in records])
            converged = np.array([r["ig_converged"] for r in records])
            points = ", ".join(f"{m}: {int((steps == m).sum())}" for m in sorted(set(steps.tolist())))
            ig_line = (
                f"IG convergence: {converged.sum()} of {len(records)} documents within the tolerance; points used ({points}); "
                f"|δ| median {np.median(delta):.2e}, max {delta.max():.2e}."
            )
    lines.append(f"| **all** | {total:,.1f} | {total / len(examples):.3f} |")
    if "ig" in args.methods:
        lines += ["", ig_line]
    lines += ["", f"Peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB."]
    emit(lines, args.out)


if __name__ == "__main__":
    main()
