"""Every benchmark script still runs: each runs here as its README command runs it (a fresh
interpreter, `python benchmarks/<name>.py ... --out <file>`), made tiny (a few instances, one epoch,
one round), on a run of the quick preset (`quick_run`: its `synthetic` dataset, trained models and
job timings), and must write its table. The numbers are not checked: speed is measured by the
scripts, never by timed tests (benchmarks/README.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
# benchmarks/*.py that are no benchmark of their own or that this file cannot run, and why
NOT_RUN_HERE = {
    "dataset_files": "a helper the benchmarks import",
    "benchmark_output": "a helper the benchmarks import",
    "jain_wallace_whole_run": "needs a checkout of J&W's repository: tests/test_whole_run_benchmark.py runs it against a stand-in",
}


def run_benchmark(name: str, *args) -> subprocess.CompletedProcess:
    """benchmarks/<name>.py with `args`, in a fresh interpreter with the checkout's src/ first on the
    import path (the code under test, whatever attnexp is installed); a failure shows its stderr."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, str(BENCHMARKS / f"{name}.py"), *map(str, args)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"benchmarks/{name}.py exited {result.returncode}:\n{result.stderr[-4000:]}"
    return result


def tables(path: Path) -> list[dict[str, list[str]]]:
    """The Markdown tables in `path`, each as first cell -> the row's other cells (separators left out)."""
    found, previous = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            if not previous.startswith("|"):
                found.append({})
            first, *rest = [cell.strip() for cell in line.strip("|").split("|")]
            found[-1][first] = rest
        previous = line
    return found


def table_rows(path: Path) -> dict[str, list[str]]:
    """The rows of the first table in `path`."""
    return tables(path)[0]


def data(run: Path) -> Path:
    return run / "results" / "data" / "synthetic"


def model(run: Path, name: str = "lstm-tanh") -> Path:
    return run / "results" / "models" / "synthetic" / name / "seed10"


def test_every_benchmark_script_has_a_test_here():
    tested = {
        name.removeprefix("test_").split("__")[0] for name in globals() if name.startswith("test_") and "__" in name
    }
    scripts = {path.stem for path in BENCHMARKS.glob("*.py")}
    assert scripts - set(NOT_RUN_HERE) == tested, (
        "a benchmark script without a test here (test_<script>__<what>), or a test of none"
    )


@pytest.mark.slow
def test_train_throughput__lengths_of_any_dataset(quick_run, tmp_path):
    out = tmp_path / "throughput.md"
    run_benchmark(
        "train_throughput",
        "--data",
        data(quick_run),
        "--encoders",
        "average",
        "--batches",
        2,
        "--threads",
        1,
        "--out",
        out,
    )
    rows = table_rows(out)
    assert list(rows) == ["inputs", "synthetic-length"]
    assert rows["synthetic-length"][0] == "average" and rows["synthetic-length"][3].endswith("×")


@pytest.mark.slow
def test_train_speed__every_variant_one_epoch(quick_run, tmp_path):
    out = tmp_path / "train_speed.md"
    run_benchmark(
        "train_speed",
        "--results",
        quick_run / "results",
        "--dataset",
        "synthetic",
        "--model",
        "lstm-tanh",
        "--epochs",
        1,
        "--threads",
        1,
        "--profile-steps",
        2,
        "--out",
        out,
    )
    per_epoch, per_step = tables(out)
    assert set(per_epoch) == set(per_step) == {"variant", "reference", "packed_for_loop", "previous", "default", "lazy"}
    assert per_epoch["default"][11] == "1"  # the selected epoch, of the one trained
    assert "<run>/results" in out.read_text(encoding="utf-8") and str(quick_run) not in out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_denormals__a_trained_model(quick_run, tmp_path):
    out = tmp_path / "denormals.md"
    run_benchmark("denormals", "--data", data(quick_run), "--model", model(quick_run), "--batches", 2, "--out", out)
    row = table_rows(out)["synthetic lstm-tanh"]
    assert row[2].endswith("×") and row[3].endswith("%")


@pytest.mark.slow
def test_jain_wallace_speed__suite_and_oracle_loops(quick_run, tmp_path):
    out = tmp_path / "jain_wallace_speed.md"
    run_benchmark(
        "jain_wallace_speed",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        3,
        "--reference-instances",
        2,
        "--threads",
        1,
        "--out",
        out,
    )
    suite, oracle_loops = tables(out)
    assert set(suite) == {"experiment", "gradient", "permutation", "adversarial", "leave-one-out", "**suite**"}
    assert set(oracle_loops) == {
        "experiment",
        "permutation (100 per instance)",
        "adversarial search (K = 5, 500 steps)",
        "leave-one-out (every token)",
    }
    assert "the first 3 test instances of `synthetic`" in out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_adversary_agreement__few_instances(quick_run, tmp_path):
    out = tmp_path / "adversary_agreement.md"
    run_benchmark(
        "adversary_agreement",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        3,
        "--threads",
        1,
        "--out",
        out,
    )
    assert table_rows(out)["instances"] == ["3"]


@pytest.mark.slow
def test_aopc_bounds__few_instances(quick_run, tmp_path):
    out = tmp_path / "aopc_bounds.md"
    run_benchmark(
        "aopc_bounds",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        6,
        "--widths",
        2,
        4,
        "--exact-max-units",
        12,
        "--threads",
        1,
        "--out",
        out,
    )
    first, second = tables(out)
    assert set(first) == {"bounds", "exact", "beam, width 2", "beam, width 4"}
    assert int(first["exact"][0]) + int(first["beam, width 4"][0]) == 6  # every instance, one way or the other
    assert 0 <= float(second["2"][0]) <= 1


@pytest.mark.slow
def test_loo_deletion__few_instances(quick_run, tmp_path):
    out = tmp_path / "loo_deletion.md"
    run_benchmark("loo_deletion", "--data", data(quick_run), "--instances", 3, "--threads", 1, "--out", out)
    rows = table_rows(out)
    assert set(rows) == {"encoder", "`lstm`", "`lstm-ortho`"}
    assert all(float(row[3]) < 1e-5 for key, row in rows.items() if key != "encoder")  # the same probabilities


@pytest.mark.slow
def test_ig_convergence__few_instances(quick_run, tmp_path):
    out = tmp_path / "ig_convergence.md"
    run_benchmark(
        "ig_convergence",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        6,
        "--steps",
        8,
        "--max-steps",
        32,
        "--threads",
        1,
        "--out",
        out,
    )
    first, second = tables(out)
    assert set(first) == {"`ig_method`", "`gausslegendre`", "`riemann_trapezoid`", "`adaptive`"}
    assert all(0 <= float(row[0]) <= 1 and int(row[2]) <= 32 for key, row in first.items() if key != "`ig_method`")
    assert set(second) == {"`ig_method`", "`riemann_trapezoid`", "`adaptive`"}


@pytest.mark.slow
def test_adversary_convergence__few_instances(quick_run, tmp_path):
    out = tmp_path / "adversary_convergence.md"
    run_benchmark(
        "adversary_convergence",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        3,
        "--every",
        250,
        "--threads",
        1,
        "--out",
        out,
    )
    rows = table_rows(out)
    assert set(rows) == {"after step", "250", "500"}
    assert rows["500"] == ["0", "0", "0.0%"]  # the full search against itself


@pytest.mark.slow
def test_long_documents__every_method(quick_run, tmp_path):
    out = tmp_path / "long_documents.md"
    run_benchmark(
        "long_documents",
        "--model",
        model(quick_run),
        "--data",
        data(quick_run),
        "--instances",
        3,
        "--threads",
        1,
        "--out",
        out,
    )
    assert {"attention", "gradient", "loo", "ig", "**all**"} <= set(table_rows(out))
    assert "IG convergence:" in out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_serrano_smith_speed__fresh_and_trained_models(quick_run, tmp_path):
    out = tmp_path / "serrano_smith_speed.md"
    run_benchmark(
        "serrano_smith_speed",
        "--data",
        data(quick_run),
        "--model",
        "han-rnn",
        "--instances",
        5,
        "--reference-instances",
        2,
        "--threads",
        1,
        "--out",
        out,
    )
    assert table_rows(out)["han-rnn (synthetic, sentences)"][0] == "5"
    run_benchmark(
        "serrano_smith_speed",
        "--data",
        data(quick_run),
        "--checkpoint",
        model(quick_run, "flan-conv") / "model.pt",
        "--instances",
        5,
        "--reference-instances",
        2,
        "--threads",
        1,
        "--out",
        out,
    )
    assert table_rows(out)["flan-conv (synthetic, tokens)"][0] == "5"


@pytest.mark.slow
def test_job_startup__one_round(quick_run, tmp_path):
    out = tmp_path / "job_startup.md"
    run_benchmark("job_startup", "--data", data(quick_run), "--rounds", 1, "--work", tmp_path / "work", "--out", out)
    rows = table_rows(out)
    assert list(rows) == [
        "job",
        "explain_together",
        "explain/ig",
        "jw_correlations",
        "jw_permutation",
        "jw_adversarial",
    ]
    # the jobs ran on the cut test split, its digests rewritten: one instance explained and searched
    run = tmp_path / "work" / "current" / "results"
    assert len((run / "explain/synthetic/lstm-tanh/seed10/ig.jsonl").read_text().splitlines()) == 1
    assert (
        len((run / "jain_wallace/synthetic/lstm-tanh/seed10/adversarial.csv").read_text().splitlines()) == 2
    )  # header + 1
    stats = json.loads((tmp_path / "work" / "fixture" / "data" / "synthetic" / "stats.json").read_text())
    assert stats["splits"]["test"]["n"] == 1


@pytest.mark.slow
def test_job_startup__a_baseline_reading_other_params_stops_with_one_line(quick_run, tmp_path):
    baseline = tmp_path / "baseline"
    shutil.copytree(REPO / "scripts", baseline / "scripts")
    (baseline / "src").symlink_to(REPO / "src")
    script = baseline / "scripts" / "jw_permutation.py"
    script.write_text(script.read_text().replace("snakemake.params.settings", "snakemake.params.permutation_settings"))
    command = [
        sys.executable,
        str(BENCHMARKS / "job_startup.py"),
        "--data",
        str(data(quick_run)),
        "--baseline",
        str(baseline),
        "--rounds",
        "1",
        "--work",
        str(tmp_path / "work"),
        "--out",
        str(tmp_path / "job_startup.md"),
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {script} reads snakemake.params.permutation_settings, which this benchmark's stand-in for rule jw_permutation does not "
        "give (it gives device, settings, torch_threads): that checkout's rules differ from the current ones"
    ]
    assert not (tmp_path / "job_startup.md").exists()


@pytest.mark.slow
def test_cost_model__rates_from_a_quick_run(quick_run, tmp_path):
    out, rates = tmp_path / "cost_model.md", tmp_path / "cost_rates.json"
    run_benchmark(
        "cost_model",
        "--measured",
        quick_run / "results",
        "--about",
        "a quick-preset run",
        "--rates-out",
        rates,
        "--out",
        out,
    )
    assert json.loads(rates.read_text())["about"] == "a quick-preset run"
    assert "train_model" in table_rows(out)
    assert "Datasets with measured sizes: synthetic, synthetic_qa." in out.read_text(encoding="utf-8")


def test_cost_model__a_plan_priced_with_the_committed_rates(tmp_path):
    out = tmp_path / "cost_model.md"
    run_benchmark("cost_model", "--rates", REPO / "benchmarks" / "cost_rates.json", "--threads", "1", "--out", out)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("Cost model of `snakemake --cores N` (config.yaml), from the rates of cost_rates.json (")
    assert "train_model" in table_rows(out) and "| 2 cores |" in text


@pytest.mark.slow
def test_wiegreffe_pinter_cost__every_role_trained(quick_run, tmp_path):
    out = tmp_path / "wiegreffe_pinter_cost.md"
    run_benchmark(
        "wiegreffe_pinter_cost", "--results", quick_run, "--configfile", REPO / "presets" / "quick.yaml", "--out", out
    )
    text = out.read_text(encoding="utf-8")
    roles = [line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| synthetic |")]
    assert roles[:5] == ["base", "uniform", "seed models", "adversaries", "diagnostic MLPs"]
    assert "not trained yet" not in text
