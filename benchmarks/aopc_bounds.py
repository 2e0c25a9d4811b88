"""What normalised AOPC costs: each instance's AOPC range (`attnexp.papers.faithfulness.bounds`) on a
trained model's test instances, exact and by beam search at several widths, timed per instance, with
how far a narrow beam's range falls inside the widest one's (the beam finds orderings that exist, so a
narrower range means it missed the extremes).

    python benchmarks/aopc_bounds.py --model results/models/sst/lstm-tanh/seed10 --data results/data/sst [--instances 40] [--widths 10 50] [--threads 1] [--out FILE.md]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402
from dataset_files import evenly_spaced_test_examples  # noqa: E402

from attnexp.papers.faithfulness.bounds import aopc_bounds  # noqa: E402
from attnexp.papers.faithfulness.experiment import BINS  # noqa: E402
from attnexp.runtime import set_determinism  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="results/models/sst/lstm-tanh/seed10")
    parser.add_argument("--data", default="results/data/sst")
    parser.add_argument("--instances", type=int, default=40, help="test instances, evenly spaced")
    parser.add_argument("--widths", type=int, nargs="+", default=[10, 50], help="beam widths (the last: the reference)")
    parser.add_argument("--exact-max-units", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    set_determinism(10, args.threads)
    run, examples = evenly_spaced_test_examples(args.model, args.data, args.instances)
    lengths = np.array([len(e.tokens) for e in examples])
    short = lengths <= args.exact_max_units
    rows, found = [], {}
    for label, exact_max, width, subset in [("exact", args.exact_max_units, 1, short)] + [
        (f"beam, width {w}", 1, w, ~short) for w in args.widths
    ]:
        chosen = np.flatnonzero(subset)
        if not len(chosen):
            rows.append((label, 0, "", ""))
            continue
        started = time.perf_counter()
        found[label] = aopc_bounds(
            run.model,
            examples,
            BINS,
            op="delete",
            max_tokens=20_000,
            units=None,
            exact_max_units=exact_max,
            beam_width=width,
            chosen=chosen,
        )
        seconds = time.perf_counter() - started
        rows.append((label, len(chosen), f"{seconds / len(chosen):.3f}", f"{np.median(lengths[chosen]):.0f}"))
    reference = found.get(f"beam, width {args.widths[-1]}")
    lines = [
        f"{date.today().isoformat()}, {os.cpu_count()}-core {platform.machine()} CPU machine, {args.threads} torch "
        "thread(s): "
        f"`python benchmarks/aopc_bounds.py --model {args.model} --data {args.data} --instances {args.instances} "
        f"--widths {' '.join(map(str, args.widths))} --threads {args.threads}`",
        "",
        f"AOPC ranges of `{args.model}` on {len(examples)} test instances (bins {', '.join(map(str, BINS))}): "
        f"exact up to {args.exact_max_units} units, beam search above.",
        "",
        "| bounds | instances | seconds per instance | median units |",
        "|---|---|---|---|",
        *(f"| {label} | {n} | {seconds} | {units} |" for label, n, seconds, units in rows),
    ]
    if reference is not None and len(args.widths) > 1:
        lines += [
            "",
            f"| beam width | share of width {args.widths[-1]}'s comprehensiveness range found (median) | same, sufficiency |",
            "|---|---|---|",
        ]
        for w in args.widths[:-1]:
            narrow = found[f"beam, width {w}"]
            shares = []
            for kind in ("comprehensiveness", "sufficiency"):
                span = reference[f"{kind}_max"] - reference[f"{kind}_min"]
                own = narrow[f"{kind}_max"] - narrow[f"{kind}_min"]
                shares.append(np.median(np.where(span > 0, own / np.where(span > 0, span, 1), 1.0)))
            lines.append(f"| {w} | {shares[0]:.3f} | {shares[1]:.3f} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
