"""Does J&W's adversarial search converge within its 500 steps? The ε-max JSD of every test instance
after s steps, against after all of them (the same search cut short: its trajectory does not depend
on the step count). Per-instance convergence stopping could only save time without changing the
results if most instances settled well before the configured count.

    python benchmarks/adversary_convergence.py --model results/models/sst/lstm-tanh/seed10 --data results/data/sst [--threads 2] [--instances 0] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402
from dataset_files import dataset_files  # noqa: E402

from attnexp.config import validate_config  # noqa: E402
from attnexp.papers.jain_wallace.experiment import adversarial_experiment  # noqa: E402
from attnexp.runs import restore_run  # noqa: E402
from attnexp.runtime import set_determinism  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="results/models/sst/lstm-tanh/seed10")
    parser.add_argument("--data", default="results/data/sst")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--every", type=int, default=50, help="steps between snapshots")
    parser.add_argument("--instances", type=int, default=0, help="the first N test instances (0: all)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    settings = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))["jain_wallace"]
    set_determinism(10, args.threads)
    data = dataset_files(args.data)
    run = restore_run(Path(args.model) / "model.pt", data)
    examples = run.test_examples(data)
    if args.instances:
        examples = examples[: args.instances]
    steps = settings["adversary"]["steps"]
    divergence = {}
    for s in range(args.every, steps + 1, args.every):
        cut = copy.deepcopy(settings)
        cut["adversary"]["steps"] = s
        table, _ = adversarial_experiment(run.model, examples, cut, seed=10, log=lambda _: None)
        divergence[s] = table["eps_max_jsd"].to_numpy()
    lines = [
        f"Adversarial search on `{args.model}`, {len(examples)} test instances, {steps} steps (config.yaml).",
        "",
        f"| after step | ε-max JSD: max abs. difference to step {steps} | 99th percentile | instances off by more than 1e-4 |",
        "|---|---|---|---|",
    ]
    for s, values in divergence.items():
        gap = np.abs(values - divergence[steps])
        lines.append(f"| {s} | {gap.max():.3g} | {np.quantile(gap, 0.99):.3g} | {np.mean(gap > 1e-4):.1%} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
