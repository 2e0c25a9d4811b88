"""Rates from jobs that ran: every measured job of a run folder (its benchmark file's seconds, or a
training's own `timing.json`) with its units of work (`attnexp.cost_units`), fitted into the rates
file `attnexp.cost` prices a plan with (`benchmarks/cost_model.py` writes it): the start-up seconds
(the fastest measured explanation job: interpreter, torch import, model restore) and the median
seconds per unit per job type, model family and dataset, pooled over datasets and over families.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

from attnexp.cost_units import TOGETHER_AS_LOO, family, job_type, split_sizes, together_methods, units

__all__ = ["parse_benchmark_path", "measured_jobs", "fit_rates", "merge_rates"]


def parse_benchmark_path(path: Path, root: Path) -> tuple[str, dict]:
    """results/benchmarks/<rule>/<dataset>[/<model>/seed<seed>[/<method>]].tsv -> (rule, wildcards)."""
    parts = path.relative_to(root).with_suffix("").parts
    rule, rest = parts[0], parts[1:]
    wildcards = {"dataset": rest[0]}
    if len(rest) >= 3:
        wildcards |= {"model": rest[1], "seed": rest[2].removeprefix("seed")}
    if len(rest) == 4:
        wildcards["method"] = rest[3]
    return rule, wildcards


def measured_jobs(results: Path, config: dict) -> list[dict]:
    """Every measured job of one results folder: type, family, seconds, units. `config` is the
    config the run ran with (its `results/run/config.yaml`): a training's units count the epochs its
    protocol planned there."""
    from attnexp.config import training_settings

    jobs = []
    stats_of = {}

    def stats(dataset):
        if dataset not in stats_of:
            path = results / "data" / dataset / "stats.json"
            stats_of[dataset] = json.loads(path.read_text()) if path.exists() else None
        return stats_of[dataset]

    root = results / "benchmarks"
    for path in sorted(root.rglob("*.tsv")) if root.exists() else []:
        rule, wildcards = parse_benchmark_path(path, root)
        if rule == "train_model":
            continue  # timing.json below: the training loop's own seconds
        if rule == "explain_together" and set(together_methods(config)) != set(TOGETHER_AS_LOO):
            continue  # its seconds are several methods' that it cannot split
        with path.open() as f:
            seconds = float(next(csv.DictReader(f, delimiter="\t"))["s"])
        data = stats(wildcards["dataset"])
        if data is None or wildcards["dataset"] not in config["datasets"]:
            continue
        kind = job_type(rule, wildcards)
        try:
            fam = family(config, wildcards["dataset"], wildcards.get("model"))
        except ValueError:
            continue
        jobs.append(
            {
                "type": kind,
                "family": fam,
                "dataset": wildcards["dataset"],
                "seconds": seconds,
                "units": units(kind, data, None),
                "generated": config["datasets"][wildcards["dataset"]]["protocol"] == "generated",
            }
        )
    for path in sorted((results / "models").glob("*/*/seed*/timing.json")):
        dataset, model = path.parts[-4], path.parts[-3]
        timing, data = json.loads(path.read_text()), stats(dataset)
        if data is None or dataset not in config["datasets"] or "epochs_run" not in timing:
            continue
        try:
            fam = family(config, dataset, model)
        except ValueError:
            continue
        kind = ("train_model", None)
        jobs.append(
            {
                "type": kind,
                "family": fam,
                "dataset": dataset,
                "seconds": timing["train_seconds"],
                "units": units(kind, data, training_settings(config, dataset, model)["epochs"]),
                "generated": config["datasets"][dataset]["protocol"] == "generated",
            }
        )
    return jobs


def _rate_order(row: dict) -> tuple[str, ...]:
    """The order of a rates file's rows: by job type, method, family and dataset (None as 'None')."""
    return tuple(str(row[k]) for k in ("rule", "method", "family", "dataset"))


def fit_rates(jobs: list[dict], datasets: dict[str, dict], about: str) -> dict:
    """Measured jobs -> the rates file's content: the start-up seconds, the median seconds per unit
    per (type, method, family, dataset), per (type, method, family) and per (type, method), and each
    measured dataset's split sizes. Generated datasets (whose presets train reduced models) give only
    their own dataset's rates, not the pooled ones."""
    # every job pays the interpreter, torch import and model restore before any work: the fastest
    # measured explanation job's seconds; the rest scales with the units
    overhead = min((j["seconds"] for j in jobs if j["type"][0] == "explain"), default=0.0)
    rates = defaultdict(list)
    for job in jobs:
        if job["units"] > 0:
            rate = max(job["seconds"] - (0.0 if job["type"][0] == "train_model" else overhead), 0.0) / job["units"]
            rates[(*job["type"], job["family"], job["dataset"])].append(rate)
            if not job.get("generated"):
                rates[(*job["type"], job["family"], None)].append(rate)
                rates[(*job["type"], None, None)].append(rate)
    return {
        "about": about,
        "overhead_seconds": overhead,
        "rates": sorted(
            (
                {
                    "rule": r,
                    "method": m,
                    "family": f,
                    "dataset": d,
                    "seconds_per_unit": statistics.median(v),
                    "jobs": len(v),
                }
                for (r, m, f, d), v in rates.items()
            ),
            key=_rate_order,
        ),
        "datasets": {name: split_sizes(stats) for name, stats in sorted(datasets.items())},
    }


def merge_rates(rates: dict, added: dict) -> dict:
    """`rates` with the per-family rates of `added` (fitted on other runs) for the model families it
    never measured. Its own rows, its pooled rates (a job type's median over families) and its start-up
    seconds stay as they are, so that nothing it priced before changes price."""
    families = {r["family"] for r in rates["rates"]}
    new = [r for r in added["rates"] if r["family"] is not None and r["family"] not in families]
    if not new:
        return rates
    return {
        "about": f"{rates['about']}; the families {', '.join(sorted({r['family'] for r in new}))}: {added['about']}",
        "overhead_seconds": rates["overhead_seconds"],
        "rates": sorted(rates["rates"] + new, key=_rate_order),
        "datasets": added["datasets"] | rates["datasets"],
    }
