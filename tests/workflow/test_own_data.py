"""The worked example of docs/own-data.md, run as the page gives it: generated review tables in CSV
with a user's column names and string labels, read by one config block, through every paper's stage;
then a changed table rebuilds the dataset. Slow: it trains and explains real (small) models."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "own-data.md"


def page_commands() -> list[str]:
    """The commands of the page's worked example (its first bash block), one per line."""
    block = re.search(r"## The worked example.*?```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block, f"{PAGE} has no bash block under 'The worked example'"
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_page_command(command: str, folder: Path) -> subprocess.CompletedProcess:
    """One command of the page, its run folder `../own-data` replaced by `folder`, run in the checkout
    with this Python (and Snakemake without the workflow profile, as every test runs it)."""
    words = [str(folder) + w[len("../own-data") :] if w.startswith("../own-data") else w for w in shlex.split(command)]
    if words[0] == "python":
        words[0] = sys.executable
    elif words[0] == "snakemake":
        words = [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--workflow-profile",
            "none",
            *words[1:],
        ]
    timeout = float(os.environ["ATTNEXP_TEST_TIMEOUT"]) if "ATTNEXP_TEST_TIMEOUT" in os.environ else None
    result = subprocess.run(words, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_the_worked_example_runs_every_stage_on_the_users_tables(tmp_path):
    commands = page_commands()
    assert len(commands) == 2 and "example_reviews" in commands[0] and "own_data_example.yaml" in commands[1]
    for command in commands:
        run_page_command(command, tmp_path)
    results = tmp_path / "results"
    stats = json.loads((results / "data/reviews/stats.json").read_text())
    assert stats["classes"] == ["negative", "positive"]
    assert [s["file"] for s in stats["sources"]] == ["reviews_train.csv", "reviews_test.csv"]
    assert [stats["splits"][s]["n"] for s in ("train", "dev", "test")] == [1020, 180, 300]
    tables = results / "tables"
    # every paper's stage has rows for the dataset
    assert any(
        r["dataset"] == "reviews" and r["model"] == "lstm-tanh" for r in rows(tables / "jain_wallace_table2.csv")
    )
    assert {r["model"] for r in rows(tables / "serrano_smith_erasure.csv") if r["dataset"] == "reviews"} >= {
        "han-rnn",
        "lstm-tanh",
    }
    assert any(r["dataset"] == "reviews" for r in rows(tables / "wiegreffe_pinter_uniform.csv"))
    assert any(r["dataset"] == "reviews" for r in rows(tables / "faithfulness_aopc.csv"))
    assert any(r["dataset"] == "reviews" for r in rows(tables / "attention_attribution_pruning.csv"))
    assert any(r["dataset"] == "reviews" for r in rows(tables / "debate_matrix.csv"))
    # the rationale column makes it a ground-truth dataset: the sentiment words are what decides
    truth = rows(tables / "ground_truth.csv")
    assert {r["dataset"] for r in truth} == {"reviews"}
    assert (results / "report" / "ground_truth.html").is_file()
    for path in (results / "models" / "reviews").glob("*/seed10/metrics.json"):
        if "-adversary-" not in path.parts[-3]:  # W&P's adversaries see no gold label, by design
            assert json.loads(path.read_text())["test"]["accuracy"] > 0.8, path  # small models, 4 epochs: 0.85-0.93
    # a changed table rebuilds the dataset, and what depends on it
    table = tmp_path / "examples/reviews/reviews_test.csv"
    table.write_text(table.read_text(encoding="utf-8").replace(",positive,", ",negative,", 1), encoding="utf-8")
    plan = run_page_command(commands[1] + " --dry-run --quiet rules", tmp_path).stdout
    assert re.search(r"^preprocess_dataset\s+1$", plan, re.M) and re.search(r"^train_model\s+\d+$", plan, re.M), plan
