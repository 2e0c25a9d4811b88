"""Shared test settings, and the quick-preset runs the slow workflow and publishing tests share."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from filelock import FileLock, Timeout

REPO = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items):
    """Within each file, the tests that use both quick-preset runs (`quick_runs`) first, then those
    that use one: under pytest-xdist (`-n`, as the README's test command runs the suite; `--dist
    loadfile` keeps each file's tests, and its module fixtures, in one worker, the files with most
    tests first) a worker starts a run as soon as it gets such a file, and a second worker that
    needs the runs builds the other one meanwhile (`shared_quick_runs`)."""

    def order(item):
        uses = set(item.fixturenames)
        return 0 if "quick_runs" in uses else 1 if "quick_run" in uses else 2

    position = {}  # each file where its first test was collected
    for index, item in enumerate(items):
        position.setdefault(item.nodeid.split("::")[0], index)
    items.sort(key=lambda item: (position[item.nodeid.split("::")[0]], order(item)))


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run faster on one intra-op thread, and leave the other core to parallel jobs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def console_of(workdir: Path) -> Path:
    """Where `run_quick_preset` keeps the run's console output (beside the run folder)."""
    return workdir.parent / f"{workdir.name}.console.txt"


def run_quick_preset(workdir: Path) -> Path:
    """The quick preset (presets/quick.yaml) run in `workdir` as a user runs it (the default workflow
    profile), its console kept (`console_of`); `ATTNEXP_TEST_TIMEOUT` caps it."""
    timeout = float(os.environ["ATTNEXP_TEST_TIMEOUT"]) if "ATTNEXP_TEST_TIMEOUT" in os.environ else None
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--workflow-profile",
        str(REPO / "profiles" / "default"),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        "--configfile",
        str(REPO / "presets" / "quick.yaml"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    console_of(workdir).write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise AssertionError(f"the quick preset failed in {workdir}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return workdir


def shared_quick_runs(tmp_path_factory, *names: str) -> list[Path]:
    """The quick preset run once per test run in each folder of `names`, by whichever pytest-xdist
    worker gets to it first: under a lock in the base temp folder every worker shares, a worker
    builds each run nobody is building yet and then waits for the others' (without xdist: one after
    the other in this process's base temp folder)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's base is popen-gw<N> inside the shared one
    locks = {name: FileLock(root / f"{name}.lock") for name in names}
    left = list(names)
    while left:
        name = next((n for n in left if _acquired_now(locks[n])), None)
        if name is None:  # every one left is being built: wait for the first
            name = left[0]
            locks[name].acquire()
        try:
            if not (root / f"{name}.done").exists():  # nobody built it (or a build failed): build it
                shutil.rmtree(root / name, ignore_errors=True)
                run_quick_preset(root / name)
                (root / f"{name}.done").touch()
        finally:
            locks[name].release()
        left.remove(name)
    return [root / name for name in names]


def _acquired_now(lock: FileLock) -> bool:
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    return True


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory) -> Path:
    """One run of the quick preset in a fresh folder, the first of `quick_runs`: the benchmarks read
    its data, models and job timings (tests/test_benchmarks.py), and must leave it as it is. Slow:
    only `slow` tests use it."""
    return shared_quick_runs(tmp_path_factory, "quick_a")[0]


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory):
    """Two runs of the quick preset (presets/quick.yaml), each in a fresh folder: the CI
    reproducibility check compares them (tests/workflow/test_workflow.py) and publishes them
    (tests/test_publish.py). Under xdist, two workers build them side by side. Slow: only `slow`
    tests use it."""
    return tuple(shared_quick_runs(tmp_path_factory, "quick_a", "quick_b"))
