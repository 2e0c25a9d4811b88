"""Shared test settings, and the quick-preset runs the slow workflow and publishing tests share."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run faster on one intra-op thread, and leave the other core to parallel jobs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory):
    """Two runs of the quick preset (presets/quick.yaml), each in a fresh folder: the CI
    reproducibility check compares them (tests/workflow/test_workflow.py) and publishes them
    (tests/test_publish.py). Slow: only `slow` tests use it. `ATTNEXP_TEST_TIMEOUT` caps each run."""
    timeout = float(os.environ["ATTNEXP_TEST_TIMEOUT"]) if "ATTNEXP_TEST_TIMEOUT" in os.environ else None
    runs = []
    for name in ("a", "b"):
        workdir = tmp_path_factory.mktemp(f"quick_{name}")
        command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", "none", "--directory", str(workdir),
                   "--cores", "2", "--configfile", str(REPO / "presets" / "quick.yaml")]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"the quick preset failed in {workdir}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
        runs.append(workdir)
    return tuple(runs)
