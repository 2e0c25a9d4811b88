"""One Snakemake run of the project's workflow in a folder of its own, as the workflow tests start it:
`--workflow-profile none`, so that a test states every setting it depends on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", "none"]


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`snakemake --directory workdir *args`; `check`: a failed run is an AssertionError with the end of
    its output. `ATTNEXP_TEST_TIMEOUT` (seconds) bounds it."""
    result = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), *args],
        capture_output=True,
        text=True,
        timeout=float(os.environ["ATTNEXP_TEST_TIMEOUT"]) if "ATTNEXP_TEST_TIMEOUT" in os.environ else None,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result
