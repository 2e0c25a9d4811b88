"""What every rule script shares: its stderr goes to the rule's log, which opens with the commit of
the code that runs the job (`JOB_COMMIT`), progress of long jobs to the console, and expected
failures end the job with one readable line instead of a traceback. And the Snakefile's checks of the
targets a command line asks for (`unknown_targets`) and of the papers' rule files
(`check_papers_included`)."""

from __future__ import annotations

import atexit
import contextlib
import difflib
import errno
import gc
import logging
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TextIO

# Log lines that are progress: a training epoch, or "<what>: <done>/<total> instances"; and a training
# that goes on from the snapshot a stopped run left (attnexp.train), shown at once
_EPOCH = re.compile(r"^epoch (\d+)/(\d+)")
_INSTANCES = re.compile(r"(\d+)/(\d+) instances")
_RESUMED = re.compile(r"^resumed after epoch \d+ ")


class ConsoleProgress:
    """Echoes a job's progress lines to the console (Snakemake's output), labelled with the job's log
    path, at most every `every` seconds (the first `every` seconds after its first progress line) and
    always the last: training epochs (the last: the planned epoch count; an early stop ends before it),
    and instance counts with the rate and the time left; a training resumed from a snapshot at once. A job of a few seconds shows at most its last
    line; the first echoed line names the log with the full record (every epoch is there)."""

    def __init__(
        self, log_path: str, console: TextIO, every: float = 30.0, clock: Callable[[], float] = time.monotonic
    ):
        parts = Path(log_path).with_suffix("").parts
        self.label = "/".join(parts[1:] if parts and parts[0] == "results" else parts)
        self.log_path, self.console, self.every, self.clock = log_path, console, every, clock
        self.started = self.last = None
        self.named_log = False

    def __call__(self, message: str) -> None:
        now = self.clock()
        if self.started is None:
            self.started = now
        counted = _INSTANCES.search(message)
        epoch = _EPOCH.match(message)
        if epoch:
            done, total = int(epoch.group(1)), int(epoch.group(2))
            if done < total and now - (self.started if self.last is None else self.last) < self.every:
                return
            text = message
        elif counted:
            done, total = int(counted.group(1)), int(counted.group(2))
            if done < total and now - (self.started if self.last is None else self.last) < self.every:
                return
            elapsed = now - self.started
            rate = done / elapsed if elapsed > 0 else 0.0
            left = f", {(total - done) / rate:.0f} s left" if rate > 0 and done < total else ""
            text = f"{message} ({rate:.1f}/s{left})"
        elif _RESUMED.match(message):
            text = message
        else:
            return
        self.last = now
        if not self.named_log:
            text += f" [full log: {self.log_path}]"
            self.named_log = True
        print(f"[{self.label}] {text}", file=self.console, flush=True)


# Snakemake's console lines that are not progress: the run's header (date, host, command: kept in its
# log file), each job's block when it starts (its rule, files, and the shell command a script rule has
# none of), each finished job's timestamp and id ("N of M steps done" follows each job), and the
# scheduler's rounds. Events are Snakemake's LogEvent values (a str enum).
_HEADER = "workflow_started"
_NOT_PROGRESS_EVENTS = {_HEADER, "job_info", "group_info", "shellcmd", "job_finished"}
_SCHEDULER_CHATTER = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.)$")
# What Snakemake adds after a failed job's block, each said once by the failure's own line: the
# script's non-zero exit (as a RuleException), the scheduler stopping, and the run's closing error
_FAILURE_ECHOES = re.compile(
    r"^(RuleException:\s+CalledProcessError in file .*returned non-zero exit status"
    r"|Shutting down, this might take some time\.$"
    r"|Exiting because a job execution failed\. Look above for error messages$)",
    re.DOTALL,
)
_INCOMPLETE = "At least one job did not complete successfully."
# A refusal of the configuration or of the Snakefile's includes before any job (attnexp.config.ConfigError,
# IncludeError): Snakemake prints it with where the Snakefile raised it and the traceback's lines; the
# console keeps what the user must change
_REFUSALS = {"ConfigError", "IncludeError"}
_RAISED_AT = re.compile(r'^\w+ in file "?[^\n]*"?, line \d+:$')
_TRACEBACK_LINE = re.compile(r'^\s*File "[^"]+", line \d+')
_WILL_EXIT = "Will exit after finishing currently running jobs"
STOPPED = "stopped before every step was done: each finished step is kept, and the same command resumes the run"


def _text(record: logging.LogRecord) -> str:
    return record.msg if isinstance(record.msg, str) else ""


def failure_line(rule: str, logs: list[str], message: str | None = None) -> str:
    """A failed job in one line: the `error:` line its log ends with (`fail_cleanly`); for a job that
    failed otherwise, Snakemake's message about it (a cluster's refusal, for instance) or the last
    line of its log (an exception's type and message), naming the log."""
    return _failure_said(rule, logs, message) + (f" [log: {logs[0]}]" if logs else "")


def _failure_said(rule: str, logs: list[str], message: str | None) -> str:
    """`failure_line` without the log it names."""
    last = _last_line(Path(logs[0])) if logs else ""
    if last.startswith("error: "):
        return last
    said = " ".join(str(message).split()) if message else last
    return f"error: {rule} failed" + (f": {said}" if said else "")


def _last_line(path: Path, tail: int = 4096) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - tail))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


def _refusal(record: logging.LogRecord) -> str | None:
    """A configuration refusal as the console says it: `error: ` and its message, without Snakemake's
    "ConfigError in file ..., line N:" and the traceback lines (the log file keeps the record as it
    is); None for any other record."""
    if getattr(record, "exception", None) not in _REFUSALS or not isinstance(record.msg, str):
        return None
    lines = [line for line in record.msg.splitlines() if not _TRACEBACK_LINE.match(line) and not _RAISED_AT.match(line)]
    lines = [line for line in lines if line.strip()]
    return "error: " + "\n".join(lines) if lines else None


class _ProgressOnly(logging.Filter):
    """The console's filter (`progress_display`): a failed job is one line (`failure_line`) in place
    of Snakemake's block and the echoes after it (once for jobs failing on the same input), and a
    run that ends incomplete without a failed job (stopped by Ctrl-C or SIGTERM) says so in words."""

    def __init__(self, console: TextIO):
        super().__init__()
        self.console, self.failures, self.said = console, 0, set()

    def filter(self, record: logging.LogRecord) -> bool:
        if (refusal := _refusal(record)) is not None:
            print(refusal, file=self.console, flush=True)
            return False
        event, text = getattr(record, "event", None), _text(record)
        if event in _NOT_PROGRESS_EVENTS or _SCHEDULER_CHATTER.match(text) or _FAILURE_ECHOES.match(text):
            return False
        if event == "job_error":
            self.failures += 1
            rule, logs = getattr(record, "rule_name", "a job"), getattr(record, "log", None) or []
            said = _failure_said(rule, logs, getattr(record, "rule_msg", None))
            if said not in self.said:  # jobs failing on the same input say it once
                self.said.add(said)
                print(failure_line(rule, logs, getattr(record, "rule_msg", None)), file=self.console, flush=True)
            return False
        if text.startswith(_WILL_EXIT):  # said once per signal Snakemake receives
            if _WILL_EXIT in self.said:
                return False
            self.said.add(_WILL_EXIT)
        if text.rstrip().endswith(_INCOMPLETE):
            if not self.failures:
                print(STOPPED, file=self.console, flush=True)
            return False
        return True


class _NoHeader(logging.Filter):
    def __init__(self, console: TextIO):
        super().__init__()
        self.console = console

    def filter(self, record: logging.LogRecord) -> bool:
        if (refusal := _refusal(record)) is not None:
            print(refusal, file=self.console, flush=True)
            return False
        return getattr(record, "event", None) != _HEADER


def progress_display(logger: logging.Logger, dry_run: bool = False) -> None:
    """Make Snakemake's console a progress display: "N of M steps done" after each job, the jobs'
    own progress lines, and failures in one line each, without the run's header, each job's block,
    its finishing timestamp and the scheduler's rounds. A dry run, whose job blocks are what it
    shows, loses only the header. Only the console: Snakemake's log file under `.snakemake/log`
    keeps everything."""
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.addFilter(_NoHeader(handler.stream) if dry_run else _ProgressOnly(handler.stream))


def end_rescheduling_timers() -> None:
    """Let Snakemake exit as soon as its run is over. After each pass over the ready jobs, its
    scheduler starts a timer that runs another pass one `--max-jobs-per-timespan` timespan later,
    so every finished job adds a chain of passes that lasts to the end of the run
    (snakemake/snakemake#3744): with the default 1-s timespan, a hundred passes a second by the end of
    the quick preset, each re-reading the sizes of every ready job's inputs. The workflow profile's
    long timespan keeps the passes rare; this ends the timers once the scheduler has returned (the
    Snakefile's onsuccess and onerror), which the interpreter would otherwise wait out before it exits."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


class IncludeError(ValueError):
    """A registered paper whose rule file the Snakefile does not include, or includes too late."""


def check_papers_included(papers: Iterable[str], included: Collection[str], reader: str) -> None:
    """Refuse, one line per paper, a registered paper (`attnexp.papers.PAPERS`) whose rule file
    `rules/<key>.smk` has not run by the time `reader`, the rule file that reads what the papers make,
    does: each paper's rule file records its targets (`TARGETS[<key>]`), `included` are those recorded.
    Left unchecked, a paper whose `include:` is forgotten or comes after the reader would be left out
    of the claims and the debate matrix in silence."""
    missing = [key for key in papers if key not in included]
    if missing:
        raise IncludeError(
            "\n".join(
                f"paper {key} is registered but rules/{key}.smk is not included (in the Snakefile, before {reader})"
                for key in missing
            )
        )


# A target written like a rule name (no folder, no suffix); anything else is a file Snakemake resolves
_RULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UnknownTargetError(ValueError):
    pass


def _parsed_command_line(argv: list[str]):
    """A `snakemake` command line read by Snakemake's own argument parser; None where it is not one
    (the workflow run through the API, a test harness)."""
    from snakemake.cli import get_argument_parser

    try:
        return get_argument_parser().parse_known_args(argv)[0]
    except (SystemExit, Exception):
        return None


def command_line_dry_run(argv: list[str]) -> bool:
    """Whether a `snakemake` command line asks for a dry run (`-n`)."""
    return bool(getattr(_parsed_command_line(argv), "dryrun", False))


def command_line_targets(argv: list[str]) -> list[str]:
    """The targets of a `snakemake` command line; none where it is not one."""
    return list(getattr(_parsed_command_line(argv), "targets", None) or [])


def refuse_unreadable_overlays(argv: list[str]) -> None:
    """Stop a `snakemake` command line whose `--configfile` overlay is missing, not valid YAML or not a
    mapping of config keys, with one `error:` line naming the file (and the line and column of a
    syntax error: `attnexp.config.read_overlay`). Snakemake reads the overlays before the Snakefile,
    and says neither which file nor where (a missing one is a traceback), so the default workflow
    profile calls this while Snakemake reads the profile, just before it loads the overlays."""
    from attnexp.config import ConfigError, read_overlay  # jsonschema and the papers: not for every job

    for path in getattr(_parsed_command_line(argv), "configfile", None) or []:
        try:
            read_overlay(path)
        except ConfigError as err:
            raise SystemExit(f"error: --configfile {err}") from None


def unknown_targets(requested: list[str], rules: list[str], target_rules: list[str], workdir: str | Path = ".") -> None:
    """Raise UnknownTargetError, one line per target, for a requested target written like a rule name
    that is neither a rule nor an existing file, with the closest rule name and the target rules, in
    place of Snakemake's generic "No rule to produce"."""
    problems = []
    for target in requested:
        if not _RULE_NAME.fullmatch(target) or target in rules or (Path(workdir) / target).exists():
            continue
        close = difflib.get_close_matches(target, rules, n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        problems.append(
            f"unknown target '{target}': no rule of that name.{hint} Targets: {', '.join(target_rules)}, or an output file"
        )
    if problems:
        raise UnknownTargetError("\n".join(problems))


# The checkout whose code a job runs: the workflow puts its own src/ first on the jobs' PYTHONPATH
CHECKOUT = Path(__file__).resolve().parents[2]
# A job log's first line: JOB_COMMIT + the commit (and " with uncommitted changes"), or "unknown (...)"
JOB_COMMIT = "attnexp commit: "


def _git(repo: str | Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def checkout_commit(repo: str | Path = CHECKOUT) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files differ from it) of the git checkout at `repo`; (None,
    None) outside one."""
    commit = _git(repo, "rev-parse", "HEAD")
    status = _git(repo, "status", "--porcelain", "--untracked-files=no") if commit else None
    return commit, (None if status is None else bool(status))


def commit_words(commit: str | None, dirty: bool | None) -> str:
    """`<commit>`, `<commit> with uncommitted changes` or `unknown (not a git checkout)`."""
    if not commit:
        return "unknown (not a git checkout)"
    return commit + (" with uncommitted changes" if dirty else "")


def log_to(path: str) -> Callable[[str], None]:
    """Send stderr to the rule's log file (first thing a script does), open it with the line naming
    the commit that runs the job (`JOB_COMMIT`), and return a line logger that also echoes progress
    lines to the console (`ConsoleProgress`). From here on SIGTERM ends the job through
    `fail_cleanly`: the output being written is not kept, and the job says so in one line. At exit the
    job's objects are frozen out of the interpreter's final garbage collections (`gc.freeze`): they die
    with the process, and walking the millions that torch's import leaves took 0.3-0.8 s per job."""
    atexit.unregister(gc.freeze)  # once per process, also where a process opens several logs (the tests)
    atexit.register(gc.freeze)
    console = sys.stderr
    sys.stderr = open(path, "w", buffering=1, encoding="utf-8")
    print(JOB_COMMIT + commit_words(*checkout_commit()), file=sys.stderr, flush=True)
    progress = ConsoleProgress(path, console)
    signal.signal(signal.SIGTERM, _interrupted)  # Snakemake, a scheduler or a user stopping the job

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)
        progress(message)

    return log


class Interrupted(Exception):
    """The job was told to stop (SIGTERM)."""


def _interrupted(signum, frame) -> None:
    raise Interrupted(f"stopped by {signal.Signals(signum).name}; the output being written was not kept")


@contextlib.contextmanager
def fail_cleanly(*errors: type[BaseException]):
    """Turn the listed, expected errors, any OSError (no space left, permission denied, a file gone)
    and a stop (SIGTERM, Ctrl-C) into one `error: <message>` line ending the job's log, after the
    traceback, and exit status 1; the console shows that line, naming the log (`failure_line`)."""
    try:
        yield
    except (*errors, OSError, Interrupted, KeyboardInterrupt) as err:
        traceback.print_exc(file=sys.stderr)  # the job's log (`log_to`)
        # the log's last line; Snakemake's console shows it when the job has failed (`_ProgressOnly`),
        # also where the job's own stderr is not the console (a cluster job)
        print(f"error: {describe_error(err)}", file=sys.stderr, flush=True)
        sys.exit(1)


_OS_HINTS = {
    errno.ENOSPC: "no space left on the device: free some and rerun",
    errno.EDQUOT: "disk quota exceeded: free some and rerun",
    errno.EACCES: "permission denied: check the folder's permissions",
    errno.EROFS: "read-only file system",
}


def describe_error(err: BaseException) -> str:
    """One line: an OSError as `<file>: <what happened>` (Python's `[Errno 28] ...: 'path'` made
    readable), anything else as its message."""
    if isinstance(err, KeyboardInterrupt):
        return "stopped by Ctrl-C; the output being written was not kept"
    if isinstance(err, OSError) and err.errno is not None:
        what = _OS_HINTS.get(err.errno, err.strerror or str(err))
        return f"{err.filename}: {what}" if err.filename else what
    return str(err)


def torch_threads(configured: int, given: int, log: Callable[[str], None]) -> int:
    """The torch threads a model job runs: the configured `train.threads`, a param of its rule, so
    that changing it reruns the job (a float sum's order, and so the last bits of a result, depend on
    it). Snakemake gives a job fewer threads when `--cores` is lower; the job still runs the
    configured count, for results that are those of the config, and its log says so."""
    if given < configured:
        log(
            f"threads: Snakemake scheduled this job on {given} core(s) (--cores); it runs train.threads = {configured} "
            f"torch threads all the same, so that its results are those of the configured setting"
        )
    return configured


def logged_device(setting: str, log: Callable[[str], None]) -> str:
    """The config's `device` setting (auto | cpu | cuda), passed through after writing the device it
    resolves to into the job's log (what `auto` chose); a device the machine lacks raises
    `runtime.DeviceError` here, before any work."""
    from attnexp.runtime import resolve_device  # torch: only the scripts that run a model need it

    log(f"device: {resolve_device(setting)} (setting {setting!r})")
    return setting
