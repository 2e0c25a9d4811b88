"""benchmarks/cost_model.py: measured seconds per unit of work, priced over a plan."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cost_model():
    spec = importlib.util.spec_from_file_location("cost_model", ROOT / "benchmarks" / "cost_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STATS = {
    "splits": {
        "train": {"n": 100, "mean_length": 20.0},
        "dev": {"n": 10, "mean_length": 20.0},
        "test": {"n": 50, "mean_length": 10.0},
    }
}


def test_benchmark_paths_name_the_rule_and_wildcards(cost_model, tmp_path):
    root = tmp_path / "results" / "benchmarks"
    assert cost_model.parse_benchmark_path(root / "explain/sst/lstm-tanh/seed10/loo.tsv", root) == (
        "explain",
        {"dataset": "sst", "model": "lstm-tanh", "seed": "10", "method": "loo"},
    )
    assert cost_model.parse_benchmark_path(root / "jw_permutation/sst/lstm-tanh/seed10.tsv", root) == (
        "jw_permutation",
        {"dataset": "sst", "model": "lstm-tanh", "seed": "10"},
    )
    assert cost_model.parse_benchmark_path(root / "preprocess_dataset/sst.tsv", root) == (
        "preprocess_dataset",
        {"dataset": "sst"},
    )


def test_units_grow_with_what_each_job_costs(cost_model):
    assert cost_model.units(("train_model", None), STATS, 8) == 100 * 20 * 8
    assert cost_model.units(("explain", "gradient"), STATS, None) == 50 * 10
    assert cost_model.units(("explain", "loo"), STATS, None) == 50 * 10 * 10  # every instance re-run once per token
    # attention, gradient and leave-one-out in one job: priced as its leave-one-out
    assert cost_model.job_type("explain_together", {"dataset": "sst", "model": "lstm-tanh", "seed": "10"}) == (
        "explain",
        "loo",
    )
    assert cost_model.units(("faithfulness_eraser", None), STATS, None) == 50 * 10 * (70 + 10)
    assert cost_model.units(("export_attention", None), STATS, None) == 100 * 20 + 10 * 20 + 50 * 10
    assert cost_model.units(("build_embeddings", None), STATS, None) == 100 * 20


def test_measured_jobs_read_benchmark_files_and_training_timings(cost_model, tmp_path):
    import yaml

    from attnexp.config import validate_config

    config = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    results = tmp_path / "results"
    (results / "data" / "sst").mkdir(parents=True)
    (results / "data" / "sst" / "stats.json").write_text(json.dumps(STATS))
    bench = results / "benchmarks" / "explain" / "sst" / "lstm-tanh" / "seed10"
    bench.mkdir(parents=True)
    (bench / "loo.tsv").write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t100\n")
    run = results / "models" / "sst" / "cnn-tanh" / "seed10"
    run.mkdir(parents=True)
    (run / "timing.json").write_text(json.dumps({"train_seconds": 40.0, "epochs_run": 4}))
    jobs = {(j["type"], j["family"]): (j["seconds"], j["units"]) for j in cost_model.measured_jobs(results, config)}
    # a training's units: training tokens x the epochs its protocol plans (8), not the 4 early stopping ran
    assert jobs == {(("explain", "loo"), "lstm"): (12.5, 5000.0), (("train_model", None), "cnn"): (40.0, 16000.0)}


def test_a_plan_is_priced_by_dataset_then_family_then_job_type_and_the_rest_is_counted_unpriced():
    import yaml

    from attnexp.config import validate_config
    from attnexp.cost import price, price_markdown
    from attnexp.cost_rates import fit_rates

    config = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    for name in ("sst", "imdb"):  # priced at STATS's sizes, not at the J&W sizes the config declares
        config["datasets"][name]["expected"] = None
    jobs = [  # 2 s of start-up (the fastest explanation job) + 0.001 s per test token
        {"type": ("explain", "gradient"), "family": "lstm", "dataset": "sst", "seconds": 2.5, "units": 500.0},
        {
            "type": ("explain", "gradient"),
            "family": "lstm",
            "dataset": "synthetic",
            "seconds": 2.0,
            "units": 1.0,
            "generated": True,
        },
        {"type": ("train_model", None), "family": "lstm", "dataset": "sst", "seconds": 80.0, "units": 8000.0},
    ]
    rates = fit_rates(jobs, {"sst": STATS, "imdb": STATS}, about="test")
    assert rates["overhead_seconds"] == 2.0
    pooled = {(r["rule"], r["method"], r["family"], r["dataset"]): r["seconds_per_unit"] for r in rates["rates"]}
    assert (
        pooled[("explain", "gradient", "lstm", None)] == 0.001
    )  # the generated dataset's reduced models are not pooled
    assert pooled[("explain", "gradient", "lstm", "synthetic")] == 0.0
    plan = [
        (
            "explain",
            {"dataset": "sst", "model": "lstm-tanh", "seed": "10", "method": "gradient"},
        ),  # its own dataset's rate
        (
            "explain",
            {"dataset": "imdb", "model": "cnn-tanh", "seed": "10", "method": "gradient"},
        ),  # cnn never measured: the type's rate
        (
            "train_model",
            {"dataset": "imdb", "model": "lstm-tanh", "seed": "10"},
        ),  # the family's rate x the protocol's 8 epochs
        ("explain", {"dataset": "babi1", "model": "lstm-tanh", "seed": "10", "method": "loo"}),  # never measured
        ("jw_tables", {}),  # light
    ]
    by_type, light, _ = price(plan, rates, config)
    gradient, train, loo = by_type[("explain", "gradient")], by_type[("train_model", None)], by_type[("explain", "loo")]
    assert gradient["jobs"] == 2 and gradient["borrowed"] == 1 and abs(gradient["seconds"] - 2 * (2.0 + 0.5)) < 1e-9
    assert abs(train["seconds"] - 0.01 * 100 * 20 * 8) < 1e-9 and train["borrowed"] == 0
    assert loo["unpriced"] == 1 and light == {"jw_tables": 1}
    text = "\n".join(price_markdown(by_type, light, (2,), 1))
    assert "Priced: 3 of 4 compute jobs" in text and "1 of them at the median rate of their job type" in text
    assert "Not priced: 1 compute jobs" in text and "| 2 cores | 3 min |" in text  # the longest job (160 s) bounds it


def test_merged_rates_add_the_families_never_measured_and_change_no_other_rate():
    from attnexp.cost_rates import fit_rates, merge_rates

    def job(family, seconds):
        return {"type": ("train_model", None), "family": family, "dataset": "sst", "seconds": seconds, "units": 100.0}

    base = fit_rates([job("lstm", 10.0)], {"sst": STATS}, about="base")
    added = fit_rates([job("lstm", 50.0), job("pretrained-minilm", 200.0)], {"imdb": STATS}, about="added")
    merged = merge_rates(base, added)
    table = {(r["rule"], r["family"], r["dataset"]): r["seconds_per_unit"] for r in merged["rates"]}
    assert table[("train_model", "lstm", "sst")] == 0.1 and table[("train_model", None, None)] == 0.1  # base's own
    assert table[("train_model", "pretrained-minilm", "sst")] == 2.0  # the family base never measured
    assert merged["about"] == "base; the families pretrained-minilm: added"
    assert set(merged["datasets"]) == {"sst", "imdb"} and merged["overhead_seconds"] == base["overhead_seconds"]
    assert merge_rates(base, base) == base


def test_a_pretrained_encoder_is_priced_as_its_own_family():
    import yaml

    from attnexp.config import merge_overlay, validate_config
    from attnexp.cost import RATES_PATH, price
    from attnexp.cost_units import family

    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    merge_overlay(config, yaml.safe_load((ROOT / "presets" / "pretrained_sst.yaml").read_text()))
    config = validate_config(config)
    assert family(config, "sst", "minilm-cls") == "pretrained-minilm"
    plan = [("train_model", {"dataset": "sst", "model": "minilm-cls", "seed": "10"})]
    rates = json.loads(RATES_PATH.read_text())
    by_type, _, _ = price(plan, rates, config)
    train = by_type[("train_model", None)]
    # priced at the encoder's own measured rate, never at a recurrent family's
    assert train["jobs"] == 1 and train["unpriced"] == 0 and train["borrowed"] == 0
    assert train["seconds"] > 60  # a fine-tune of 6,355 sentences: minutes on 2 cores
    # without the encoder's rates it is not priced, and said so (no other family's rate stands in)
    rates["rates"] = [r for r in rates["rates"] if r["family"] != "pretrained-minilm"]
    by_type, _, _ = price(plan, rates, config)
    train = by_type[("train_model", None)]
    assert train["unpriced"] == 1 and train["borrowed"] == 0


def test_the_cost_command_fails_in_one_line_on_a_missing_rates_file(tmp_path, capsys):
    from attnexp.cost import main

    assert main(["--rates", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nope.json" in err and err.count("\n") == 1


def test_the_cost_command_fails_in_one_line_on_a_damaged_rates_file_or_overlay(tmp_path, capsys):
    from attnexp.cost import main

    (tmp_path / "rates.json").write_text("{not json")
    assert main(["--rates", str(tmp_path / "rates.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'rates.json'}: not a rates file") and err.count("\n") == 1
    (tmp_path / "overlay.yaml").write_text("train:\n  seeds: [10\n")
    assert main(["--configfile", str(tmp_path / "overlay.yaml")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: {tmp_path / 'overlay.yaml'}, line 3, column 1: not valid YAML") and err.count("\n") == 1
    )


def test_the_cost_command_prices_what_is_left_in_a_run_folder_of_your_own_data(tmp_path, capsys, monkeypatch):
    from attnexp.cost import main
    from attnexp.data.example_reviews import write_example

    run = tmp_path / "run"
    write_example(run / "examples" / "reviews", train_rows=60, test_rows=20)
    monkeypatch.chdir(tmp_path)  # the example's files are relative to the run folder, not to here
    overlay = str(ROOT / "presets" / "own_data_example.yaml")
    assert main(["--configfile", overlay]) == 2
    assert "examples/reviews/reviews_train.csv is not a file" in capsys.readouterr().err

    assert main(["--configfile", overlay, "--directory", "run"]) == 0
    out = capsys.readouterr().out
    assert "--directory run`: 100 jobs still to run" in out
    assert "No split sizes for reviews, so its jobs are not priced" in out
    assert "results/data/reviews/stats.json" in out

    # once the dataset is preprocessed, the run's own split sizes price its jobs
    stats = run / "results" / "data" / "reviews" / "stats.json"
    stats.parent.mkdir(parents=True)
    stats.write_text(json.dumps(STATS))
    assert main(["--configfile", overlay, "--directory", "run"]) == 0
    out = capsys.readouterr().out
    assert "No split sizes" not in out
    trained = next(line for line in out.splitlines() if line.startswith("| train_model |"))
    assert trained.split("|")[3].strip() != "0"  # priced


def test_the_cost_command_refuses_a_directory_that_is_not_a_folder(tmp_path, capsys):
    from attnexp.cost import main

    assert main(["--directory", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --directory {tmp_path / 'nope'}: not a folder (expected a run folder)\n"


def test_the_replication_presets_stated_cost_agrees_with_the_cost_tool():
    """The replication preset's header states the measured cost of the published run; the cost tool,
    pricing the same plan with the committed rates, agrees within 20 % (job-hours and 2-core wall)."""
    from attnexp.config import load_config
    from attnexp.cost import RATES_PATH, planned_jobs, price, wall_seconds

    preset = ROOT / "presets" / "replication.yaml"
    header = re.search(
        r"^# Measured cost[^:]*: ([\d.]+) job-hours, (\d+) h (\d+) min of wall time on 2 cores",
        preset.read_text(),
        re.MULTILINE,
    )
    assert header, "presets/replication.yaml states its measured cost in a '# Measured cost ...' line"
    stated_hours, stated_wall = float(header[1]), int(header[2]) * 3600 + int(header[3]) * 60
    config = load_config(preset)
    by_type, _, _ = price(planned_jobs(preset), json.loads(RATES_PATH.read_text()), config)
    priced = sum(r["seconds"] for r in by_type.values())
    assert sum(r["unpriced"] for r in by_type.values()) == 0
    assert abs(priced / 3600 - stated_hours) <= 0.2 * stated_hours
    assert abs(wall_seconds(by_type, 2, config["train"]["threads"]) - stated_wall) <= 0.2 * stated_wall


def test_a_split_the_config_declares_another_size_is_priced_at_that_size():
    import yaml

    from attnexp.config import validate_config
    from attnexp.cost import declared_sizes

    config = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    measured = {
        "imdb": {"splits": {"train": {"n": 17231, "mean_length": 205.0}, "test": {"n": 4356, "mean_length": 199.0}}}
    }
    # the default's J&W test size (2,184 + 2,172, within its 5 %) keeps the measured one
    assert declared_sizes(measured, config) == measured
    # an eighth of it, declared by the config that asks for it (presets/zoo_imdb.yaml), is priced as declared
    config["datasets"]["imdb"]["expected"] = {"test": {"0": 273, "1": 272}}
    sizes = declared_sizes(measured, config)["imdb"]["splits"]
    assert sizes["test"] == {"n": 545, "mean_length": 199.0} and sizes["train"]["n"] == 17231
    assert measured["imdb"]["splits"]["test"]["n"] == 4356, "the rates are left as they are"
    # a split a mirror's stand-in files make (bAbI 3's 1k training file for the published 10k) keeps its size
    babi3 = {"babi3": {"splits": {"train": {"n": 1000, "mean_length": 50.0}}}}
    assert declared_sizes(babi3, config) == babi3


def test_an_explain_together_job_with_integrated_gradients_is_priced_as_its_leave_one_out_and_ig():
    import yaml

    from attnexp.config import validate_config
    from attnexp.cost import price
    from attnexp.cost_rates import fit_rates
    from attnexp.cost_units import job_types

    config = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    config["datasets"]["sst"]["expected"] = None
    run = {"dataset": "sst", "model": "lstm-tanh", "seed": "10"}
    assert job_types("explain_together", run, config) == (("explain", "loo"),)
    config["explain"]["together"] = ["attention", "gradient", "loo", "ig"]
    assert job_types("explain_together", run, config) == (("explain", "loo"), ("explain", "ig"))
    jobs = [  # 2 s of start-up; leave-one-out 0.001 s per unit (5000), IG 0.01 s per test token (500)
        {"type": ("explain", "loo"), "family": "lstm", "dataset": "sst", "seconds": 7.0, "units": 5000.0},
        {"type": ("explain", "ig"), "family": "lstm", "dataset": "sst", "seconds": 7.0, "units": 500.0},
        {"type": ("explain", "gradient"), "family": "lstm", "dataset": "sst", "seconds": 2.0, "units": 500.0},
    ]
    by_type, _, _ = price([("explain_together", run)], fit_rates(jobs, {"sst": STATS}, about="test"), config)
    loo, ig = by_type[("explain", "loo")], by_type[("explain", "ig")]
    assert abs(loo["seconds"] - 7.0) < 1e-9 and abs(ig["seconds"] - 5.0) < 1e-9  # one start-up for the job


def test_the_seconds_of_an_explain_together_job_with_more_methods_give_no_rate(cost_model, tmp_path):
    import yaml

    from attnexp.config import validate_config

    config = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    results = tmp_path / "results"
    (results / "data" / "sst").mkdir(parents=True)
    (results / "data" / "sst" / "stats.json").write_text(json.dumps(STATS))
    bench = results / "benchmarks" / "explain_together" / "sst" / "lstm-tanh"
    bench.mkdir(parents=True)
    (bench / "seed10.tsv").write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t100\n")
    assert [j["type"] for j in cost_model.measured_jobs(results, config)] == [("explain", "loo")]
    config["explain"]["together"] = ["attention", "gradient", "loo", "ig"]
    assert cost_model.measured_jobs(results, config) == []  # leave-one-out's seconds and IG's, not to be split
