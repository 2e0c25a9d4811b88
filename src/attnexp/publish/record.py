"""The run's record and reading a run folder: what rule `record_run` writes (`workflow_source`,
`write_run_record`: the effective config and `results/run/run.json`), and what the publisher reads
back (`read_run`: the tables of `PAGES`, the scorecard, the figures, the record; `job_commits`: the
commit each job ran under; `compute_by_stage`, `invocations`: compute and wall time)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd
import yaml

from attnexp import io
from attnexp.claims import concatenate, read_claims
from attnexp.papers import PAPERS
from attnexp.publish.contents import PAGES
from attnexp.scorecard import read_scorecard, same_data_stand_ins, scorecard
from attnexp.workflow import JOB_COMMIT, checkout_commit

REPO = Path(__file__).resolve().parents[3]  # the checkout (this file is src/attnexp/publish/record.py)
RECORD, RUN_CONFIG = "results/run/run.json", "results/run/config.yaml"


class PublishError(ValueError):
    """Bad input or a refused overwrite: one line, exit status `code`."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# ----------------------------------------------------------------------------- the run's record


def config_digest(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown_path(path: str | Path, base: str | Path) -> str:
    """A path relative to `base` when inside it, else its file name."""
    path, base = Path(os.path.abspath(path)), Path(os.path.abspath(base))
    return path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name


def file_sha256(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def workflow_source(basedir: str | Path, configfiles, overrides) -> dict:
    """What made a run besides its config: the commit of the workflow's checkout (and whether it had
    uncommitted changes), the config files (the workflow's config.yaml, then each --configfile, by
    their path in the checkout or their name) and the --config overrides."""
    commit, dirty = checkout_commit(basedir)
    files = [Path(basedir) / "config.yaml", *map(Path, configfiles)]
    return {
        "commit": commit,
        "uncommitted_changes": dirty,
        "configfiles": [
            {
                "path": _shown_path(f, basedir),
                "in_checkout": Path(os.path.abspath(f)).is_relative_to(os.path.abspath(basedir)),
                "sha256": file_sha256(f),
            }
            for f in files
        ],
        "config_overrides": {str(k): str(v) for k, v in dict(overrides or {}).items()},
    }


def write_run_record(
    config: dict, source: dict, targets, snakemake_version: str, out_config: str | Path, out_record: str | Path
) -> dict:
    """results/run/config.yaml (the effective config) and results/run/run.json (its digest, the
    source, the Snakemake version and every target of the run's `all`)."""
    config = json.loads(json.dumps(dict(config), default=str))
    io.write_text(out_config, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    record = {
        "config_digest": config_digest(config),
        **source,
        "snakemake": snakemake_version,
        "targets": sorted(set(targets)),
    }
    io.write_json(out_record, record)
    return record


# ----------------------------------------------------------------------------- reading a run folder


@dataclass
class Run:
    root: Path
    tables: dict[str, str]  # name -> Markdown text, for the tables of PAGES present
    card: pd.DataFrame | None  # the scorecard
    card_source: str  # where it came from
    pngs: list[str]  # every PNG under results/figures, relative to it
    record: dict | None
    config: dict | None
    config_text: bytes | None
    notes: list[str]  # problems reading the run
    job_commits: dict[str, list[str]] = field(default_factory=dict)  # `job_commits`


def _claims_order(path: Path) -> tuple[int, str]:
    order = ("performance", *PAPERS)
    return (order.index(path.stem) if path.stem in order else len(order), path.stem)


def _load_scorecard(
    root: Path, notes: list[str], same_data: frozenset[str] = frozenset()
) -> tuple[pd.DataFrame | None, str]:
    tables = root / "results" / "tables"
    try:
        if (tables / "scorecard.csv").is_file():
            return read_scorecard(tables / "scorecard.csv"), "results/tables/scorecard.csv"
        if (tables / "claims.csv").is_file():
            notes.append(
                "no scorecard (results/tables/scorecard.csv): the claims of results/tables/claims.csv were scored here"
            )
            return scorecard(read_claims(tables / "claims.csv"), same_data), "results/tables/claims.csv"
        files = sorted((root / "results" / "claims").glob("*.csv"), key=_claims_order)
        if files:
            notes.append(
                f"no claims table (results/tables/claims.csv): the claims of {', '.join(f'results/claims/{f.name}' for f in files)} were scored here"
            )
            return scorecard(concatenate(files), same_data), "results/claims/*.csv"
    except (OSError, ValueError) as err:
        notes.append(f"the claims could not be read ({err})")
        return None, "none"
    notes.append("no claims: neither results/tables/scorecard.csv nor results/claims/*.csv exists")
    return None, "none"


def read_run(root: str | Path) -> Run:
    root = Path(root)
    results = root / "results"
    if not results.is_dir():
        raise PublishError(f"{root}: no results/ folder (not a run folder, or nothing has run in it yet)")
    notes: list[str] = []
    tables = {}
    for page in PAGES.values():
        for table in page.tables:
            path = results / "tables" / f"{table.name}.md"
            if path.is_file():
                tables[table.name] = path.read_text(encoding="utf-8")
    figures = results / "figures"
    pngs = sorted(p.relative_to(figures).as_posix() for p in figures.rglob("*.png")) if figures.is_dir() else []
    record = config = config_text = None
    if (root / RECORD).is_file():
        try:
            record = io.read_json(root / RECORD)
            config_text = (root / RUN_CONFIG).read_bytes()
            config = yaml.safe_load(config_text)
        except (OSError, ValueError, yaml.YAMLError) as err:
            notes.append(f"the run record could not be read ({err})")
            record = config = config_text = None
    card, card_source = _load_scorecard(
        root, notes, same_data_stand_ins(config) if isinstance(config, dict) else frozenset()
    )
    if not tables and card is None and not pngs:
        raise PublishError(
            f"{root}: no results to publish: none of results/tables/*.md, results/claims/*.csv, results/figures/**/*.png"
        )
    return Run(root, tables, card, card_source, pngs, record, config, config_text, notes, job_commits(root))


NOT_RECORDED = "not recorded"


# Where the jobs write their logs, under results/ (each log opens with the commit that ran the job,
# `attnexp.workflow.log_to`): every rule's under logs/, except a training's, which lies beside its model
# (rules/train.smk). Snakemake's target rule `all` runs no script and writes none.
JOB_LOGS = ("logs/**/*.log", "models/**/train.log")


def job_commits(root: str | Path) -> dict[str, list[str]]:
    """The commit each job of the run folder ran under, from the first line of its log (`JOB_LOGS`):
    {commit in words: [its logs, relative to results/]}. A log without that line (a job run before
    jobs recorded their commit) counts under `NOT_RECORDED`."""
    found: dict[str, list[str]] = {}
    base = Path(root) / "results"
    for path in sorted({path for pattern in JOB_LOGS for path in base.glob(pattern)}):
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
        commit = first[len(JOB_COMMIT) :] if first.startswith(JOB_COMMIT) else NOT_RECORDED
        found.setdefault(commit, []).append(path.relative_to(base).as_posix())
    return found


def log_stage(log: str) -> str:
    """The stage a job log (as `job_commits` names it) belongs to: its folder under logs/ (the rule,
    or the paper's stage), or `train_model` for a training's log."""
    parts = log.split("/")
    return "train_model" if parts[0] == "models" else parts[1].removesuffix(".log")


def job_seconds(root: Path) -> list[tuple[str, float]]:
    """(stage, seconds) of every benchmark file (results/benchmarks/<rule>/**.tsv, its `s` column): the
    stage is the rule, the explanation jobs by method (`explain (loo)`)."""
    jobs = []
    base = root / "results" / "benchmarks"
    for path in sorted(base.rglob("*.tsv")):
        lines = path.read_text(encoding="utf-8").splitlines()
        try:
            column = lines[0].split("\t").index("s")
            seconds = sum(float(line.split("\t")[column]) for line in lines[1:] if line.strip())
        except (IndexError, ValueError):
            continue
        rule = path.relative_to(base).parts[0]
        jobs.append((f"{rule} ({path.stem})" if rule == "explain" else rule, seconds))
    return jobs


def compute_by_stage(root: str | Path, jobs: list[tuple[str, float]] | None = None) -> pd.DataFrame:
    """Jobs and compute seconds per stage (`job_seconds`, read from `root` unless given), the most
    expensive first."""
    jobs = pd.DataFrame(job_seconds(Path(root)) if jobs is None else jobs, columns=["stage", "seconds"])
    table = jobs.groupby("stage", sort=True).agg(jobs=("seconds", "size"), seconds=("seconds", "sum")).reset_index()
    table["share"] = table["seconds"] / max(table["seconds"].sum(), 1e-9)
    return table.sort_values(["seconds", "stage"], ascending=[False, True], kind="stable").reset_index(drop=True)


_DATE = re.compile(r"^\s*Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]", re.M)


_COMMAND = re.compile(r"^\s*Command: (.*)$", re.M)


def invocations(root: str | Path) -> list[dict]:
    """The Snakemake invocations that ran jobs, from their logs (.snakemake/log): start, end, wall
    seconds (start to the last timestamp), jobs finished, and the targets of the command line."""
    found = []
    for path in sorted((Path(root) / ".snakemake" / "log").glob("*.snakemake.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        start, stamps = _DATE.search(text), _STAMP.findall(text)
        if not stamps or "Finished job" not in text:
            continue
        # the start Snakemake's header gives, else its log's name (a log written with `--quiet host`)
        begin = (
            datetime.strptime(start.group(1), "%Y-%m-%d %H:%M:%S")
            if start
            else datetime.strptime(path.name.split(".")[0], "%Y-%m-%dT%H%M%S")
        )
        end = datetime.strptime(" ".join(stamps[-1].split()), "%a %b %d %H:%M:%S %Y")
        command = _COMMAND.search(text)
        targets = command.group(1).split(" -- ", 1)[1].split() if command and " -- " in command.group(1) else []
        found.append(
            {
                "start": begin.strftime("%Y-%m-%d %H:%M:%S"),
                "end": end.strftime("%Y-%m-%d %H:%M:%S"),
                "seconds": max(0.0, (end - begin).total_seconds()),
                "jobs": len(re.findall(r"^Finished job", text, re.M)),
                "targets": " ".join(targets) or ("all" if command else NOT_RECORDED),
            }
        )
    return found


def wall_time(root: Path) -> tuple[float, int, str] | None:
    """Seconds from start to last timestamp, summed over the Snakemake logs (.snakemake/log) of the
    invocations that ran jobs; their count; the last timestamp."""
    found = invocations(root)
    return (
        (sum(i["seconds"] for i in found), len(found), max(i["end"] for i in found)) if found else None
    )  # overlapping invocations end out of order
