"""What a Wiegreffe & Pinter run costs: training seconds per dataset and role (base, uniform twin,
seed models, adversaries, diagnostic MLPs), read from each training job's `timing.json`.

Every W&P model is an ordinary cached training job, so the cost is the sum of its jobs; the run's
config (the same `--configfile` overlays the workflow got) says which jobs belong to it.

    python benchmarks/wiegreffe_pinter_cost.py --results RUN_DIR [--configfile OVERLAY ...] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attnexp.config import load_config
from attnexp.plan import experiment_runs, wiegreffe_pinter_companions


def roles(companions) -> dict[str, list]:
    """Role -> the runs of that role (Table 2's datasets have only the first two)."""
    if not companions.full:
        return {"base": [companions.base], "uniform": [companions.uniform]}
    return {
        "base": [companions.base],
        "uniform": [companions.uniform],
        "seed models": companions.seeds,
        "adversaries": list(companions.adversaries.values()),
        "diagnostic MLPs": list(companions.diagnostic.values()),
    }


def timing_of(results: Path, run) -> dict | None:
    path = results / run.path("results/models") / "timing.json"
    return json.loads(path.read_text()) if path.exists() else None


def cost_table(results: Path, config: dict) -> list[str]:
    lines = [
        "| dataset | role | jobs | trained | epochs | train s | s/epoch | device × threads |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for base in experiment_runs(config, "wiegreffe_pinter"):
        total, missing = 0.0, 0
        for role, runs in roles(wiegreffe_pinter_companions(config, base)).items():
            timings = [t for t in (timing_of(results, run) for run in runs) if t]
            missing += len(runs) - len(timings)
            seconds = sum(t["train_seconds"] for t in timings)
            epochs = sum(t["epochs_run"] for t in timings)
            where = sorted({f"{t['device']} × {t['threads']}" for t in timings})
            total += seconds
            per_epoch = f"{seconds / epochs:.1f}" if epochs else "–"
            lines.append(
                f"| {base.dataset} | {role} | {len(runs)} | {len(timings)} | {epochs} | {seconds:.0f} | {per_epoch} | {', '.join(where) or '–'} |"
            )
        note = f" ({missing} not trained yet)" if missing else ""
        lines.append(f"| **{base.dataset}** | **all** | | | | **{total:.0f}**{note} | | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="the workflow's run directory (holds results/)")
    parser.add_argument("--configfile", nargs="*", default=[], help="the overlays the run was started with")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args()
    if not (args.results / "results" / "models").is_dir():  # else every job would read as not trained yet
        sys.exit(
            f"error: {args.results / 'results' / 'models'} is missing: --results names a run folder, the one holding results/"
        )
    table = "\n".join(cost_table(args.results, load_config(*args.configfile)))
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
