"""What every rule script shares (attnexp.workflow): progress lines of long jobs on the console."""

from __future__ import annotations

import errno
import io
import re
import sys
import threading
from pathlib import Path

import pytest

from attnexp.workflow import (
    ConsoleProgress,
    UnknownTargetError,
    command_line_targets,
    end_rescheduling_timers,
    fail_cleanly,
    torch_threads,
    unknown_targets,
)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_epochs_are_echoed_at_most_every_interval_and_the_first_line_names_the_full_log():
    console, clock = io.StringIO(), Clock()
    progress = ConsoleProgress("results/models/sst/lstm-tanh/seed10/train.log", console, every=30.0, clock=clock)
    progress("lstm-tanh: 828,351 parameters, 2 classes")  # not progress: the log only
    for epoch in range(1, 9):
        progress(f"epoch {epoch}/8: train loss 0.41, test roc_auc 0.95 (12.0 s)")
        clock.now += 12.0
    assert (
        console.getvalue().splitlines()
        == [
            "[models/sst/lstm-tanh/seed10/train] epoch 4/8: train loss 0.41, test roc_auc 0.95 (12.0 s) "  # 36 s after the first epoch
            "[full log: results/models/sst/lstm-tanh/seed10/train.log]",
            "[models/sst/lstm-tanh/seed10/train] epoch 7/8: train loss 0.41, test roc_auc 0.95 (12.0 s)",
            "[models/sst/lstm-tanh/seed10/train] epoch 8/8: train loss 0.41, test roc_auc 0.95 (12.0 s)",  # the last, always
        ]
    )
    quick = ConsoleProgress("results/models/a/train.log", io.StringIO(), every=30.0, clock=Clock())
    quick("epoch 1/2: train loss 0.5 (1.0 s)")
    quick("epoch 2/2: train loss 0.4 (1.0 s)")
    assert quick.console.getvalue().splitlines() == [
        "[models/a/train] epoch 2/2: train loss 0.4 (1.0 s) [full log: results/models/a/train.log]"
    ]


def test_a_resumed_training_says_so_at_once():
    console, clock = io.StringIO(), Clock()
    progress = ConsoleProgress("results/models/sst/lstm-tanh/seed10/train.log", console, every=30.0, clock=clock)
    progress(
        "resumed after epoch 5 from results/models/sst/lstm-tanh/seed10/.model.resume, the snapshot a stopped run left"
    )
    progress("epoch 6/8: train loss 0.41 (12.0 s)")  # within the interval: the log only
    assert console.getvalue().splitlines() == [
        "[models/sst/lstm-tanh/seed10/train] resumed after epoch 5 from results/models/sst/lstm-tanh/seed10/.model.resume, "
        "the snapshot a stopped run left [full log: results/models/sst/lstm-tanh/seed10/train.log]"
    ]


def test_instance_counts_are_echoed_at_most_every_interval_with_rate_and_time_left_and_always_the_last():
    console, clock = io.StringIO(), Clock()
    progress = ConsoleProgress(
        "results/logs/jw_adversarial/imdb/lstm-tanh/seed10.log", console, every=30.0, clock=clock
    )
    progress("adversary: 0/400 instances")  # the start: rate 0, no time left
    for done in range(40, 401, 40):
        clock.now += 10.0
        progress(f"adversary: {done}/400 instances")
    lines = console.getvalue().splitlines()
    assert lines[0].startswith(
        "[logs/jw_adversarial/imdb/lstm-tanh/seed10] adversary: 120/400 instances (4.0/s, 70 s left) [full log: "
    )
    assert lines[-1] == "[logs/jw_adversarial/imdb/lstm-tanh/seed10] adversary: 400/400 instances (4.0/s)"
    assert len(lines) == 4  # 120, 240, 360 (every 30 s) and the last


def test_command_line_targets_are_read_by_snakemakes_own_parser():
    argv = [
        "--cores",
        "2",
        "--configfile",
        "a.yaml",
        "b.yaml",
        "--config",
        "mirror=x",
        "--",
        "jain_walace",
        "results/x.txt",
    ]
    assert command_line_targets(argv) == ["jain_walace", "results/x.txt"]
    assert command_line_targets(["-n", "all", "--cores", "1"]) == ["all"]
    assert command_line_targets(["--not-a-snakemake-option"]) == []


def test_unknown_targets_name_the_closest_rule_and_pass_rules_files_and_existing_paths(tmp_path):
    rules, aggregates = ["all", "jain_wallace", "train_model"], ["all", "jain_wallace"]
    with pytest.raises(UnknownTargetError) as err:
        unknown_targets(["jain_walace", "zzz", "all", "results/a.csv"], rules, aggregates, tmp_path)
    assert str(err.value).splitlines() == [
        "unknown target 'jain_walace': no rule of that name. Did you mean 'jain_wallace'? Targets: all, jain_wallace, or an output file",
        "unknown target 'zzz': no rule of that name. Targets: all, jain_wallace, or an output file",
    ]
    (tmp_path / "notes").write_text("")
    unknown_targets(["notes", "train_model", "results/a.csv"], rules, aggregates, tmp_path)  # no error


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "results/models/m.pt"),
            "error: results/models/m.pt: no space left on the device: free some and rerun",
        ),
        (
            PermissionError(errno.EACCES, "Permission denied", "results/data"),
            "error: results/data: permission denied: check the folder's permissions",
        ),
        (ValueError("train.jsonl:3: record has no 'label'"), "error: train.jsonl:3: record has no 'label'"),
    ],
)
def test_fail_cleanly_ends_the_log_with_one_line_after_the_traceback(capfd, monkeypatch, error, line):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with pytest.raises(SystemExit) as ended:
        with fail_cleanly(ValueError):
            raise error
    assert ended.value.code == 1
    assert capfd.readouterr().err == ""  # the console shows the log's last line once the job has failed
    assert "Traceback (most recent call last)" in log.getvalue() and log.getvalue().rstrip().endswith("\n" + line)


def test_fail_cleanly_lets_unlisted_errors_through():
    with pytest.raises(KeyError):
        with fail_cleanly(ValueError):
            raise KeyError("x")


def test_a_job_runs_the_configured_torch_threads_and_says_when_it_was_given_fewer():
    said = []
    assert torch_threads(2, 2, said.append) == 2 and said == []
    assert torch_threads(2, 1, said.append) == 2
    assert said == [
        "threads: Snakemake scheduled this job on 1 core(s) (--cores); it runs train.threads = 2 torch threads all the same, so that its results are those of the configured setting"
    ]


def test_sigterm_ends_a_job_in_one_line_and_keeps_no_partial_output(tmp_path):
    import subprocess
    import textwrap

    script = textwrap.dedent(f"""
        import os, signal
        from attnexp import io
        from attnexp.workflow import fail_cleanly, log_to
        log = log_to({str(tmp_path / "job.log")!r})
        with fail_cleanly(ValueError):
            with io.atomic_path({str(tmp_path / "out.txt")!r}) as tmp:
                tmp.write_text("half")
                os.kill(os.getpid(), signal.SIGTERM)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr == ""
    log = (tmp_path / "job.log").read_text().splitlines()
    assert log[-1] == "error: stopped by SIGTERM; the output being written was not kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.log"]


def _console_of(tmp_path, records, dry_run=False):
    """What Snakemake's console and log file show of `records` (level, message, extra) under
    `progress_display`."""
    import logging

    from attnexp.workflow import progress_display

    logger = logging.getLogger(f"attnexp-test-progress-display-{tmp_path.name}")
    logger.setLevel(logging.INFO)
    console = io.StringIO()
    logger.addHandler(logging.StreamHandler(console))
    logger.addHandler(logging.FileHandler(tmp_path / "snakemake.log"))
    progress_display(logger, dry_run)
    for level, message, extra in records:
        logger.log(level, message, extra=extra)
    for handler in logger.handlers:
        handler.flush()
    return console.getvalue().splitlines(), (tmp_path / "snakemake.log").read_text().splitlines()


def _job_error(rule, log, message=None):
    return (40, None, {"event": "job_error", "rule_name": rule, "log": [log] if log else [], "rule_msg": message})


def test_the_console_shows_progress_and_one_line_per_failure_and_the_log_file_keeps_every_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Snakemake's working directory: job logs are named relative to it
    Path("expected.log").write_text(
        "commit\nTraceback (most recent call last):\n...\nerror: stats.json: not valid JSON\n"
    )
    Path("crashed.log").write_text(
        "commit\nTraceback (most recent call last):\n  ...\nRuntimeError: shape mismatch\n\n"
    )
    Path("again.log").write_text("Traceback\nerror: stats.json: not valid JSON\n")
    info, error = 20, 40
    records = [
        (info, "Select jobs to execute...", {}),
        (info, "Execute 2 jobs...", {}),
        (info, "rule train_model: ...", {"event": "job_info"}),
        (info, "Shell command: None", {"event": "shellcmd"}),
        (info, "Finished jobid: 1 (Rule: train_model)", {"event": "job_finished"}),
        (info, "1 of 4 steps (25%) done", {"event": "progress"}),
        _job_error("train_model", "expected.log"),
        (
            error,
            "RuleException:\nCalledProcessError in file \"rules/train.smk\", line 31:\nCommand 'x' returned non-zero exit status 1.",
            {"event": "error"},
        ),
        _job_error("explain", "crashed.log"),
        _job_error("jw_permutation", "again.log"),
        _job_error("download_source", None),
        _job_error("train_model", "never-ran.log", "Job submission failed with exception: sbatch: error:\n  refused"),
        (info, "Shutting down, this might take some time.", {}),
        (error, "Exiting because a job execution failed. Look above for error messages", {}),
        (info, "Complete log(s): .snakemake/log/x.snakemake.log", {}),
        (error, "WorkflowError:\nAt least one job did not complete successfully.", {"event": "error"}),
    ]
    console, log_file = _console_of(tmp_path, records)
    assert console == [
        "1 of 4 steps (25%) done",
        "error: stats.json: not valid JSON [log: expected.log]",
        "error: explain failed: RuntimeError: shape mismatch [log: crashed.log]",
        "error: download_source failed",
        "error: train_model failed: Job submission failed with exception: sbatch: error: refused [log: never-ran.log]",
        "Complete log(s): .snakemake/log/x.snakemake.log",
    ]
    assert len(log_file) > len(records)  # every record, Snakemake's job blocks too


def test_the_run_header_stays_in_the_log_file_and_a_dry_run_keeps_its_job_blocks(tmp_path):
    records = [
        (20, "SNAKEMAKE\n  Date: 2026-11-27 10:00:00", {"event": "workflow_started"}),
        (20, "rule train_model: ...", {"event": "job_info"}),
    ]
    for dry_run, shown in ((True, ["rule train_model: ..."]), (False, [])):
        (tmp_path / str(dry_run)).mkdir()
        console, log_file = _console_of(tmp_path / str(dry_run), records, dry_run)
        assert console == shown and "  Date: 2026-11-27 10:00:00" in log_file


def test_a_stopped_run_says_so_in_words_once(tmp_path):
    from attnexp.workflow import STOPPED

    will_exit = "Will exit after finishing currently running jobs (scheduler)."
    console, _ = _console_of(
        tmp_path,
        [
            (30, will_exit, {}),
            (20, "1 of 6 steps (17%) done", {"event": "progress"}),
            (30, will_exit, {}),
            (40, "WorkflowError:\nAt least one job did not complete successfully.", {"event": "error"}),
        ],
    )
    assert console == [will_exit, "1 of 6 steps (17%) done", STOPPED]


def test_a_dry_run_is_read_from_the_command_line():
    from attnexp.workflow import command_line_dry_run

    assert command_line_dry_run(["-n", "all", "--cores", "1"]) and command_line_dry_run(["--dry-run"])
    assert not command_line_dry_run(["all", "--cores", "1"]) and not command_line_dry_run(["--not-a-snakemake-option"])


def test_a_paper_whose_rule_file_did_not_run_before_the_reader_stops_the_workflow():
    from attnexp.workflow import IncludeError, check_papers_included

    check_papers_included(["a", "b"], {"a": [], "b": ["x"], "data": []}, "rules/claims.smk")
    with pytest.raises(IncludeError) as refused:
        check_papers_included(["a", "b", "c"], {"b": []}, "rules/claims.smk")
    assert str(refused.value).splitlines() == [
        f"paper {key} is registered but rules/{key}.smk is not included (in the Snakefile, before rules/claims.smk)"
        for key in ("a", "c")
    ]


def test_every_paper_is_included_before_the_rule_files_that_read_what_the_papers_make():
    """Each registered paper's rule file is included once, before claims.smk and debate_matrix.smk (the
    workflow refuses otherwise at parse time; this says so without Snakemake)."""
    from attnexp.papers import PAPERS

    repo = Path(__file__).resolve().parents[1]
    included = re.findall(r'^include: "rules/(\w+)\.smk"', (repo / "Snakefile").read_text(), re.M)
    assert sorted(PAPERS) == sorted(set(PAPERS) & set(included)), sorted(set(PAPERS) - set(included))
    for key in PAPERS:
        assert included.count(key) == 1, key
        assert included.index(key) < min(included.index("claims"), included.index("debate_matrix")), key


def test_the_schedulers_pending_passes_end_with_the_run():
    """Snakemake's next pass is a `threading.Timer` one timespan away; at the end of a run it is ended,
    not waited out."""
    passes = []
    pending = threading.Timer(600, lambda: passes.append("pass"))
    pending.start()
    end_rescheduling_timers()
    pending.join(timeout=60)
    assert not pending.is_alive() and passes == []


def test_the_default_profile_keeps_scheduling_passes_rare_and_the_snakefile_ends_them():
    root = Path(__file__).resolve().parents[1]
    profile = (root / "profiles" / "default" / "config.yaml").read_text(encoding="utf-8")
    count, seconds = re.search(r"^max-jobs-per-timespan: (\d+)/(\d+)s$", profile, re.M).groups()
    assert int(seconds) >= 30 and int(count) >= 1000  # rare passes, and a limit a local run never reaches
    snakefile = (root / "Snakefile").read_text(encoding="utf-8")
    for hook in ("onsuccess", "onerror"):
        assert re.search(rf"^{hook}:\n    end_rescheduling_timers\(\)$", snakefile, re.M), hook
