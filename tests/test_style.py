"""Ecosystem checks that belong to the test suite, so the README's one test command covers them."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_snakemake_lint_is_clean():
    result = run(sys.executable, "-m", "snakemake", "--lint", "--workflow-profile", "none")
    assert result.returncode == 0 and "Congratulations" in result.stdout + result.stderr, result.stdout + result.stderr


def test_snakefmt_check_is_clean():
    result = run(sys.executable, "-m", "snakefmt", "--check", "Snakefile", "rules")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_check_is_clean():
    result = run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_is_clean():
    result = run(sys.executable, "-m", "ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_rule_has_a_log_and_a_conda_env():
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in smk.read_text().split("\nrule ")[1:]:
            name = block.split(":", 1)[0]
            if "script:" in block or "shell:" in block:
                assert "    log:" in block, f"{smk.name}: rule {name} has no log:"
                assert "    conda:" in block, f"{smk.name}: rule {name} has no conda:"


def test_every_report_caption_is_valid_restructuredtext():
    # Snakemake renders captions with docutils; a stray |word| is an undefined substitution there.
    import io

    import docutils.core

    for caption in sorted((REPO / "report").glob("*.rst")):
        problems = io.StringIO()
        docutils.core.publish_doctree(
            caption.read_text(), settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": problems}
        )
        assert not problems.getvalue(), f"{caption.name}: {problems.getvalue()}"
