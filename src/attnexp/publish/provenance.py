"""The index's provenance block (`provenance_block`): how the run was made (the command and config files,
the config digest, the commit, the commits its jobs ran under), its compute and wall time, and the
notes for the top of the index where the run's config or commits are not this checkout's; and the
run's config as published (`without_local_folders`)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pandas as pd

from attnexp.markdown import to_markdown
from attnexp.publish.record import (
    NOT_RECORDED,
    RECORD,
    REPO,
    RUN_CONFIG,
    Run,
    compute_by_stage,
    config_digest,
    file_sha256,
    invocations,
    job_seconds,
    log_stage,
    wall_time,
)
from attnexp.publish.text import counted, duration

# config keys that name a folder of the machine that ran (not published: nothing in the results depends on it)
LOCAL_KEYS, LOCAL_FOLDER = ("mirror",), "DIR"


def without_local_folders(config_text: bytes) -> bytes:
    """The run's config with the folders of the machine that ran (`LOCAL_KEYS`) named `DIR`."""
    text = config_text.decode("utf-8")
    for key in LOCAL_KEYS:
        text = re.sub(
            rf"^{key}: (?!null$).*$",
            f"{key}: {LOCAL_FOLDER}  # a folder of the machine that ran, not published",
            text,
            flags=re.M,
        )
    return text.encode("utf-8")


def _made_with(run: Run) -> tuple[str, str]:
    """The Snakemake command (its config part) and the config files in words."""
    files = [f["path"] for f in run.record.get("configfiles", [])]
    overlays = files[1:]
    command = "snakemake --cores N" + "".join(f" --configfile {f}" for f in overlays)
    overrides = run.record.get("config_overrides") or {}
    if overrides:
        command += " --config " + " ".join(
            f"{k}={LOCAL_FOLDER if k in LOCAL_KEYS else v}" for k, v in sorted(overrides.items())
        )
    words = "`config.yaml`" + (" with " + ", ".join(f"`{f}`" for f in overlays) + " over it" if overlays else " alone")
    return command, words


@functools.cache
def _checkout_config(overlays: tuple[str, ...], overrides: tuple[tuple[str, str], ...]) -> dict | None:
    """The config this checkout's config.yaml with `overlays` (paths in it) and the run's --config
    `overrides` (a mirror folder: where the data come from, not a setting) gives; None when it cannot be read."""
    from snakemake.cli import parse_config  # the values as Snakemake read them from the command line

    from attnexp.config import load_config

    try:
        config = load_config(*[REPO / o for o in overlays])
        return {**config, **parse_config([f"{key}={value}" for key, value in overrides])}
    except Exception:  # noqa: BLE001 - any failure means: no comparison
        return None


def _same_plan_digest(config: dict | None) -> str | None:
    """The digest of `config` with each experiment's dataset and model selection replaced by the runs
    it selects (a selection left open means every enabled dataset of its task and every eligible
    model), so that a preset naming the default's choices one by one compares equal to the default;
    None for a config it cannot read."""
    from attnexp.plan import experiment_runs

    try:
        spelled = {
            key: {
                **section,
                "datasets": None,
                "models": None,
                "runs": [list(run) for run in experiment_runs(config, key)],
            }
            for key, section in config.items()
            if isinstance(section, dict) and "datasets" in section and "models" in section
        }
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return config_digest({**config, **spelled})


def _config_notes(record: dict, words: str, run_config: dict | None) -> list[str]:
    """Notes where the run's config is not the project's default, or not this checkout's."""
    notes = []
    digest = record.get("config_digest", "")
    overrides = tuple(sorted((record.get("config_overrides") or {}).items()))
    default = _checkout_config((), overrides)
    ours = _same_plan_digest(run_config)
    if default is not None and (ours is None or ours != _same_plan_digest(default)):
        notes.append(f"Made with another config than the project's default: {words} (config digest `{digest[:16]}`).")
    in_checkout = [f for f in record.get("configfiles", [])]
    if default is not None and in_checkout and all(f.get("in_checkout") for f in in_checkout):
        changed = [f["path"] for f in in_checkout if f.get("sha256") != file_sha256(REPO / f["path"])]
        now = _checkout_config(tuple(f["path"] for f in in_checkout[1:]), overrides)
        now = None if now is None else config_digest(now)
        if changed and now != digest:  # edits that change no setting (comments) are not worth a note
            notes.append(
                f"The config files changed since the run: this checkout's {', '.join(f'`{c}`' for c in changed)} "
                f"{'is' if len(changed) == 1 else 'are'} not the run's."
            )
        elif now is not None and now != digest:
            notes.append(
                "This checkout fills in other defaults (`schemas/config.schema.yaml`) than the run's config has."
            )
    return notes


def _record_rows(run: Run) -> tuple[list[tuple[str, str]], list[str]]:
    """The provenance rows of the run record (config, commit, Snakemake, outputs) and its notes."""
    record = run.record
    snake, words = _made_with(run)
    rows = [("made with", f"`{snake}` ({words})")]
    digest = record.get("config_digest", "")
    rows.append(
        (
            "config",
            f"digest `{digest[:16]}` (sha256 of the effective config); the effective config: [config.yaml](config.yaml) here, "
            f"`{RUN_CONFIG}` in the run folder",
        )
    )
    notes = _config_notes(record, words, run.config)
    commit, dirty = record.get("commit"), record.get("uncommitted_changes")
    shown = f"`{commit}`" + (" with uncommitted changes" if dirty else "") if commit else "unknown (not a git checkout)"
    rows.append(("commit", shown))
    if commit and not dirty and len(run.job_commits) <= 1:  # every job ran that commit's code
        rows.append(
            (
                "to reproduce",
                f"`git checkout {commit[:12]}`, then, in the checkout, the command above with `--directory` naming an empty folder "
                "(the same command resumes there after any stop)",
            )
        )
    if commit and dirty:
        notes.append(f"Made by commit `{commit[:12]}` with uncommitted changes.")
    rows.append(("Snakemake", str(record.get("snakemake", "unknown"))))
    targets = record.get("targets", [])
    present = sum((run.root / t).exists() for t in targets)
    rows.append(("outputs", f"{present} of the {len(targets)} outputs of the run's `all` exist"))
    return rows, notes


def _job_commit_rows(run: Run) -> tuple[list[tuple[str, str]], list[str]]:
    """The provenance row of the commits the jobs ran under, a table of them when there are several,
    and the note for the top of the index."""
    commits = run.job_commits
    total = sum(map(len, commits.values()))
    if not commits:
        return [], []
    if len(commits) == 1:
        ((commit, logs),) = commits.items()
        if commit == NOT_RECORDED:
            return [("jobs", f"{counted(total, 'job log')}; none names the commit it ran under")], []
        return [
            ("jobs", f"every one of the {counted(total, 'job')} ran at commit `{commit}` (the first line of its log)")
        ], []
    rows = [
        (
            "jobs",
            f"{counted(total, 'job')} under {len(commits)} commits: "
            + "; ".join(f"`{c}` {len(logs)}" for c, logs in sorted(commits.items())),
        )
    ]
    note = (
        f"**Mixed commits.** The jobs of this run ran under {len(commits)} different commits (published with "
        "`--allow-mixed-commits`); the provenance lists which jobs ran under which."
    )
    return rows, [note]


def _job_commit_table(run: Run) -> list[str]:
    """Which rules' jobs ran under which commit, when there are several."""
    if len(run.job_commits) < 2:
        return []
    rows = []
    for commit, logs in sorted(run.job_commits.items()):
        stages: dict[str, int] = {}
        for log in logs:
            stage = log_stage(log)
            stages[stage] = stages.get(stage, 0) + 1
        rows.append(
            {
                "commit": commit,
                "jobs": len(logs),
                "rules (jobs)": ", ".join(f"{k} ({v})" for k, v in sorted(stages.items())),
            }
        )
    return [
        "Jobs per commit (from the first line of each job's log):",
        "",
        to_markdown(pd.DataFrame(rows)),
    ]


def _time_rows(root: Path, jobs: list[tuple[str, float]]) -> list[tuple[str, str]]:
    """The compute time (benchmark files) and wall time (Snakemake's logs) rows, where known."""
    rows = []
    total, count = sum(seconds for _, seconds in jobs), len(jobs)
    if count:
        rows.append(
            (
                "compute time",
                f"{duration(total)}: the `s` column of the {count} benchmark files under `results/benchmarks/` summed "
                "(the jobs of the rules with a benchmark: preprocessing, training, explanations, experiments; "
                "tables, figures and claims are not timed)",
            )
        )
    wall = wall_time(root)
    if wall:
        total_wall, n_invocations, last = wall
        rows.append(
            (
                "wall time",
                f"{duration(total_wall)}: from the start to the last job of each Snakemake invocation that ran jobs, summed "
                f"({counted(n_invocations, 'invocation')}, logged in `.snakemake/log/`); the last ended {last}",
            )
        )
    return rows


def _time_tables(root: Path, jobs: list[tuple[str, float]]) -> list[str]:
    """Compute time per stage and the Snakemake invocations, where known."""
    lines = []
    if jobs:
        stages = compute_by_stage(root, jobs)
        stages["hours"] = stages["seconds"].map(lambda v: f"{v / 3600:.2f}")
        stages["share"] = stages["share"].map(lambda v: f"{100 * v:.0f} %")
        lines += [
            "Compute time per stage (job seconds from `results/benchmarks/`; one job's threads are in the run's config):",
            "",
            to_markdown(stages[["stage", "jobs", "hours", "share"]]),
        ]
    found = invocations(root)
    if found:
        table = pd.DataFrame(found)
        table["wall time"] = table["seconds"].map(duration)
        lines += [
            "Snakemake invocations that ran jobs (from `.snakemake/log/`), in order:",
            "",
            to_markdown(table[["start", "end", "wall time", "jobs", "targets"]]),
        ]
    return lines


def provenance_block(run: Run, name: str, command: str) -> tuple[list[str], list[str]]:
    """The provenance block and the notes for the top of the index (other config, other commit)."""
    rows, notes = [("run folder", f"`{name}`")], []
    if run.record is None:
        notes.append(
            f"The run folder has no run record (`{RECORD}`): the config and the commit that made it are unknown."
        )
        rows.append(("config, commit", f"not recorded (no `{RECORD}` in the run folder)"))
    else:
        record_rows, notes = _record_rows(run)
        rows += record_rows
    commit_rows, commit_notes = _job_commit_rows(run)
    rows += commit_rows
    notes += commit_notes
    jobs = job_seconds(run.root)
    rows += _time_rows(run.root, jobs)
    rows.append(("published with", f"`{command}`"))
    table = pd.DataFrame(rows, columns=["", "value"])
    return ["## Provenance", "", to_markdown(table)] + _job_commit_table(run) + _time_tables(run.root, jobs), notes
