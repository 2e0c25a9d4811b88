"""A job's start-up loads only what its work needs. Every job is a fresh Python process, so an import a job
does not use is paid by each of them: on a 2-core machine torch takes about 2 s, scipy.stats 1.7 s and
pandas 0.5 s, against a few seconds of work in most of the quick preset's jobs."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# rule script -> the heavy modules its imports must not load
NOT_LOADED = {
    "render_table": ("torch", "pandas"),  # a report page from a Markdown table
    "train_model": ("pandas", "scipy.stats"),  # ROC-AUC from ranks; the W&P module only for an adversary
    "jw_ground_truth": ("torch",),  # tables and a figure from explanation files
    "faithfulness_seed_envelope": ("torch",),
    "attention_attribution_tables": ("torch",),
}


def loaded_by_imports(script: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` the script's top-level imports load, in a fresh interpreter."""
    tree = ast.parse((ROOT / "scripts" / f"{script}.py").read_text(encoding="utf-8"))
    imports = "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    code = f"{imports}\nimport sys\nprint(' '.join(m for m in {list(modules)!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.parametrize("script", sorted(NOT_LOADED))
def test_a_job_does_not_import_what_it_does_not_use(script):
    assert loaded_by_imports(script, NOT_LOADED[script]) == []


def test_the_check_sees_an_import():
    assert loaded_by_imports("explain", ("torch",)) == ["torch"]
