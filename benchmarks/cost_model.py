"""A measured cost model: seconds per unit of work from the jobs of run folders that happened,
written as the rates file `python -m attnexp.cost` prices a plan with (`benchmarks/cost_rates.json`),
and the plan of one config priced with them (`attnexp.cost_units` describes the units, `attnexp.cost` the pricing).

    python benchmarks/cost_model.py --measured <run>/results [<run>/results ...] [--configfile overlay.yaml] \
        [--threads 1] --about "<date>, <machine kind>, <runs>" --rates-out benchmarks/cost_rates.json --out benchmarks/cost_model.md

`--rates benchmarks/cost_rates.json` in place of `--measured` prices a plan with rates fitted before (the
config changed, the measurements did not); both together add the rates of the model families the rates
file never measured (a pretrained encoder's run) and keep every rate it has:

    python benchmarks/cost_model.py --rates benchmarks/cost_rates.json --measured <run>/results \
        --about "<date>, <machine kind>, <run>" --rates-out benchmarks/cost_rates.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


from attnexp.config import validate_config  # noqa: E402

# the helpers tests/test_cost_model.py reads here are imported with the ones this script calls
from attnexp.cost import planned_jobs, price, price_markdown  # noqa: E402
from attnexp.cost_rates import (  # noqa: E402, F401
    fit_rates,
    measured_jobs,
    merge_rates,
    parse_benchmark_path,
)
from attnexp.cost_units import job_type, units  # noqa: E402, F401
from attnexp.publish.record import RUN_CONFIG  # noqa: E402


def run_config(results: Path, default: dict) -> dict:
    """The config a measured run ran with (its recorded effective config, `RUN_CONFIG`), else `default`."""
    path = results.parent / RUN_CONFIG  # RUN_CONFIG is relative to the run folder, `results`' parent
    return validate_config(yaml.safe_load(path.read_text())) if path.is_file() else default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", type=Path, nargs="+", help="results folders of runs that happened")
    parser.add_argument(
        "--rates",
        type=Path,
        help="a rates file fitted before (benchmarks/cost_rates.json); with --measured, the measured runs add the "
        "model families it lacks",
    )
    parser.add_argument("--configfile", type=Path, default=None, help="an overlay of config.yaml whose plan is costed")
    parser.add_argument("--threads", type=int, default=2, help="threads per job (train.threads)")
    parser.add_argument(
        "--about", default="", help="how the rates file names the measurement (date, machine kind, runs)"
    )
    parser.add_argument(
        "--rates-out", type=Path, default=None, help="write the measured rates here (benchmarks/cost_rates.json)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    if args.configfile:
        from snakemake.utils import update_config

        update_config(config, yaml.safe_load(args.configfile.read_text()))
    config = validate_config(config)
    if not (args.rates or args.measured):
        parser.error("one of --measured and --rates is required")
    if args.measured:
        measured = [job for folder in args.measured for job in measured_jobs(folder, run_config(folder, config))]
        datasets = {}
        for folder in args.measured:
            for path in sorted(folder.glob("data/*/stats.json")):
                datasets.setdefault(path.parts[-2], json.loads(path.read_text()))
        rates = fit_rates(measured, datasets, args.about or f"{len(measured)} measured jobs")
        source = f"{len(measured)} measured jobs"
    if args.rates:
        fitted = json.loads(args.rates.read_text())
        rates = merge_rates(fitted, rates) if args.measured else fitted
        source = f"the rates of {args.rates.name}" + (f" and {source}" if args.measured else "")
    datasets = rates["datasets"]
    if args.rates_out:
        args.rates_out.write_text(json.dumps(rates, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    by_type, light, overhead = price(planned_jobs(*([args.configfile] if args.configfile else [])), rates, config)
    lines = [
        f"Cost model of `snakemake --cores N` ({args.configfile or 'config.yaml'}), from {source} "
        f"({rates['about']}); {args.threads} threads per job; {overhead:.1f} s start-up per job "
        f"(training: timing.json's own seconds). Datasets with measured sizes: {', '.join(sorted(datasets))}.",
        "",
        *price_markdown(by_type, light, (2, 8), args.threads),
        "| one GPU | not measured (the measured jobs ran on CPU only) |",
    ]
    from benchmark_output import emit  # here: tests load this file as a module, without benchmarks/ on the path

    emit(lines, args.out)


if __name__ == "__main__":
    main()
