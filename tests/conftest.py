"""Shared test settings, and the quick-preset runs the slow workflow and publishing tests share."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


# Fixtures that run a whole preset, shared by tests in several modules
QUICK_PRESET_FIXTURES = {"quick_run", "quick_runs"}


def pytest_collection_modifyitems(config, items):
    """With pytest-xdist (`-n`, as the README's test command runs the suite), each worker builds its
    own shared fixtures: the tests of one module run in one worker, and every test that uses a
    quick-preset run (several modules) in one worker too (`--dist loadgroup`), so that no preset runs
    twice."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        shared = QUICK_PRESET_FIXTURES & set(item.fixturenames)
        item.add_marker(pytest.mark.xdist_group("quick-preset" if shared else item.nodeid.split("::")[0]))


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


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory) -> Path:
    """One run of the quick preset in a fresh folder, the first of `quick_runs`: the benchmarks read
    its data, models and job timings (tests/test_benchmarks.py), and must leave it as it is. Slow:
    only `slow` tests use it."""
    return run_quick_preset(tmp_path_factory.mktemp("quick_a"))


@pytest.fixture(scope="session")
def quick_runs(quick_run, tmp_path_factory):
    """Two runs of the quick preset (presets/quick.yaml), each in a fresh folder: the CI
    reproducibility check compares them (tests/workflow/test_workflow.py) and publishes them
    (tests/test_publish.py). Slow: only `slow` tests use it."""
    return quick_run, run_quick_preset(tmp_path_factory.mktemp("quick_b"))
