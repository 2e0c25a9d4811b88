"""What a run will cost before it starts: the jobs `snakemake --dry-run` plans for a config, priced
with seconds per unit of work measured on jobs that ran.

    python -m attnexp.cost [--configfile overlay.yaml ...] [--directory RUN] [--cores 2] [--rates benchmarks/cost_rates.json]

Without `--directory` the plan is a whole run from scratch; with it, the jobs still to run in that run
folder (as `snakemake --directory RUN` would run them), and the config's relative paths (a dataset's
own files) are read from there.

Each measured job gives a rate, seconds per unit of work, where the unit is what the job's cost grows
with:

| job type | unit |
|---|---|
| train_model | training tokens x the protocol's epochs (so the rate carries what early stopping saves) |
| explain loo (the explain_together job: attention, gradient and leave-one-out) | test tokens x mean test length (every instance re-run once per token) |
| explain_together with more methods (`explain.together`) | its leave-one-out, plus each added method at its own job's rate |
| faithfulness_eraser | test tokens x (70 + mean test length) (~70 + n forward passes per instance) |
| other per-run jobs (explain by method, J&W, S&S, W&P, attention attribution, export) | test tokens (export: every split's) |
| preprocess_dataset, build_embeddings | training tokens |

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
import csv
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

__all__ = [
    "job_type",
    "job_types",
    "family",
    "tokens",
    "units",
    "parse_benchmark_path",
    "measured_jobs",
    "planned_jobs",
    "run_sizes",
    "fit_rates",
    "merge_rates",
    "declared_sizes",
    "price",
    "price_markdown",
    "RATES_PATH",
    "main",
]

REPO = Path(__file__).resolve().parents[2]
RATES_PATH = REPO / "benchmarks" / "cost_rates.json"
QUADRATIC = {("explain", "loo")}
TOGETHER_AS_LOO = ("attention", "gradient", "loo")  # explain_together's default methods, priced as its leave-one-out
PRETRAINED = "pretrained-"  # the family of a pretrained encoder, never priced at another family's rate
ERASER_PASSES = 70  # config.yaml faithfulness: the battery costs ~70 + n forward passes per instance
TRAINING_TOKENS = {"preprocess_dataset", "build_embeddings"}
ALL_SPLITS = {"export_attention"}
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


def _together(config: dict) -> tuple[str, ...]:
    """The explain_together job's methods in a run's config (a run from before `explain.together`: the three)."""
    return tuple(config["explain"].get("together", TOGETHER_AS_LOO))


def job_types(rule: str, wildcards: dict, config: dict) -> tuple[tuple[str, str | None], ...]:
    """The job types a planned job is priced as: its own, except an explain_together job computing more
    than the three, priced as its leave-one-out plus each added method's own job (IG, say)."""
    if rule != "explain_together":
        return (job_type(rule, wildcards),)
    together = _together(config)
    if "loo" not in together:  # each method at its own job's rate
        return tuple(("explain", method) for method in together)
    return (("explain", "loo"), *(("explain", method) for method in together if method not in TOGETHER_AS_LOO))


def job_type(rule: str, wildcards: dict) -> tuple[str, str | None]:
    if (
        rule == "explain_together"
    ):  # attention, gradient and leave-one-out: leave-one-out's cost, the others add two passes
        return ("explain", "loo")
    return (rule, wildcards.get("method")) if rule == "explain" else (rule, None)


def family(config: dict, dataset: str, model: str | None) -> str:
    from attnexp.plan import model_spec

    if model is None:
        return "-"
    spec = model_spec(config, dataset, model)
    named = {
        "flat": spec.encoder,
        "qa": f"qa-{spec.encoder}",
        "hierarchical": spec.name,  # its encoder sets the cost: han-rnn runs several times slower than han-none
        "transformer": "transformer",
        "pretrained": PRETRAINED + spec.encoder,  # each encoder its own size
    }
    return named.get(spec.family, spec.family)  # a family registered by a plug-in: its name


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
        if rule == "explain_together" and set(_together(config)) != set(TOGETHER_AS_LOO):
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


def split_sizes(stats: dict) -> dict:
    """What pricing needs of a dataset's `stats.json`: each split's instances and mean length."""
    return {"splits": {s: {"n": p["n"], "mean_length": p["mean_length"]} for s, p in stats["splits"].items()}}


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
            _price_job(by_type[kind], kind, rule, wildcards, table, datasets, config, start_up)
    return dict(by_type), dict(light), overhead


def _price_job(row: dict, kind, rule: str, wildcards: dict, table: dict, datasets: dict, config: dict, start_up: float):
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
