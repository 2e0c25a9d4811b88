"""What a run will cost before it starts: the jobs `snakemake --dry-run` plans for a config, priced
with seconds per unit of work measured on jobs that ran.

    python -m attnexp.cost [--configfile overlay.yaml ...] [--directory RUN] [--cores 2] [--rates benchmarks/cost_rates.json]

Without `--directory` the plan is a whole run from scratch; with it, the jobs still to run in that run
folder (as `snakemake --directory RUN` would run them), and the config's relative paths (a dataset's
own files) are read from there.

Each measured job gives a rate, seconds per unit of work, where the unit is what the job's cost grows
with (`attnexp.cost_units`; `attnexp.cost_rates` fits the rates).

A planned job's seconds = a start-up cost (the fastest measured explanation job: interpreter, torch
import, model restore) + the median rate of the measured jobs of its type and model family (`lstm`,
`cnn`, `han`, `transformer`, ...) on its dataset, else on any dataset, else of its type alone (a
rough guess, counted apart; never for a pretrained encoder, `pretrained-<encoder>`, whose cost per
token its size sets, tens of times a small model's) x its units, from the dataset's split sizes (as
measured, or as the config declares them in `expected` where it changes a split, e.g. with
`test_fraction`). A job of a type never measured, or of a dataset whose size was never measured, is
counted as not priced, and said so. Wall time on N cores: the job-seconds over the jobs that run side
by side (N / threads per job), never less than the longest job.

`benchmarks/cost_model.py` measures the rates from run folders and writes the rates file
(`benchmarks/cost_rates.json`) this command reads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from attnexp.cost_units import PRETRAINED, family, job_types, split_sizes, units

__all__ = [
    "planned_jobs",
    "run_sizes",
    "declared_sizes",
    "price",
    "wall_seconds",
    "price_markdown",
    "RATES_PATH",
    "main",
]

REPO = Path(__file__).resolve().parents[2]
RATES_PATH = REPO / "benchmarks" / "cost_rates.json"
# job types that always count as compute, priced or not
HEAVY = {
    "train_model",
    "explain",
    "explain_together",
    "jw_permutation",
    "jw_adversarial",
    "ss_interventions",
    "faithfulness_eraser",
    "attention_attribution_heads",
    "attention_attribution_graphs",
    "export_attention",
    "preprocess_dataset",
    "build_embeddings",
}


def declared_sizes(datasets: dict[str, dict], config: dict) -> dict[str, dict]:
    """The measured split sizes, each split whose size the config declares otherwise (`datasets.<name>.expected`,
    instances per label, beyond its `size_tolerance`) at the declared size, its mean length as measured: a config
    that changes a split (`test_fraction`) is priced at the size it states, before it is preprocessed."""
    sizes = {}
    for name, measured in datasets.items():
        settings = config["datasets"].get(name) or {}
        tolerance = settings.get("size_tolerance") or 0.0
        # a mirror's stand-in files make splits of other sizes than the published ones the config declares
        stand_in = {
            s for src in settings.get("sources") or [] for s in (src.get("substitute") or {}).get("splits_affected", [])
        }
        splits = {s: dict(part) for s, part in measured["splits"].items()}
        for split, by_label in (settings.get("expected") or {}).items():
            declared = sum(by_label.values())
            if split in splits and split not in stand_in and abs(declared - splits[split]["n"]) > tolerance * declared:
                splits[split]["n"] = declared
        sizes[name] = {**measured, "splits": splits}
    return sizes


def run_sizes(results: Path, config: dict) -> dict[str, dict]:
    """The split sizes of the config's datasets already preprocessed in a run's results folder."""
    sizes = {}
    for name in config["datasets"]:
        path = results / "data" / name / "stats.json"
        if path.is_file():
            sizes[name] = split_sizes(json.loads(path.read_text(encoding="utf-8")))
    return sizes


def planned_jobs(
    *configfiles: Path, config_overrides: list[str] = (), directory: Path | None = None
) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job `snakemake --dry-run` plans for the config that writes outputs (all
    but the target rule `all`): from scratch, or what is still to run in the run folder `directory`."""
    # from scratch: an empty folder of its own; else the run folder as it stands
    with contextlib.nullcontext(directory) if directory is not None else tempfile.TemporaryDirectory() as workdir:
        command = [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--workflow-profile",
            "none",
            "--directory",
            workdir,
            "-n",
            "--cores",
            "8",
            # a job cut off in the run folder is run again (as the default profile has it)
            "--rerun-incomplete",
        ]
        if configfiles:
            command += ["--configfile", *(str(Path(f).resolve()) for f in configfiles)]
        if config_overrides:
            command += ["--config", *config_overrides]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise ValueError("the dry run failed: " + (lines[-1] if lines else f"exit status {done.returncode}"))
    # (rule, wildcards, whether it writes outputs) per job block
    blocks: list[tuple[str, dict, bool]] = []
    for line in done.stdout.splitlines():
        if m := re.match(r"^(?:local)?rule (\w+):", line):
            blocks.append((m.group(1), {}, False))
        elif blocks and (m := re.match(r"^\s+wildcards: (.*)", line)):
            blocks[-1] = (blocks[-1][0], dict(item.split("=", 1) for item in m.group(1).split(", ")), blocks[-1][2])
        elif blocks and re.match(r"^\s+output: ", line):
            blocks[-1] = (*blocks[-1][:2], True)
    # a target rule's job (`all`) writes nothing and runs nothing: not a job of the plan here, though
    # Snakemake's dry run and progress display count it (one more than this)
    return [(rule, wildcards) for rule, wildcards, writes in blocks if writes]


def price(plan: list[tuple[str, dict]], rates: dict, config: dict) -> tuple[dict, dict, float]:
    """The plan priced: per job type {jobs, seconds, unpriced, longest}, the light jobs by rule
    (never measured, seconds each), and the start-up seconds."""
    table = {(r["rule"], r["method"], r["family"], r["dataset"]): r["seconds_per_unit"] for r in rates["rates"]}
    measured_types = {(r["rule"], r["method"]) for r in rates["rates"]}
    datasets, overhead = declared_sizes(rates["datasets"], config), rates["overhead_seconds"]
    by_type = defaultdict(lambda: {"jobs": 0, "seconds": 0.0, "unpriced": 0, "borrowed": 0, "longest": 0.0})
    light = defaultdict(int)
    for rule, wildcards in plan:
        kinds = job_types(rule, wildcards, config)
        if kinds[0] not in measured_types and rule not in HEAVY:
            light[rule] += 1
            continue
        for kind in kinds:  # a job pays one start-up, with its first type
            start_up = 0.0 if rule == "train_model" or kind != kinds[0] else overhead
            _price_job(
                by_type[kind],
                kind,
                rule=rule,
                wildcards=wildcards,
                table=table,
                datasets=datasets,
                config=config,
                start_up=start_up,
            )
    return dict(by_type), dict(light), overhead


def _price_job(
    row: dict,
    kind: tuple[str, str | None],
    *,
    rule: str,
    wildcards: dict,
    table: dict,
    datasets: dict,
    config: dict,
    start_up: float,
) -> None:
    """Add one planned job of type `kind` to its row: `start_up` + the rate of its type, family and
    dataset (else the family's on any dataset, else the type's) x its units; unpriced without one."""
    from attnexp.config import training_settings

    row["jobs"] += 1
    dataset, model = wildcards.get("dataset"), wildcards.get("model")
    rate = None
    if dataset in datasets and dataset in config["datasets"]:
        fam = family(config, dataset, model) if model else "-"
        rate = table.get((*kind, fam, dataset), table.get((*kind, fam, None)))
        if rate is None and (*kind, None, None) in table and not fam.startswith(PRETRAINED):
            # a family never measured: the job type's median rate
            rate = table[(*kind, None, None)]
            row["borrowed"] += 1
    if rate is None:
        row["unpriced"] += 1
        return
    epochs = training_settings(config, dataset, model)["epochs"] if rule == "train_model" else None
    seconds = start_up + rate * units(kind, datasets[dataset], epochs)
    row["seconds"] += seconds
    row["longest"] = max(row["longest"], seconds)


def wall_seconds(by_type: dict, cores: int, threads: int) -> float:
    total = sum(r["seconds"] for r in by_type.values())
    longest = max((r["longest"] for r in by_type.values()), default=0.0)
    return max(total / max(1, cores // max(1, threads)), longest)


def _hours(seconds: float) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def price_markdown(by_type: dict, light: dict, cores: tuple[int, ...], threads: int) -> list[str]:
    total = sum(r["seconds"] for r in by_type.values())
    planned = sum(r["jobs"] for r in by_type.values())
    unpriced = sum(r["unpriced"] for r in by_type.values())
    borrowed = sum(r["borrowed"] for r in by_type.values())
    lines = [
        "| job type | planned jobs | priced | of those, at another family's rate | job-hours priced | share |",
        "|---|---|---|---|---|---|",
    ]
    for kind, row in sorted(by_type.items(), key=lambda item: (-item[1]["seconds"], item[0][0], item[0][1] or "")):
        name = kind[0] + (f" ({kind[1]})" if kind[1] else "")
        share = f"{row['seconds'] / total:.0%}" if total else "–"
        lines.append(
            f"| {name} | {row['jobs']} | {row['jobs'] - row['unpriced']} | {row['borrowed']} | {row['seconds'] / 3600:,.2f} | {share} |"
        )
    lines += [
        "",
        f"Priced: {planned - unpriced} of {planned} compute jobs, {total:,.0f} job-seconds ({total / 3600:,.1f} h); "
        f"{borrowed} of them at the median rate of their job type, their model family never measured (a rough guess: "
        "a hierarchical or long-document model costs more per token than a flat one). "
        f"Not priced: {unpriced} compute jobs (a dataset or a job type and model family never measured), and "
        f"{sum(light.values())} light jobs (tables, figures, downloads; seconds each).",
        "",
        "| machine | expected wall time of the priced jobs |",
        "|---|---|",
    ]
    lines += [f"| {n} cores | {_hours(wall_seconds(by_type, n, threads))} |" for n in cores]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnexp.cost", description="The expected cost of `snakemake` with a config, before it runs."
    )
    parser.add_argument(
        "--configfile", nargs="*", default=[], help="the overlays the run will use (as given to snakemake)"
    )
    parser.add_argument("--config", nargs="*", default=[], help="the --config key=value settings the run will use")
    parser.add_argument(
        "--directory",
        type=Path,
        help="a run folder (snakemake's --directory): price the jobs still to run there, reading the config's "
        "relative paths from it",
    )
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 8], help="the machines to price the plan for")
    parser.add_argument(
        "--rates", type=Path, default=RATES_PATH, help="the measured rates (benchmarks/cost_model.py writes them)"
    )
    args = parser.parse_args(argv)
    try:
        from attnexp.config import load_config

        try:
            rates = json.loads(args.rates.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{args.rates}: not a rates file ({err}); benchmarks/cost_model.py writes one") from None
        overlays = [Path(f).resolve() for f in args.configfile]
        if args.directory is not None and not args.directory.is_dir():
            raise ValueError(f"--directory {args.directory}: not a folder (expected a run folder)")
        with contextlib.chdir(args.directory or Path.cwd()):
            # the config's relative paths (a dataset's own files) are the run folder's, as in the run
            config = load_config(*overlays)
        plan = planned_jobs(*overlays, config_overrides=args.config, directory=args.directory)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.directory is not None:
        # the run's own split sizes (a dataset of the user's files has none in the rates file)
        rates = {**rates, "datasets": {**rates["datasets"], **run_sizes(args.directory / "results", config)}}
    by_type, light, _ = price(plan, rates, config)
    threads = config["train"]["threads"]
    command = "snakemake" + "".join(" --configfile " + f for f in args.configfile)
    if args.directory is not None:
        command += f" --directory {args.directory}"
    what = "jobs still to run" if args.directory is not None else "jobs"
    print(f"The plan of `{command}`: {len(plan)} {what}; {threads} thread(s) per job; rates: {rates['about']}\n")
    print("\n".join(price_markdown(by_type, light, tuple(args.cores), threads)))
    unsized = sorted({w["dataset"] for _, w in plan if w.get("dataset") and w["dataset"] not in rates["datasets"]})
    if unsized:
        targets = " ".join(f"results/data/{name}/stats.json" for name in unsized)
        print(
            f"\nNo split sizes for {', '.join(unsized)}, so its jobs are not priced: a dataset is measured when it "
            f"is preprocessed (seconds). Run `{command} {targets}`, then price the same command with --directory."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
