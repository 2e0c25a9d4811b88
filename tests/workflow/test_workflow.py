"""The workflow end to end: Snakemake itself, in fresh working folders, on the offline mirror.

These tests run real jobs (download from the mirror, extraction, preprocessing, training, the
experiments), so they are the slow part of the suite: each test that runs a real job is marked
`slow` (deselect with `-m "not slow"`); the dry runs are not. The mirror ones are skipped when
the mirror folder is absent.

Environment:

- `ATTNEXP_MIRROR`: the dataset mirror folder (default: `shared/datasets` in the folder that holds the checkout).
- `ATTNEXP_TEST_TIMEOUT`: seconds one Snakemake call may take before the test fails (a float); unset,
  a call may take as long as it needs (the quick preset grows with every stage, and 2-core machines
  shared with other jobs are slow).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import console_of
from snakemake_runs import snakemake

from attnexp.config import load_config
from attnexp.cost import planned_jobs

REPO = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("ATTNEXP_MIRROR", REPO.parent / "shared" / "datasets"))
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no dataset mirror at {MIRROR}")


def overlay(tmp_path: Path, config: dict) -> str:
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def tree_digest(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 of every file under root, except those named in `skip` (wall-clock timings, logs)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in skip
    }


def stats(workdir: Path, dataset: str) -> dict:
    return json.loads((workdir / "results" / "data" / dataset / "stats.json").read_text())


def by_label(s: dict, split: str) -> dict:
    return s["splits"][split]["by_label"]


# ----------------------------------------------------------------------------- planning


def test_dry_run_plans_download_and_preprocess_for_every_enabled_dataset(tmp_path):
    config = load_config()  # `datasets_enabled` decides each dataset's `enabled`
    enabled = sorted(name for name, ds in config["datasets"].items() if ds["enabled"])
    assert len(enabled) == 9  # every dataset the replication runs
    result = snakemake(tmp_path, "-n", "--cores", "1")
    out = result.stdout + result.stderr
    for dataset in enabled:
        assert f"results/data/{dataset}/stats.json" in out, dataset
        if config["datasets"][dataset].get("sources"):
            assert f"resources/{dataset}/" in out, dataset
    assert "download_source" in out and "preprocess_dataset" in out and "tabulate_datasets" in out


def test_the_default_config_plans_exactly_the_replication_presets_jobs():
    """`snakemake --cores 8` with no preset regenerates what docs/replication publishes: the default
    config and presets/replication.yaml (the preset the published run names) plan the same jobs."""
    default = sorted(map(repr, planned_jobs()))
    replication = sorted(map(repr, planned_jobs(REPO / "presets" / "replication.yaml")))
    assert default == replication
    rules = Counter(job.split("'")[1] for job in default)
    assert rules["train_model"] > 100 and rules["jw_adversarial"] and rules["ss_interventions"] and rules["wp_frontier"]


def test_the_job_counts_the_docs_state_are_generated_from_dry_runs(tmp_path):
    """Every job count of the README and getting-started is a marked one that `python -m attnexp.job_counts`
    writes from the plans (`attnexp.cost.planned_jobs`: the jobs that write outputs), up to date; the one given
    for Snakemake's own count is its dry run's total, one more (the rule `all`). Dry runs: no data needed."""
    from attnexp.job_counts import MARKED, count
    from attnexp.job_counts import main as job_counts

    pages = [REPO / "README.md", REPO / "docs" / "getting-started.md"]
    assert job_counts(["--check", *map(str, pages)]) == 0, (
        "run python -m attnexp.job_counts README.md docs/getting-started.md"
    )
    for page in pages:
        # a count outside the markers would be typed: every "N jobs" is a marked one
        prose = MARKED.sub("", page.read_text(encoding="utf-8"))
        assert not re.findall(r"\b\d+ jobs\b", prose), f"{page.name} states a job count by hand"
    totals = re.findall(r"^total\s+(\d+)$", snakemake(tmp_path, "-n", "--cores", "1").stdout, re.M)
    assert totals and int(totals[-1]) == count("dry-run total", "default") == count("jobs", "default") + 1
    assert not any(rule == "all" for rule, _ in planned_jobs())


def test_a_stale_or_unknown_job_count_is_found(tmp_path, capsys):
    from attnexp.job_counts import main as job_counts

    page = tmp_path / "page.md"
    page.write_text("The quick preset: <!-- jobs: quick -->1<!-- /jobs --> jobs.\n", encoding="utf-8")
    assert job_counts(["--check", str(page)]) == 1
    assert job_counts([str(page)]) == 0 and job_counts(["--check", str(page)]) == 0
    assert "<!-- jobs: quick -->1<!-- /jobs -->" not in page.read_text(encoding="utf-8")
    page.write_text("<!-- jobs: no_such_preset -->1<!-- /jobs -->\n", encoding="utf-8")
    assert job_counts([str(page)]) == 2
    assert "there is no presets/no_such_preset.yaml" in capsys.readouterr().err


def test_every_job_the_plan_runs_is_a_job_the_provenance_counts(tmp_path):
    """The published provenance counts the jobs from their logs (`record.job_commits`): a run folder
    holding the log of every job the quick preset plans counts each of them, training's included."""
    from attnexp.publish.record import job_commits

    done = snakemake(tmp_path / "plan", "-n", "--cores", "1", "--configfile", str(REPO / "presets" / "quick.yaml"))
    logs = [log for line in re.findall(r"^    log: (.+)$", done.stdout, re.M) for log in line.split(", ")]
    assert any(log.endswith("/train.log") for log in logs)
    for log in logs:
        (tmp_path / "run" / log).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "run" / log).write_text("attnexp commit: " + "a" * 40 + "\n", encoding="utf-8")
    counted = job_commits(tmp_path / "run")
    assert list(counted) == ["a" * 40]
    assert len(counted["a" * 40]) == len(set(logs)) == len(planned_jobs(REPO / "presets" / "quick.yaml"))


def test_a_planted_dataset_gets_a_shifted_test_set_from_its_base_and_each_model_is_scored_on_it():
    jobs = planned_jobs(REPO / "presets" / "transformer_checks.yaml")
    shifted = {w["dataset"] for rule, w in jobs if rule == "shifted_test"}
    assert "planted_sst" in shifted
    scored = {(w["dataset"], w["model"]) for rule, w in jobs if rule == "jw_shifted_accuracy"}
    assert {("planted_sst", "lstm-tanh"), ("planted_sst", "transformer-cls")} <= scored


def test_unknown_config_key_fails_before_any_job_with_the_key_named(tmp_path):
    result = snakemake(
        tmp_path,
        "-n",
        "--cores",
        "1",
        "--configfile",
        overlay(tmp_path, {"datasets": {"sst": {"min_cuont": 3}}}),
        check=False,
    )
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "config key 'datasets.sst'" in message and "min_cuont" in message
    assert not (tmp_path / "results").exists()


def test_a_refused_configuration_reaches_the_console_as_its_message_alone(tmp_path):
    """Under the default profile, as a user runs it: `error:` and the problems, without Snakemake's
    "ConfigError in file ..., line N:" and the traceback's lines."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    command += ["-n", "--cores", "1", "--config", "datasets_enabled=[sst]", "--", "jain_wallace"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    refusal = lines.index("error: invalid configuration:")
    # each problem after the line of config.yaml that set the key (--config changed what it depends on)
    line = 1 + next(i for i, text in enumerate(CONFIG_LINES) if text.startswith("  datasets: [20news20, imdb_ratings]"))
    assert lines[refusal + 1 : refusal + 3] == [
        f"  {REPO / 'config.yaml'}:{line}: config key 'serrano_smith.datasets.0': dataset '20news20' is not enabled",
        f"  {REPO / 'config.yaml'}:{line}: config key 'serrano_smith.datasets.1': dataset 'imdb_ratings' is not enabled",
    ]
    assert not any(line.lstrip().startswith('File "') or "ConfigError in file" in line for line in lines)


CONFIG_LINES = (REPO / "config.yaml").read_text(encoding="utf-8").splitlines()


def default_profile_console(tmp_path: Path, *args: str, dry: bool = True) -> tuple[int, list[str]]:
    """A (dry) run of the workflow as a user types it in the checkout (`snakemake --cores 1 -n ...`: the
    default profile), in the folder `run` of `tmp_path`: the exit status and the console's non-empty lines."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path / "run")]
    command += ["--cores", "1", *(["-n"] if dry else []), *args]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    return result.returncode, [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]


def one_error_line(lines: list[str]) -> str:
    """The console's one `error:` line, after checking that it is the only one and that no traceback or
    Snakemake exception surrounds it."""
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, lines
    assert not any(
        line.startswith(("Traceback", "WorkflowError", "FileNotFoundError")) or line.lstrip().startswith('File "')
        for line in lines
    ), lines
    return errors[0]


def test_a_missing_overlay_is_one_line_naming_it(tmp_path):
    status, lines = default_profile_console(tmp_path, "--configfile", "presets/quick.yaml", "my_changes.yaml")
    assert status != 0
    assert one_error_line(lines) == (
        "error: --configfile my_changes.yaml: no such file; expected the path of a YAML config file, "
        f"relative to the folder the command runs in ({REPO})"
    )
    assert not (tmp_path / "run").exists()


def test_a_yaml_syntax_error_in_an_overlay_is_one_line_naming_its_file_line_and_what_yaml_expected(tmp_path):
    broken = tmp_path / "my_changes.yaml"
    broken.write_text("train:\n  seeds: [10, 11\n  threads: 2\n", encoding="utf-8")
    status, lines = default_profile_console(tmp_path, "--configfile", str(broken))
    assert status != 0
    assert one_error_line(lines) == (
        f"error: --configfile {broken}, line 3, column 10: not valid YAML (expected ',' or ']', but got ':' "
        "while parsing a flow sequence opened on line 2)"
    )
    broken.write_text("- train\n", encoding="utf-8")  # valid YAML, but not a mapping of keys
    status, lines = default_profile_console(tmp_path, "--configfile", str(broken))
    assert status != 0
    assert one_error_line(lines) == (
        f"error: --configfile {broken}: expected a mapping of config keys (key: value lines), got a YAML list"
    )


def users_dataset(tmp_path: Path, labels: str, train_rows: str) -> Path:
    """The overlay of a user's binary dataset `reviews` from the tables train.csv (`train_rows` after its
    header) and test.csv in the run folder (docs/own-data.md), with `labels` (YAML) on its line 11."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "train.csv").write_text("Text,Label\n" + train_rows, encoding="utf-8")
    (tmp_path / "run" / "test.csv").write_text("Text,Label\nfine film,good\ndull film,bad\n", encoding="utf-8")
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "datasets_enabled: [reviews]\n"
        "datasets:\n"
        "  reviews:\n"
        "    task: binary\n"
        "    protocol: jain_wallace\n"
        "    files:\n"
        "      train: train.csv\n"
        "      test: test.csv\n"
        "      text: Text\n"
        "      label: Label\n"
        f"      labels: {labels}\n"
        "      rationale: null\n"  # the columns the worked example's preset names, which these tables lack
        "      id: null\n"
        "    dev_fraction: 0.25\n",
        encoding="utf-8",
    )
    return mine


def test_a_label_mapping_for_a_users_dataset_is_one_line_naming_the_overlays_line(tmp_path):
    """docs/own-data.md: `labels` lists the classes in index order; a mapping of label values to
    indexes (what other tools take) is refused with the overlay's file and line and what it expects."""
    mine = users_dataset(tmp_path, "{bad: 0, good: 1}", "fine film,good\ndull film,bad\n")
    status, lines = default_profile_console(tmp_path, "--configfile", "presets/own_data_example.yaml", str(mine))
    assert status != 0
    assert one_error_line(lines) == (
        f"error: invalid configuration: {mine}:11: config key 'datasets.reviews.files.labels': "
        "{'bad': 0, 'good': 1} is not of type 'array', 'null' (the classes in index order (binary: the second is "
        "the positive class); null: the training labels, sorted)"
    )


@pytest.mark.slow
def test_a_mistyped_label_in_a_users_table_is_one_line_naming_its_file_and_line(tmp_path):
    """A label value outside the two of a binary task (a typo) stops the dataset's build with one line
    naming the table and the line of its first row, with the count of each label value."""
    rows = "".join(f"good film {i},good\ndull film {i},bad\n" for i in range(4)) + "nice film,goood\n"
    mine = users_dataset(tmp_path, "null", rows)
    target = "results/data/reviews/stats.json"
    status, lines = default_profile_console(
        tmp_path, "--configfile", "presets/own_data_example.yaml", str(mine), "--", target, dry=False
    )
    assert status != 0
    assert one_error_line(lines) == (
        "error: train.csv:10: the label 'goood' makes a class too many: a binary task needs 2, the training split "
        "has 3 (bad 3, good 3, goood 1 rows) [log: results/logs/preprocess_dataset/reviews.log]"
    )
    assert not (tmp_path / "run" / target).exists()


def test_misspelt_target_gets_the_closest_rule_and_the_targets(tmp_path):
    result = snakemake(tmp_path, "-n", "--cores", "1", "--", "jain_walace", check=False)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "unknown target 'jain_walace': no rule of that name. Did you mean 'jain_wallace'? Targets: all, " in message
    assert "MissingRuleException" not in message and not (tmp_path / "results").exists()
    # an existing rule, and a file, pass the check
    assert snakemake(tmp_path, "-n", "--cores", "1", "--", "data").returncode == 0


def test_wrong_type_is_reported_with_key_and_expected_type(tmp_path):
    result = snakemake(
        tmp_path,
        "-n",
        "--cores",
        "1",
        "--configfile",
        overlay(tmp_path, {"download": {"retries": "many"}}),
        check=False,
    )
    assert result.returncode != 0
    assert "config key 'download.retries'" in result.stderr + result.stdout
    assert "integer" in result.stderr + result.stdout


# the rules whose jobs run a model, so run on `device`: training, the attention export, every
# explanation method and every experiment on a trained model
DEVICE_RULES = {
    "train_model",
    "export_attention",
    "explain",
    "explain_together",
    "jw_permutation",
    "jw_adversarial",
    "ss_interventions",
    "faithfulness_eraser",
    "attention_attribution_heads",
    "attention_attribution_graphs",
}


def job_resources(output: str) -> dict[str, list[dict[str, str]]]:
    """A dry run's printout -> rule -> the `resources:` of each of its jobs."""
    jobs = {}
    for block in output.split("\nrule ")[1:]:
        line = next(line for line in block.splitlines() if line.strip().startswith("resources:"))
        resources = dict(item.split("=", 1) for item in line.split(":", 1)[1].strip().split(", "))
        jobs.setdefault(block.split(":", 1)[0], []).append(resources)
    return jobs


@pytest.mark.parametrize("device, gpus", [("cuda", "1"), ("auto", "0"), ("cpu", "0")])
def test_only_device_cuda_makes_the_model_jobs_request_a_gpu(tmp_path, device, gpus):
    """The whole default plan: every job of a rule that runs a model asks for `gpus` GPUs, no other
    job asks for one (a rule that loads a model without the `device` key would show up here)."""
    result = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", overlay(tmp_path, {"device": device}))
    jobs = job_resources(result.stdout + result.stderr)
    assert DEVICE_RULES <= set(jobs), DEVICE_RULES - set(jobs)
    for rule, resources in jobs.items():
        asked = {r.get("gpu", "0") for r in resources}
        assert asked == ({gpus} if rule in DEVICE_RULES else {"0"}), (rule, asked)


def test_an_experiment_asked_for_a_model_without_what_it_needs_fails_before_any_job(tmp_path):
    bad = overlay(tmp_path, {"serrano_smith": {"models": ["lstm-uniform"]}})
    result = snakemake(
        tmp_path, "-n", "--cores", "1", "--configfile", str(REPO / "presets" / "quick.yaml"), bad, check=False
    )
    assert result.returncode != 0
    assert (
        "config key 'serrano_smith.models.0': model 'lstm-uniform': the Serrano & Smith experiments need its own trained attention"
        in result.stdout + result.stderr
    )
    assert not (tmp_path / "results").exists()


# ----------------------------------------------------------------------------- quick preset


@pytest.mark.slow
def test_quick_preset_runs_offline_and_reruns_byte_identically(quick_runs):
    first, second = quick_runs  # two runs in fresh folders (tests/conftest.py); tests/test_publish.py publishes them
    console = console_of(first).read_text().splitlines()  # under the default profile, as a user runs it
    assert len(console) <= 300 and "Shell command" not in "\n".join(console), len(console)
    assert any(line.endswith(" steps (100%) done") for line in console)
    assert not any(line.startswith(("error", "Traceback")) for line in console)
    s = stats(first, "synthetic")
    assert [s["splits"][k]["n"] for k in ("train", "dev", "test")] == [4000, 500, 200]
    assert not (first / "resources").exists()  # nothing downloaded
    assert tree_digest(first / "results" / "data") == tree_digest(second / "results" / "data")
    assert tree_digest(first / "results" / "tables") == tree_digest(second / "results" / "tables")
    # every model family trained; weights, metrics and exported attention byte-identical across runs
    models = tree_digest(first / "results" / "models", skip=("timing.json", "train.log"))
    assert models == tree_digest(second / "results" / "models", skip=("timing.json", "train.log"))
    trained = {Path(p).parts[1] for p in models if p.endswith("model.pt")}
    assert {"lstm-tanh", "cnn-dot", "average-guided-lstm-tanh", "han-rnn", "flan-conv", "lstm-uniform"} <= trained
    assert any(p.startswith("synthetic_qa/") for p in models)
    assert {
        "lstm-tanh-adversary-1e0",
        "average-guided-lstm-tanh-adversary-1e0",
        "average-uniform",
    } <= trained
    for path in (first / "results" / "models").rglob("metrics.json"):
        metrics = json.loads(path.read_text())
        if "-adversary-" in metrics["model"]:  # W&P's adversaries see no gold label; their guided MLPs inherit that
            continue
        assert metrics["test"]["accuracy"] > 0.8, (path, metrics["test"])
    performance = (first / "results/tables/performance.md").read_text()
    assert "| synthetic | lstm-tanh |" in performance and "| synthetic_qa | cnn-dot |" in performance
    # the CI reproducibility check: explanations, J&W experiments, tables and figures byte-identical
    for stage in ("explain", "jain_wallace", "serrano_smith", "wiegreffe_pinter", "faithfulness", "claims", "figures"):
        digests = tree_digest(first / "results" / stage)
        assert digests and digests == tree_digest(second / "results" / stage), stage
    # `device: auto` on a machine without CUDA: every model-running job's log says what it chose
    logs = first / "results" / "logs"
    chose = [
        p.relative_to(logs).as_posix() for p in logs.rglob("*.log") if "device: cpu (setting 'auto')" in p.read_text()
    ]
    for job in (
        "explain/",
        "export_attention/",
        "jain_wallace/permutation/",
        "jain_wallace/adversarial/",
        "serrano_smith/interventions/",
        "faithfulness/eraser/",
    ):
        assert any(c.startswith(job) for c in chose), job
    figures = tree_digest(first / "results" / "figures" / "jain_wallace")
    for model in ("lstm-tanh", "average-tanh", "lstm-diversity-tanh"):
        for name in ("tau_histograms", "permutation", "adversarial_histogram", "adversarial_violin"):
            assert (
                f"synthetic/{model}/seed10/{name}.pdf" in figures and f"synthetic/{model}/seed10/{name}.png" in figures
            )
    assert {"ground_truth.pdf", "encoder_comparison.png"} <= set(figures)
    assert "synthetic_qa/average-tanh/seed10/adversarial_violin.png" in figures
    table2 = (first / "results/tables/jain_wallace_table2.csv").read_text()
    assert "synthetic,0,0,gradient_lstm" in table2 and "synthetic,1,1,loo_average" in table2
    assert "synthetic_qa,0,no,gradient_average" in table2  # the QA path: fewer than 4 answers, rows by label
    # Serrano & Smith on HAN (sentences) and FLAN (tokens): per-instance tables, figures, claims
    for model in ("han-rnn", "flan-conv"):
        removal = (first / f"results/serrano_smith/synthetic/{model}/seed10/removal.csv").read_text()
        assert removal.startswith("id,n,predicted,ranking,permutation,flipped,removed,fraction,removed_mass"), model
        assert f"delta_js/{model}/seed10.png" in tree_digest(first / "results" / "figures" / "serrano_smith")
    assert "synthetic/seed10/removal_fraction.pdf" in tree_digest(first / "results" / "figures" / "serrano_smith")
    claims = (first / "results/tables/claims.csv").read_text()
    assert "Jain & Wallace 2019,Table 2,synthetic" not in claims  # no published Table 2 row for synthetic
    assert 'Serrano & Smith 2019,"§6, removal box plots",synthetic,han-rnn' in claims
    # Wiegreffe & Pinter, reduced: 1 seed model beside the base, 1 λ value; Figures 2 and 4, Table 1, Tables 2-4, claims
    wp_figures = tree_digest(first / "results" / "figures" / "wiegreffe_pinter")
    for name in ("seeds_violin", "seeds_scatter", "jw_adversary_violin", "jw_adversary_scatter", "frontier", "example"):
        assert (
            f"synthetic/lstm-tanh/seed10/{name}.pdf" in wp_figures
            and f"synthetic/lstm-tanh/seed10/{name}.png" in wp_figures
        )
    frontier = (first / "results/wiegreffe_pinter/synthetic/lstm-tanh/seed10/frontier.csv").read_text().splitlines()
    assert [line.split(",")[:2] for line in frontier[1:2]] == [["adversary", "1"]]
    assert {line.split(",")[0] for line in frontier[2:]} == {"uniform", "seeds", "jw_adversary"}
    variance = (first / "results/wiegreffe_pinter/synthetic/lstm-tanh/seed10/seed_variance.csv").read_text()
    assert variance.count(",seeds,1,") == 200 and variance.count(",jw_adversary,1,") == 200
    assert "| Base model |" in (first / "results/tables/wiegreffe_pinter_diagnostic.md").read_text()
    assert (
        "Wiegreffe & Pinter 2019,Figure 4,synthetic,lstm-tanh,,1," in claims
    )  # a finding: no single seed, one seed here
    # faithfulness battery: every ranking and Random per J&W model, AOPC table, claims, curves per dataset
    eraser = (first / "results/faithfulness/synthetic/lstm-tanh/seed10/eraser.csv").read_text().splitlines()
    header = eraser[0].split(",")
    assert header == [
        "ranking",
        "id",
        "bin",
        "k",
        "n",
        "comprehensiveness",
        "sufficiency",
        "unit",
        "comprehensiveness_min",
        "comprehensiveness_max",
        "sufficiency_min",
        "sufficiency_max",
        "bounds",
        "ig_converged",
        "operator",
    ]
    rows = [dict(zip(header, line.split(","))) for line in eraser[1:]]
    assert {r["ig_converged"] for r in rows if r["ranking"] == "ig"} <= {"True", "False"}
    assert {r["ig_converged"] for r in rows if r["ranking"] != "ig"} == {""}
    assert [*dict.fromkeys(r["operator"] for r in rows)] == ["delete", "zero", "attention_mask"]  # the preset's
    assert {r["bounds"] for r in rows} <= {"exact", "beam", ""}
    bounded = {(r["operator"], r["id"]) for r in rows if r["bounds"]}
    assert len(bounded) == 3 * 5  # 5 instances per operator (the preset's budget)
    assert {r["ranking"] for r in rows} == {
        "attention",
        "gradient",
        "loo",
        "ig",
        "attention_x_gradient",
        "random",
    }
    aopc = (first / "results/tables/faithfulness_aopc.csv").read_text()
    assert all(
        f"synthetic,{m},10,delete,tokens,loo," in aopc
        for m in ("lstm-tanh", "average-tanh", "transformer-cls", "flan-conv", "lstm-diversity-tanh")
    )
    assert (
        "synthetic,transformer-cls,10,delete,tokens,rollout," in aopc
        and "synthetic,transformer-cls,10,zero,tokens,attattr," in aopc
    )
    assert "synthetic,transformer-cls,10,attention_mask," not in aopc  # its attention runs inside its layers
    assert (
        "synthetic,han-rnn,10,delete,sentences,attention," in aopc
        and "synthetic,han-rnn,10,zero,sentences,loo," in aopc
    )
    assert "synthetic,han-rnn,10,attention_mask," not in aopc and "synthetic,flan-conv,10,attention_mask," in aopc
    assert "aopc_comprehensiveness_normalised" in aopc.splitlines()[0]
    assert "Raw against normalised" in (first / "results/tables/faithfulness_aopc.md").read_text()
    assert "DeYoung et al. 2020,AOPC,synthetic,lstm-tanh,10,1,AOPC-comprehensiveness(loo)" in claims
    assert "DeYoung et al. 2020,AOPC,synthetic,lstm-tanh,10,1,normalised AOPC-comprehensiveness(loo)" in claims
    # the violation test (Liu et al. 2022): every signed explainer and Random per model, its table and claims
    violation = (first / "results/faithfulness/synthetic/lstm-tanh/seed10/violation.csv").read_text().splitlines()
    assert violation[0] == "explainer,id,n,violations,claimed,violation_ratio,unit,ig_converged,operator"
    assert {line.split(",")[0] for line in violation[1:]} == {
        "attention",
        "gradient",
        "ig",
        "attention_x_gradient",
        "random",
    }
    ratios = (first / "results/tables/faithfulness_violation.csv").read_text()
    assert (
        "synthetic,han-rnn,10,delete,sentences,attention," in ratios
        and "synthetic,flan-conv,10,attention_mask,tokens,random," in ratios
    )
    assert (
        "Liu et al. 2022,violation,synthetic,lstm-tanh,10,1,violation ratio(attention) - violation ratio(ig)" in claims
    )
    assert {"synthetic/aopc.pdf", "synthetic_qa/aopc.png"} <= set(
        tree_digest(first / "results" / "figures" / "faithfulness")
    )
    # the zoo: the diversity LSTM trained with its conicity penalty, under every test, and its table
    zoo = (first / "results/tables/zoo.csv").read_text().splitlines()
    assert [line.split(",")[1] for line in zoo[1:]] == ["lstm-tanh", "lstm-diversity-tanh"]
    metrics = json.loads((first / "results/models/synthetic/lstm-diversity-tanh/seed10/metrics.json").read_text())
    assert 0 < metrics["conicity"]["test"] < 1 and metrics["settings"]["diversity_weight"] == 0.5
    assert "Mohankumar et al. 2020,§5 (findings),synthetic,lstm-diversity-tanh,,1," in claims  # one seed here
    assert (
        "synthetic,lstm-diversity-tanh,10,dev,random,none,conicity,"
        in (first / "results/tables/performance.csv").read_text()
    )
    comparison = (first / "results/tables/zoo_comparison.csv").read_text()
    assert "synthetic,lstm-diversity-tanh,Jain & Wallace,jw_tau_gradient," in comparison
    # the generated task's shifted test set beside test accuracy
    ground_truth = (first / "results/tables/ground_truth.csv").read_text().splitlines()
    assert "shifted_test_accuracy" in ground_truth[0].split(",")
    # the Transformer slice: head pruning against random orders, attribution graphs, rollout agreement
    pruning = (first / "results/tables/attention_attribution_pruning.csv").read_text()
    assert pruning.count("synthetic,transformer-cls,10,") == 5  # the preset's 5 fractions
    agreement = (first / "results/tables/attention_attribution_agreement.csv").read_text()
    assert "synthetic,transformer-cls,10,rollout,loo," in agreement
    assert (
        "Hao et al. 2021,Figure 3,synthetic,transformer-cls,10,1," in claims
        and "Abnar & Zuidema 2020,Tables 1-3,synthetic" in claims
    )
    # the scorecard: every claim with its tolerance basis and cause (byte-identical with results/tables above)
    scorecard = (first / "results/tables/scorecard.csv").read_text()
    assert scorecard.splitlines()[0].endswith(
        ",verdict,source,condition,select_on,embeddings,stand_ins,stands_for,deviations,low,high,p_value,q_value,"
        "threshold_sensitive,location,statement,tolerance_basis,cause,cause_status,setting"
    )
    assert len(scorecard.splitlines()) == len(claims.splitlines())
    assert "## Per paper" in (first / "results/tables/scorecard.md").read_text()
    aa_figures = set(tree_digest(first / "results" / "figures" / "attention_attribution"))
    assert {
        f"synthetic/transformer-cls/seed10/{n}.{e}" for n in ("head_pruning", "graphs") for e in ("pdf", "png")
    } <= aa_figures
    graphs = json.loads(
        (first / "results/attention_attribution/synthetic/transformer-cls/seed10/graphs.json").read_text()
    )
    assert len(graphs["graphs"]) == 2 and all(g["edges"][0]["layer"] == 2 for g in graphs["graphs"])
    ground_truth = (first / "results/tables/ground_truth.csv").read_text()
    assert all(f"synthetic,{m}" in ground_truth for m in ("lstm-tanh", "average-tanh"))
    made = snakemake(
        first,
        "--configfile",
        str(REPO / "presets" / "quick.yaml"),
        "--report",
        str(first / "report.html"),
        "--report-metadata",
        str(REPO / "report" / "metadata.yaml"),
    )
    assert "ERROR/" not in made.stdout + made.stderr  # every caption is valid reStructuredText
    assert "WARNING/" not in made.stdout + made.stderr  # e.g. a ':' in a category breaks its link target
    report = (first / "report.html").read_text(errors="replace")
    # tables as HTML pages the report shows in place (a Markdown file would only download)
    assert "datasets.html" in report and "performance.html" in report and "jain_wallace_table2.html" in report
    assert "wiegreffe_pinter_diagnostic.html" in report and "frontier.png" in report
    assert "faithfulness_aopc.html" in report and "aopc.png" in report
    assert "attention_attribution_pruning.html" in report and "head_pruning.png" in report
    assert '"mime_type": "text/html", "job_properties": {"rule": "render_table"' in report
    # the landing page: the scorecard's counts (report/metadata.yaml) instead of the rule graph
    assert (
        f'var metadata = {{"Published numbers and claims compared": {len(claims.splitlines()) - 1}, "Matched": '
        in report
    )
    table2 = (first / "results/report/jain_wallace_table2.html").read_text()
    assert "<table>" in table2 and "<th>gradient_lstm</th>" in table2
    # grouped by paper: each category once in the report's index, the scorecard in its own
    for category in (
        "Data and models",
        "Jain & Wallace 2019",
        "Serrano & Smith 2019",
        "Wiegreffe & Pinter 2019",
        "Beyond - faithfulness",
        "Replication scorecard",
    ):
        assert f'"{category}": {{' in report, category
    assert "scorecard.html" in report


@pytest.mark.slow
def test_the_readmes_reproduction_check_prints_identical_on_two_runs(quick_runs, tmp_path):
    """The comparison of the README's reproducibility check (.ci/check-reproducibility, which the GitHub
    workflow runs too), run as written on the two runs: every file it does not exclude is byte-identical
    (what it excludes is what a rerun may change: logs, job timings, benchmarks), and it does not print
    `identical` once one table differs."""
    first, second = quick_runs
    script = (REPO / ".ci" / "check-reproducibility").read_text()
    (check,) = [line for line in script.splitlines() if line.startswith("diff -r ")]

    def readme_check(a: Path, b: Path) -> str:
        command = check.replace('"$runs/a/results"', shlex.quote(str(a))).replace(
            '"$runs/b/results"', shlex.quote(str(b))
        )
        return subprocess.run(["bash", "-c", command], capture_output=True, text=True).stdout

    assert readme_check(first / "results", second / "results").strip() == "identical"
    changed = tmp_path / "tables"
    shutil.copytree(second / "results" / "tables", changed)
    claims = changed / "claims.csv"
    claims.write_text(claims.read_text().replace(",1,", ",0,", 1))
    assert "identical" not in readme_check(first / "results" / "tables", changed)


# ----------------------------------------------------------------------------- download failures


@pytest.mark.slow
def test_offline_without_mirror_fails_with_a_short_message_naming_url_and_option(tmp_path):
    url = "http://127.0.0.1:9/trainDevTestTrees_PTB.zip"  # discard port: nothing listens there
    sst = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"]["sst"]
    sst["sources"][0]["url"] = url
    config = {"datasets": {"sst": {"sources": sst["sources"]}}, "download": {"retries": 0, "timeout": 2}}
    result = snakemake(
        tmp_path,
        "--cores",
        "1",
        "--configfile",
        overlay(tmp_path, config),
        "--",
        "results/data/sst/stats.json",
        check=False,
    )
    assert result.returncode != 0
    log = (tmp_path / "results/logs/download_source/sst/trainDevTestTrees_PTB.zip.log").read_text()
    error_lines = [line for line in log.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and url in error_lines[0] and "mirror" in error_lines[0]
    assert log.rstrip().endswith(error_lines[0])  # the traceback above it, for whoever debugs; the line last
    console = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error:")]
    # the console's line is the log's, naming the log
    assert console == [f"{error_lines[0]} [log: results/logs/download_source/sst/trainDevTestTrees_PTB.zip.log]"]
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "resources/sst/trainDevTestTrees_PTB.zip").exists()


@pytest.mark.slow
@needs_mirror
def test_corrupted_mirror_copy_fails_with_checksum_error_and_leaves_nothing(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    data = bytearray((MIRROR / "sst" / "trainDevTestTrees_PTB.zip").read_bytes())
    data[1000] ^= 0xFF
    (mirror / "trainDevTestTrees_PTB.zip").write_bytes(bytes(data))
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(
        work, "--cores", "1", "--config", f"mirror={mirror}", "--", "results/data/sst/stats.json", check=False
    )
    assert result.returncode != 0
    log = (work / "results/logs/download_source/sst/trainDevTestTrees_PTB.zip.log").read_text()
    assert "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc" in log  # expected digest
    assert hashlib.sha256(bytes(data)).hexdigest() in log  # actual digest
    assert not (work / "resources" / "sst").exists() or not any((work / "resources" / "sst").iterdir())
    assert not (work / "results" / "data").exists()


@needs_mirror
def test_an_archive_damaged_in_resources_is_caught_before_extraction_and_fetched_again(tmp_path):
    archive = "resources/sst/trainDevTestTrees_PTB.zip"
    snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", archive)
    data = bytearray((tmp_path / archive).read_bytes())
    data[1000] ^= 0xFF  # damaged after it was verified
    (tmp_path / archive).write_bytes(bytes(data))
    unpacked = "resources/sst/unpacked/trainDevTestTrees_PTB.zip"
    failed = snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", unpacked, check=False)
    assert failed.returncode != 0
    errors = [line for line in (failed.stdout + failed.stderr).splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {archive}: damaged since it was verified (sha256 {hashlib.sha256(bytes(data)).hexdigest()}, expected "
        "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc); removed, the next run downloads or copies it again "
        "[log: results/logs/extract_archive/sst/trainDevTestTrees_PTB.zip.log]"
    ]
    assert not (tmp_path / archive).exists() and not (tmp_path / unpacked).exists()
    snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", unpacked)  # the next run recovers
    assert (
        hashlib.sha256((tmp_path / archive).read_bytes()).hexdigest()
        == "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc"
    )
    assert sorted(p.name for p in (tmp_path / unpacked).rglob("*.txt")) == ["dev.txt", "test.txt", "train.txt"]


@pytest.mark.slow
@needs_mirror
def test_a_typo_in_a_configured_checksum_is_refused_before_snakemake_deletes_the_fetched_file(tmp_path):
    archive = "resources/sst/trainDevTestTrees_PTB.zip"
    snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", archive)
    fetched = (tmp_path / archive).read_bytes()
    sources = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"]["sst"]["sources"]
    good = sources[0]["sha256"]
    sources[0]["sha256"] = good[:-1] + ("0" if good[-1] != "0" else "1")
    typo = overlay(tmp_path, {"datasets": {"sst": {"sources": sources}}})
    refused = snakemake(
        tmp_path, "--cores", "1", "--configfile", typo, "--config", f"mirror={MIRROR}", "--", archive, check=False
    )
    assert refused.returncode != 0
    assert (
        f"{archive} was verified against sha256 {good} when it was fetched, but config key datasets.sst.sources now "
        f"gives sha256 {sources[0]['sha256']} for trainDevTestTrees_PTB.zip"
    ) in refused.stdout + refused.stderr
    assert (tmp_path / archive).read_bytes() == fetched  # kept


@pytest.mark.slow
@needs_mirror
def test_an_unpacked_file_changed_is_refused_before_preprocessing_and_unpacked_again(tmp_path):
    """The user's probe: one word of the unpacked SST trees/train.txt changed after it was unpacked
    (same length, so only its sha256 tells). Preprocessing refuses it in one line before writing
    anything and removes the folder; the next run unpacks the verified archive again."""
    unpacked = "resources/sst/unpacked/trainDevTestTrees_PTB.zip"
    train, outputs = f"{unpacked}/trees/train.txt", tmp_path / "results/data/sst"
    snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", unpacked)
    original = (tmp_path / train).read_bytes()
    changed = original.replace(b" good)", b" gold)", 1)
    assert len(changed) == len(original) and changed != original
    (tmp_path / train).write_bytes(changed)
    failed = snakemake(
        tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", "results/data/sst/stats.json", check=False
    )
    assert failed.returncode != 0
    errors = [line for line in (failed.stdout + failed.stderr).splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {train}: changed since it was unpacked (sha256 {hashlib.sha256(changed).hexdigest()}, expected "
        f"{hashlib.sha256(original).hexdigest()}); the folder was removed, the next run unpacks the archive again [log: results/logs/preprocess_dataset/sst.log]"
    ]
    assert not (tmp_path / unpacked).exists()
    assert not any(
        (outputs / name).exists() for name in ("train.jsonl", "dev.jsonl", "test.jsonl", "vocab.txt", "stats.json")
    )
    snakemake(tmp_path, "--cores", "1", "--config", f"mirror={MIRROR}", "--", "results/data/sst/stats.json")
    assert (tmp_path / train).read_bytes() == original
    assert by_label(stats(tmp_path, "sst"), "train") == {"0": 3034, "1": 3321}


# ----------------------------------------------------------------------------- the data DAG on the mirror


def every_dataset(root: Path) -> list[str]:
    """The data DAG of every dataset that is on by its own `enabled` (presets/full_grid.yaml: AG News and
    `synthetic` too, which the default replication leaves out), with the vectors a setup without the
    papers' files gets (`embeddings.source: auto`, word2vec on the training split; D-EMB)."""
    root.mkdir(parents=True, exist_ok=True)
    overlay = root / "vectors_auto.yaml"
    overlay.write_text(yaml.safe_dump({"embeddings": {"source": "auto"}}))
    return ["--configfile", str(REPO / "presets" / "full_grid.yaml"), str(overlay), "--config", f"mirror={MIRROR}"]


@pytest.fixture(scope="module")
def mirror_run(tmp_path_factory):
    if not MIRROR.is_dir():
        pytest.skip(f"no dataset mirror at {MIRROR}")
    workdir = tmp_path_factory.mktemp("mirror_run")
    snakemake(workdir, "--cores", "2", *every_dataset(workdir.parent / f"{workdir.name}_config"), "--", "data")
    return workdir


@pytest.mark.slow
@needs_mirror
def test_data_dag_on_mirror_gives_the_protocol_split_sizes(mirror_run):
    sst = stats(mirror_run, "sst")
    assert by_label(sst, "train") == {"0": 3034, "1": 3321}
    assert by_label(sst, "dev") == {"0": 397, "1": 424}
    assert by_label(sst, "test") == {"0": 863, "1": 862}  # J&W Table 1, exactly (D-LEN)
    assert sst["sources"] == [
        {
            "file": "trainDevTestTrees_PTB.zip",
            "sha256": "5c613a4f673fc74097d523a2c83f38e0cc462984d847b82c7aaf36b01cbbbfcc",
            "substitute": None,
        }
    ]

    imdb = by_label(stats(mirror_run, "imdb"), "test")  # D-IMDB: within 5 % of 2,184 / 2,172
    assert abs(imdb["0"] - 2184) <= 0.05 * 2184 and abs(imdb["1"] - 2172) <= 0.05 * 2172
    news = by_label(stats(mirror_run, "20news"), "test")  # [R:425a89a] 179 / 178, our own stratified split
    assert abs(news["0"] - 179) <= 0.1 * 179 and abs(news["1"] - 178) <= 0.1 * 178
    assert by_label(stats(mirror_run, "agnews"), "test") == {"0": 1900, "1": 1898}  # [R:675b0dc]
    for task in ("babi1", "babi2"):  # D-BABI: J&W's Table 2 models train on every question, dev included
        s = stats(mirror_run, task)
        assert [s["splits"][k]["n"] for k in ("train", "dev", "test")] == [10000, 1500, 1000]
    assert stats(mirror_run, "babi3")["splits"]["test"]["n"] == 1000

    news20 = stats(mirror_run, "20news20")
    assert len(by_label(news20, "train")) == 20
    ratings = stats(mirror_run, "imdb_ratings")
    assert sorted(by_label(ratings, "train")) == [str(i) for i in range(8)]
    assert sum(s["n"] for s in ratings["splits"].values()) == 50000


@pytest.mark.slow
@needs_mirror
def test_stand_in_files_are_flagged_in_stats_and_table(mirror_run):
    agnews = stats(mirror_run, "agnews")
    flagged = {s["file"]: s["substitute"] for s in agnews["sources"]}
    assert flagged["test.csv"] is None  # the canonical file itself
    assert "581 rows" in flagged["train.first581rows.csv"]
    snli = stats(mirror_run, "snli")
    assert all(s["substitute"] for s in snli["sources"])
    table = (mirror_run / "results/tables/datasets.md").read_text()
    assert "train.first581rows.csv" in table and "| sst |" in table
    csv = (mirror_run / "results/tables/datasets.csv").read_text().splitlines()
    assert csv[0].startswith("dataset,") and len(csv) == 1 + len(list((mirror_run / "results/data").iterdir()))


@pytest.mark.slow
@needs_mirror
def test_data_dag_rerun_in_a_fresh_folder_is_byte_identical(mirror_run, tmp_path):
    datasets = ["sst", "agnews", "babi1", "snli", "synthetic"]
    targets = [f"results/data/{d}/stats.json" for d in datasets]
    snakemake(tmp_path, "--cores", "2", *every_dataset(tmp_path.parent / f"{tmp_path.name}_config"), "--", *targets)
    for dataset in datasets:
        assert tree_digest(tmp_path / "results/data" / dataset) == tree_digest(mirror_run / "results/data" / dataset), (
            dataset
        )


@pytest.mark.slow
@needs_mirror
def test_jsonl_records_follow_the_documented_format(mirror_run):
    first = json.loads((mirror_run / "results/data/sst/test.jsonl").open().readline())
    assert list(first) == ["id", "tokens", "label", "sentences"]
    assert first["sentences"] == [[0, len(first["tokens"])]]
    qa = json.loads((mirror_run / "results/data/babi1/test.jsonl").open().readline())
    assert list(qa) == ["id", "tokens", "label", "question", "sentences"]
    vocab = (mirror_run / "results/data/sst/vocab.txt").read_text().split("\n")
    assert vocab[:4] == ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]
    assert len(vocab) - 1 == stats(mirror_run, "sst")["vocab_size"]


@pytest.mark.slow
@needs_mirror
def test_word2vec_embeddings_are_built_and_recorded(mirror_run):
    vectors = "results/embeddings/sst/vectors.npy"
    snakemake(
        mirror_run, "--cores", "1", *every_dataset(mirror_run.parent / f"{mirror_run.name}_config"), "--", vectors
    )
    import numpy as np

    vectors = np.load(mirror_run / "results/embeddings/sst/vectors.npy", allow_pickle=False)
    meta = json.loads((mirror_run / "results/embeddings/sst/vectors.json").read_text())
    assert vectors.shape == (stats(mirror_run, "sst")["vocab_size"], 300) and vectors.dtype == np.float32
    assert not vectors[0].any()  # <PAD>
    assert meta["source"] == "word2vec_local" and "D-EMB" in meta["why"]
    assert 0 < meta["words_with_vector"] < meta["vocab_size"]
