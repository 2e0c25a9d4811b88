"""A measured cost model of the full replication: what `snakemake --cores N` on the default config costs,
job type by job type, from the wall-clock seconds of jobs that ran.

Measurements: every per-run rule writes a Snakemake benchmark file (`results/benchmarks/<rule>/...tsv`,
column `s`), and every training job its `timing.json`. Each measured job gives a rate, seconds per unit
of work, where the unit is what the job's cost grows with:

| job type | unit |
|---|---|
| train_model | training tokens x epochs run (the protocol's epochs for a planned job) |
| explain loo | test tokens x mean test length (every instance re-run once per token) |
| faithfulness_eraser | test tokens x (70 + mean test length) (~70 + n forward passes per instance) |
| other per-run jobs (explain by method, J&W, S&S, W&P, attention attribution, export) | test tokens (export: every split's) |
| preprocess_dataset, build_embeddings | training tokens |

A planned job's seconds = a start-up cost (the fastest measured explanation job: interpreter, torch
import, model restore) + the median rate of the measured jobs of its type and model family (`lstm`,
`cnn`, `han`, `transformer`, ...; of its type alone where the family was not measured) x its units,
from the dataset's `stats.json` (tokens = n x mean length). Jobs of a type never measured, or of a
dataset never preprocessed, are counted as unpredicted. The plan is `snakemake --dry-run` of the
config. Wall time on N cores assumes the scheduler keeps N / threads jobs busy: total job-seconds /
(N / threads), and never less than the longest job.

    python benchmarks/cost_model.py --measured results [other results folders] [--configfile overlay.yaml] [--out benchmarks/cost_model.md]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from attnexp.config import training_settings, validate_config  # noqa: E402
from attnexp.plan import model_spec  # noqa: E402

QUADRATIC = {("explain", "loo")}
ERASER_PASSES = 70  # config.yaml faithfulness: the battery costs ~70 + n forward passes per instance
TRAINING_TOKENS = {"preprocess_dataset", "build_embeddings"}
ALL_SPLITS = {"export_attention"}
# job types that always count as compute, priced or not
HEAVY = {"train_model", "explain", "jw_permutation", "jw_adversarial", "ss_interventions", "faithfulness_eraser",
         "attention_attribution_heads", "attention_attribution_graphs", "export_attention", "preprocess_dataset", "build_embeddings"}


def job_type(rule: str, wildcards: dict) -> tuple[str, str | None]:
    return (rule, wildcards.get("method")) if rule == "explain" else (rule, None)


def family(config: dict, dataset: str, model: str | None) -> str:
    if model is None:
        return "-"
    spec = model_spec(config, dataset, model)
    return {"flat": spec.encoder, "qa": f"qa-{spec.encoder}", "hierarchical": spec.name.split("-")[0], "transformer": "transformer"}[spec.family]


def tokens(stats: dict, split: str) -> float:
    part = stats["splits"][split]
    return part["n"] * part["mean_length"]


def units(kind: tuple[str, str | None], stats: dict, epochs: float | None) -> float:
    rule, method = kind
    if rule == "train_model":
        return tokens(stats, "train") * epochs
    if rule in TRAINING_TOKENS:
        return tokens(stats, "train")
    if rule in ALL_SPLITS:
        return sum(tokens(stats, s) for s in stats["splits"])
    test = tokens(stats, "test")
    if (rule, method) in QUADRATIC:
        return test * stats["splits"]["test"]["mean_length"]
    if rule == "faithfulness_eraser":
        return test * (ERASER_PASSES + stats["splits"]["test"]["mean_length"])
    return test


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
    """Every measured job of one results folder: type, family, seconds, units."""
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
        with path.open() as f:
            seconds = float(next(csv.DictReader(f, delimiter="\t"))["s"])
        data = stats(wildcards["dataset"])
        if data is None or wildcards["dataset"] not in config["datasets"]:
            continue
        kind = job_type(rule, wildcards)
        jobs.append({"type": kind, "family": family(config, wildcards["dataset"], wildcards.get("model")), "seconds": seconds, "units": units(kind, data, None)})
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
        jobs.append({"type": kind, "family": fam, "seconds": timing["train_seconds"], "units": units(kind, data, timing["epochs_run"])})
    return jobs


def planned_jobs(configfile: Path | None) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job `snakemake --dry-run` plans from scratch for the config."""
    with tempfile.TemporaryDirectory() as workdir:
        command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", "none", "--directory", workdir, "-n", "--cores", "8"]
        if configfile:
            command += ["--configfile", str(configfile)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    jobs, rule = [], None
    for line in out.splitlines():
        if m := re.match(r"^(?:local)?rule (\w+):", line):
            rule = m.group(1)
            jobs.append((rule, {}))
        elif rule and (m := re.match(r"^\s+wildcards: (.*)", line)):
            jobs[-1] = (rule, dict(item.split("=", 1) for item in m.group(1).split(", ")))
    return jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", type=Path, nargs="+", required=True, help="results folders of runs that happened")
    parser.add_argument("--configfile", type=Path, default=None, help="an overlay of config.yaml whose plan is costed")
    parser.add_argument("--threads", type=int, default=2, help="threads per job (train.threads)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    if args.configfile:
        from snakemake.utils import update_config

        update_config(config, yaml.safe_load(args.configfile.read_text()))
    config = validate_config(config)
    measured = [job for folder in args.measured for job in measured_jobs(folder, config)]
    # every job pays the interpreter, torch import and model restore before any work: the fastest
    # measured explanation job's seconds; the rest scales with the units
    overhead = min((j["seconds"] for j in measured if j["type"][0] == "explain"), default=0.0)
    rates = defaultdict(list)
    for job in measured:
        if job["units"] > 0:
            rate = max(job["seconds"] - (0.0 if job["type"][0] == "train_model" else overhead), 0.0) / job["units"]
            rates[(job["type"], job["family"])].append(rate)
            rates[(job["type"], None)].append(rate)
    all_stats = {}
    for folder in args.measured:
        for path in folder.glob("data/*/stats.json"):
            all_stats.setdefault(path.parts[-2], json.loads(path.read_text()))

    measured_types = {kind for kind, _ in rates}
    by_type = defaultdict(lambda: {"jobs": 0, "seconds": 0.0, "unpredicted": 0, "longest": 0.0})
    light = defaultdict(int)  # job types never measured: aggregations, figures, downloads (seconds each)
    for rule, wildcards in planned_jobs(args.configfile):
        kind = job_type(rule, wildcards)
        if kind not in measured_types and rule not in HEAVY:
            light[rule] += 1
            continue
        row = by_type[kind]
        row["jobs"] += 1
        dataset, model = wildcards.get("dataset"), wildcards.get("model")
        rate_list = None
        if dataset in all_stats and dataset in config["datasets"]:
            rate_list = rates.get((kind, family(config, dataset, model) if model else "-")) or rates.get((kind, None))
        if not rate_list:
            row["unpredicted"] += 1
            continue
        epochs = training_settings(config, dataset, model)["epochs"] if rule == "train_model" else None
        seconds = (0.0 if rule == "train_model" else overhead) + statistics.median(rate_list) * units(kind, all_stats[dataset], epochs)
        row["seconds"] += seconds
        row["longest"] = max(row["longest"], seconds)

    total = sum(r["seconds"] for r in by_type.values())
    longest = max((r["longest"] for r in by_type.values()), default=0.0)
    planned = sum(r["jobs"] for r in by_type.values())
    unpredicted = sum(r["unpredicted"] for r in by_type.values())
    lines = [
        f"Cost model of `snakemake --cores N` ({args.configfile or 'config.yaml'}), from {len(measured)} measured jobs in "
        f"{', '.join(str(f) for f in args.measured)}; {args.threads} threads per job; {overhead:.1f} s start-up per job "
        f"(training: timing.json's own seconds). Datasets with a stats.json there: {', '.join(sorted(all_stats))}.",
        "",
        "| job type | planned jobs | priced | job-hours priced | share |",
        "|---|---|---|---|---|",
    ]
    for kind, row in sorted(by_type.items(), key=lambda item: (-item[1]["seconds"], item[0][0], item[0][1] or "")):
        name = kind[0] + (f" ({kind[1]})" if kind[1] else "")
        share = f"{row['seconds'] / total:.0%}" if total else "–"
        lines.append(f"| {name} | {row['jobs']} | {row['jobs'] - row['unpredicted']} | {row['seconds'] / 3600:,.2f} | {share} |")
    lines += [
        "",
        f"Priced: {planned - unpredicted} of {planned} compute jobs, {total:,.0f} job-seconds ({total / 3600:,.1f} h). "
        f"Unpriced: {unpredicted} compute jobs (a dataset without a stats.json in the measured folders, or a job type and "
        f"family never measured), and {sum(light.values())} light jobs (tables, figures, downloads; seconds each).",
        "",
        "| machine | expected wall time of the priced jobs |",
        "|---|---|",
    ]
    for cores in (2, 8):
        slots = max(1, cores // args.threads)
        lines.append(f"| {cores} cores | {max(total / slots, longest) / 3600:,.1f} h |")
    lines.append("| one GPU | not measured (the measured jobs ran on CPU only) |")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
