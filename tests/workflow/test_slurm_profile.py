"""profiles/slurm, exercised: Snakemake's SLURM executor plugin against a fake SLURM on PATH.

The fake `sbatch` records its argv (one JSON line per call), runs the job it was given right away
(`--wrap`, or a script) in the folder named by `-D`, and prints the job id as `--parsable` asks; the
job's `srun` (the plugin's in-job half, slurm-jobstep, starts the rule through it) drops its options
and execs the rest; `sacct`/`squeue` report the recorded jobs COMPLETED or FAILED; `scontrol`,
`sinfo`, `sacctmgr`/`sshare` (account check) and `scancel` answer like a small cluster. The cluster
has no GPU nodes: a submission that asks for a GPU is refused, as a real CPU-only cluster does, after
its argv has been recorded.

Runs in one working folder, on the generated `synthetic` dataset (a few hundred documents, no download):

1. `device: cuda`, target one model: the data job runs through sbatch without a GPU request,
   the training job asks for `--gpus=1` and is refused (about 15 s on 2 cores).
2. (`slow`) the default device, same target: only the training job is submitted, without a GPU
   request, and trains for real (about 20 s).

The profile's `software-deployment-method: conda` is overridden (`--sdm env-modules`: no rule has
`envmodules:`, so nothing is deployed); there is no conda here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "profiles" / "slurm"
TARGET = "results/models/synthetic/average-tanh/seed10/metrics.json"
TOOLS = ("sbatch", "srun", "sacct", "squeue", "scancel", "sinfo", "scontrol", "sacctmgr", "sshare")
SNAKEMAKE = [
    *(sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")),
    *("--profile", str(PROFILE), "--workflow-profile", "none"),
    *("--sdm", "env-modules"),  # instead of the profile's conda (none here); no rule has `envmodules:`
    *("--jobs", "2", "--latency-wait", "5"),
    # poll the fake sacct every second instead of after the plugin's default 40 s
    *("--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1"),
]

FAKE_SLURM = r'''
import fcntl, json, os, subprocess, sys
from pathlib import Path

STATE = Path(os.environ["FAKE_SLURM_STATE"])
TOOL = Path(sys.argv[0]).name
ARGS = sys.argv[1:]


def append(name, record):
    with open(STATE / name, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps(record) + "\n")


def recorded_jobs():
    path = STATE / "jobs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def value(args, *names):
    """The value of an option given as `--name VALUE`, `--name=VALUE` or `-xVALUE`."""
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg[len(name) + 1 :]
            if not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
                return arg[len(name) :]
    return None


def next_jobid():
    with open(STATE / "last_jobid", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        jobid = int(f.read() or 4000) + 1
        f.seek(0)
        f.truncate()
        f.write(str(jobid))
    return jobid


def asks_for_gpu(args):
    return any(a.startswith(("--gpus", "-G", "--gpus-per")) or (a.startswith("--gres") and "gpu" in a) for a in args)


def sbatch():
    jobid = next_jobid()
    append("calls.jsonl", {"tool": TOOL, "argv": ARGS, "jobid": jobid})
    if asks_for_gpu(ARGS):
        print("sbatch: error: Batch job submission failed: Requested node configuration is not available", file=sys.stderr)
        return 1
    wrap = value(ARGS, "--wrap")
    if wrap is not None:
        command, script = ["/bin/sh", "-c", wrap], None
    else:  # a batch script: a path, or /dev/stdin
        command, script = ["/bin/sh", "-s"], Path(ARGS[-1]).read_text() if ARGS[-1] != "/dev/stdin" else sys.stdin.read()
    name = value(ARGS, "--job-name", "-J") or "sbatch"
    log = Path((value(ARGS, "--output", "-o") or "slurm-%j.out").replace("%j", str(jobid)))
    log.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SLURM_JOB_ID=str(jobid), SLURM_JOBID=str(jobid), SLURM_JOB_NAME=name)
    with open(log, "w") as out:
        rc = subprocess.run(
            command, input=script, text=True, cwd=value(ARGS, "-D", "--chdir"), env=env,
            stdin=None if script is not None else subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        ).returncode
    append("jobs.jsonl", {"jobid": jobid, "name": name, "state": "COMPLETED" if rc == 0 else "FAILED", "rc": rc})
    print(jobid if "--parsable" in ARGS else f"Submitted batch job {jobid}")
    return 0


def status():  # sacct --parsable2 --format=JobIdRaw,State / squeue --format=%i|%T, both with --name RUN
    name = value(ARGS, "--name")
    for job in recorded_jobs():
        if name is None or job["name"] == name:
            print(f"{job['jobid']}|{job['state']}")
    return 0


def srun():
    append("calls.jsonl", {"tool": TOOL, "argv": ARGS})
    args = list(ARGS)
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("-n", "-c", "-N", "-G", "-J", "--jobid", "--ntasks", "--cpus-per-task", "--nodes", "--gpus", "--mem"):
            args.pop(0)
    os.execvp(args[0], args)


def main():
    if TOOL == "sbatch":
        return sbatch()
    if TOOL == "srun":
        return srun()
    append("calls.jsonl", {"tool": TOOL, "argv": ARGS})
    if TOOL == "sacct":
        return status() if "--name" in ARGS else 0  # job-step reasons, account guesses: nothing known
    if TOOL == "squeue":
        return status()
    if TOOL == "scontrol":  # `scontrol show config`: SLURM's defaults
        print("MinJobAge               = 300 sec\nMaxArraySize            = 1001")
    elif TOOL == "sinfo":
        print("PARTITION\ndebug*")
    elif TOOL in ("sacctmgr", "sshare"):  # the accounts of this user
        print("\n".join(os.environ["FAKE_SLURM_ACCOUNTS"].split(",")))
    return 0


sys.exit(main())
'''


def profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())


def option(argv: list[str], *names: str) -> str | None:
    """The value of `--name VALUE` / `--name=VALUE` / `-x VALUE` in an argv."""
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg[len(name) + 1 :]
    return None


def asks_for_gpu(argv: list[str]) -> bool:
    return any(a.startswith(("--gpus", "-G", "--gpus-per")) or (a.startswith("--gres") and "gpu" in a) for a in argv)


def rule_of(argv: list[str]) -> str:
    comment = option(argv, "--comment")  # rule_<name>[_wildcards_...]
    assert comment and comment.startswith("rule_"), argv
    return comment.removeprefix("rule_").split("_wildcards_")[0]


class FakeSlurm:
    """The fake tools in root/bin (first on PATH for Snakemake and its jobs), their records in root/state."""

    def __init__(self, root: Path):
        self.bin, self.state = root / "bin", root / "state"
        self.bin.mkdir(parents=True)
        self.state.mkdir()
        script = self.bin / "fake_slurm"
        script.write_text(f"#!{sys.executable}\n{FAKE_SLURM}")
        script.chmod(0o755)
        for tool in TOOLS:
            (self.bin / tool).symlink_to(script.name)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
        self.env.update(
            PATH=os.pathsep.join([str(self.bin), os.environ.get("PATH", "")]),
            FAKE_SLURM_STATE=str(self.state),
            FAKE_SLURM_ACCOUNTS=str(profile()["default-resources"]["slurm_account"]),
        )

    def calls(self, tool: str) -> list[dict]:
        path = self.state / "calls.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        return [c for c in map(json.loads, lines) if c["tool"] == tool]

    def jobs(self) -> dict[int, dict]:
        path = self.state / "jobs.jsonl"
        return {j["jobid"]: j for j in map(json.loads, path.read_text().splitlines())} if path.exists() else {}

    def snakemake(self, workdir: Path, *args: str) -> subprocess.CompletedProcess:
        command = [*SNAKEMAKE, "--directory", str(workdir), *args]
        return subprocess.run(command, cwd=workdir, env=self.env, capture_output=True, text=True, timeout=300)


SMALL = {  # a few hundred generated documents, two epochs: the jobs, not the numbers, are under test
    "train": {"threads": 2, "seeds": [10], "select_on": "dev"},
    "datasets_enabled": ["synthetic"],
    # the default's stage selections name the replication's datasets and models
    "jain_wallace": {"models": None},
    "serrano_smith": {"datasets": None},
    "faithfulness": {"datasets": None},
    "datasets": {
        "synthetic": {
            "generator": {"sizes": {"train": 400, "dev": 100, "test": 100}},
            "train": {"jain_wallace": {"epochs": 2}},
        }
    },
}


@pytest.fixture(scope="module")
def cuda_run(tmp_path_factory):
    """A fresh folder, `device: cuda`: the data job runs, the training job's GPU request is refused."""
    root = tmp_path_factory.mktemp("slurm")
    fake = FakeSlurm(root)
    workdir = root / "work"
    workdir.mkdir()
    (root / "small.yaml").write_text(yaml.safe_dump(SMALL))
    (root / "cuda.yaml").write_text(yaml.safe_dump({"device": "cuda"}))
    run = fake.snakemake(workdir, "--configfile", str(root / "small.yaml"), str(root / "cuda.yaml"), "--", TARGET)
    return {"fake": fake, "root": root, "workdir": workdir, "run": run, "calls": fake.calls("sbatch")}


def output(run: subprocess.CompletedProcess) -> str:
    return f"{run.stdout[-4000:]}\n{run.stderr[-6000:]}"


def assert_profile_resources(call: dict, workdir: Path, threads: int) -> None:
    """The profile's default-resources (and set-resources for the rule) on one sbatch argv."""
    argv, rule = call["argv"], rule_of(call["argv"])
    resources = profile()["default-resources"]
    mem = profile()["set-resources"].get(rule, {}).get("mem_mb", resources["mem_mb"])
    assert "--parsable" in argv, argv
    assert option(argv, "-p", "--partition") == resources["slurm_partition"], argv
    assert option(argv, "-A", "--account") == resources["slurm_account"], argv
    assert option(argv, "-t", "--time") == str(resources["runtime"]), argv
    assert option(argv, "--mem") == str(mem), argv
    assert option(argv, "--cpus-per-task") == str(threads), argv  # profile: cpus_per_task = the rule's threads
    assert option(argv, "-D") == str(workdir), argv
    assert "--executor slurm-jobstep" in (option(argv, "--wrap") or ""), argv


def test_jobs_are_submitted_through_sbatch_with_the_profile_resources(cuda_run):
    fake, workdir, run, calls = cuda_run["fake"], cuda_run["workdir"], cuda_run["run"], cuda_run["calls"]
    assert [rule_of(c["argv"]) for c in calls] == ["preprocess_dataset", "train_model"], output(run)
    assert_profile_resources(calls[0], workdir, threads=1)  # preprocess_dataset declares no threads
    assert_profile_resources(calls[1], workdir, threads=SMALL["train"]["threads"])  # train.threads
    # the data job ran inside its (fake) allocation, through the plugin's srun, and its files are there
    assert fake.jobs() == {
        calls[0]["jobid"]: {
            "jobid": calls[0]["jobid"],
            "name": option(calls[0]["argv"], "--job-name"),
            "state": "COMPLETED",
            "rc": 0,
        }
    }
    assert [option(s["argv"], "--cpus-per-task") for s in fake.calls("srun")] == ["1"]
    assert "has been submitted with SLURM jobid" in run.stdout + run.stderr
    assert fake.calls("sacct"), "the plugin never asked sacct for the job states"
    for name in ("train.jsonl", "dev.jsonl", "test.jsonl", "vocab.txt", "stats.json"):
        assert (workdir / "results/data/synthetic" / name).is_file(), name
    assert json.loads((workdir / "results/data/synthetic/stats.json").read_text())["splits"]["train"]["n"] == 400


def test_a_cuda_training_job_requests_a_gpu_and_a_data_job_does_not(cuda_run):
    run, by_rule = cuda_run["run"], {rule_of(c["argv"]): c["argv"] for c in cuda_run["calls"]}
    assert option(by_rule["train_model"], "--gpus") == "1", by_rule["train_model"]
    assert not asks_for_gpu(by_rule["preprocess_dataset"]), by_rule["preprocess_dataset"]
    # the fake cluster has no GPU node: the submission is refused and Snakemake says so
    assert run.returncode != 0
    assert "Requested node configuration is not available" in run.stdout + run.stderr
    assert not (cuda_run["workdir"] / TARGET).exists()


@pytest.mark.slow  # a real training job (the file's total passes ~30 s on 2 busy cores)
def test_a_training_job_on_the_default_device_trains_through_sbatch_without_a_gpu(cuda_run):
    fake, workdir = cuda_run["fake"], cuda_run["workdir"]
    before = len(fake.calls("sbatch"))
    run = fake.snakemake(workdir, "--configfile", str(cuda_run["root"] / "small.yaml"), "--", TARGET)
    assert run.returncode == 0, output(run)
    calls = fake.calls("sbatch")[before:]
    assert [rule_of(c["argv"]) for c in calls] == ["train_model"]  # the data were kept
    assert not asks_for_gpu(calls[0]["argv"]), calls[0]["argv"]
    assert_profile_resources(calls[0], workdir, threads=SMALL["train"]["threads"])
    assert fake.jobs()[calls[0]["jobid"]]["state"] == "COMPLETED"
    srun = fake.calls("srun")[-1]["argv"]
    assert option(srun, "--cpus-per-task") == str(SMALL["train"]["threads"]) and not asks_for_gpu(srun)
    metrics = json.loads((workdir / TARGET).read_text())
    assert metrics["model"] == "average-tanh"
    assert json.loads((workdir / TARGET).with_name("timing.json").read_text())["device"] == "cpu"
