"""Where the pipeline's adversarial search and the benchmark's copy of the original strategy
(`jain_wallace_speed.original_adversarial`, on the pipeline's decoder) disagree, and why.

Both run the same search (K candidates from the same noise, the same Adam steps and objective) but in
different batches (the pipeline's token-budget batches against the original's 32 by length) and with
different Adam kernels (torch's fused one against torch.optim.Adam's loop), so the candidates differ
by float32 rounding. The ε-max JSD then keeps the farthest candidate whose output change is at most ε:
a candidate whose change lies within rounding of ε is kept on one side and dropped on the other, and
the instance's ε-max JSD jumps by the JSD gap between candidates. This script counts, for every
instance whose ε-max JSD differs by more than `--tolerance`, whether the candidates within ε differ,
and how close to ε the deciding candidate's change is.

    python benchmarks/adversary_agreement.py --model <run>/results/models/sst/lstm-tanh/seed10 \
        --data <run>/results/data/sst [--instances 1725] [--threads 1] [--out benchmarks/adversary_agreement.md]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))

from jain_wallace_speed import original_adversarial  # noqa: E402

from attnexp.papers.jain_wallace import experiment as jw  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--instances", type=int, default=1725)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--out")
    args = parser.parse_args()

    import yaml
    from dataset_files import dataset_files

    from attnexp.config import validate_config
    from attnexp.runs import restore_run
    from attnexp.runtime import set_determinism

    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    settings = config["jain_wallace"]
    set_determinism(10, args.threads)
    data = dataset_files(args.data)
    run = restore_run(Path(args.model) / "model.pt", data)
    model, examples = run.model, run.test_examples(data)[: args.instances]
    model.eval()
    family = run.spec.family
    eps = settings["adv_eps_qa"] if family == "qa" else settings["adv_eps_bc"]

    ours, _ = jw.adversarial_rows(model, examples, settings, 10, log=lambda _: None)
    theirs = original_adversarial(model, examples, settings, 10, family, decoder="pipeline", details=True)
    gaps = np.array([abs(o["eps_max_jsd"] - t[0]) for o, t in zip(ours, theirs)])
    differing = np.flatnonzero(gaps > args.tolerance)
    same_feasible = [i for i in differing if ours[i]["feasible_candidates"] == theirs[i][1]]
    quiet = np.delete(gaps, differing)
    lines = [
        f"Measured {datetime.date.today()} on {platform.machine()}, {args.threads} thread(s): "
        f"`python benchmarks/adversary_agreement.py --model <run>/results/models/{Path(args.model).relative_to(Path(args.model).parents[2])} "
        f"--instances {args.instances} --threads {args.threads}`",
        "",
        f"ε-max JSD of the pipeline's adversarial search against the benchmark's copy of the original strategy, {len(examples)} "
        f"test instances of `{Path(args.data).name}`, ε = {eps}:",
        "",
        "| | value |",
        "|---|---|",
        f"| instances | {len(examples)} |",
        f"| max abs difference, all instances | {gaps.max():.1e} |",
        f"| instances differing by more than {args.tolerance:g} | {len(differing)} |",
        f"| ... of which the number of candidates within ε differs | {len(differing) - len(same_feasible)} |",
        f"| max abs difference, the other instances | {(quiet.max() if len(quiet) else float('nan')):.1e} |",
        "",
    ]
    for i in differing:
        lines.append(
            f"- instance {i} ({len(examples[i].tokens)} tokens): ε-max JSD {ours[i]['eps_max_jsd']:.4f} (pipeline) vs {theirs[i][0]:.4f}; "
            f"chosen candidate's output change {ours[i]['output_difference']:.4f} (pipeline); the original side's candidates' changes "
            + ", ".join(f"{c:.4f}" for c in theirs[i][2])
        )
    emit(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
