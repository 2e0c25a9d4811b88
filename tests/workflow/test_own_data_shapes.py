"""Datasets of your own of every awkward shape (tests/own_data_shapes.py: one sentence per document, one
token per document, very long documents, many classes, unbalanced labels, unicode text) through every
paper's stage: one Snakemake run whose config holds all six completes to the scorecard, and what a
stage cannot measure on a shape is named in its claims; a stage a shape cannot take at all is refused
before any job, in one line. The run is slow (it trains and explains real, tiny models); the plan and
the refusal are dry runs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from own_data_shapes import SHAPES, TRANSFORMER, WP_TABLE2_ONLY, shapes_overlay, write_shapes
from snakemake_runs import snakemake

from attnexp.cost import planned_jobs

REPO = Path(__file__).resolve().parents[2]
BINARY = [shape for shape in SHAPES if shape != "many_classes"]


def shapes_config(folder: Path, **changes) -> Path:
    """The six shapes' tables in `folder`/data and the overlay that runs them (`changes`: top-level keys
    merged into it)."""
    overlay = shapes_overlay(write_shapes(folder / "data"))
    for key, value in changes.items():
        overlay[key] = {**overlay.get(key, {}), **value}
    path = folder / "shapes.yaml"
    path.write_text(yaml.safe_dump(overlay, allow_unicode=True), encoding="utf-8")
    return path


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_the_shapes_plan_every_stage_on_every_shape_it_can_take(tmp_path):
    jobs = planned_jobs(shapes_config(tmp_path))
    planned = {}
    for rule, wildcards in jobs:
        planned.setdefault(rule, set()).add(wildcards.get("dataset"))
    every = set(SHAPES)
    for rule in ("preprocess_dataset", "jw_permutation", "jw_adversarial", "ss_interventions", "faithfulness_eraser"):
        assert planned[rule] == every, rule
    # W&P and the ground-truth table need a binary task; W&P's full stage runs where its table2_only leaves it
    assert planned["wp_seed_variance"] == set(BINARY) - set(WP_TABLE2_ONLY)
    assert planned["attention_attribution_heads"] == set(TRANSFORMER)
    for rule in ("ss_tables", "jw_tables", "wp_tables", "jw_ground_truth", "debate_matrix", "tabulate_scorecard"):
        assert rule in planned, rule


def test_a_stage_a_shape_cannot_take_is_refused_before_any_job_in_one_line(tmp_path):
    config = shapes_config(tmp_path, wiegreffe_pinter={"datasets": ["many_classes"]})
    result = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(config), check=False)
    assert result.returncode != 0
    assert (
        "config key 'wiegreffe_pinter.datasets.0': dataset 'many_classes' is a multiclass task; the Wiegreffe & Pinter experiments need binary"
        in result.stdout + result.stderr
    )
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_every_shape_runs_every_stage_to_the_scorecard(tmp_path):
    config = shapes_config(tmp_path)
    snakemake(tmp_path, "--cores", "2", "--configfile", str(config))
    assert_every_stage_reached_the_scorecard(tmp_path / "results")


def assert_every_stage_reached_the_scorecard(results: Path) -> None:
    """What the run of the six shapes made (`results`: its results folder)."""
    stats = {shape: json.loads((results / "data" / shape / "stats.json").read_text()) for shape in SHAPES}
    assert stats["unicode"]["classes"] == ["bien ✓", "mal ✗"] and len(stats["many_classes"]["classes"]) == 12
    test = {shape: [json.loads(line) for line in (results / "data" / shape / "test.jsonl").open()] for shape in SHAPES}
    assert all(len(r["sentences"]) == 1 for r in test["one_sentence"])
    assert all(len(r["tokens"]) == 1 for r in test["one_token"])
    # S&S: a HAN on one-sentence documents, and every model on one-token documents, has nothing to erase:
    # its findings are in the claims, not compared, with the reason; every other run is measured
    claims = rows(results / "claims" / "serrano_smith.csv")
    nothing = {(r["dataset"], r["model"]) for r in claims if "nothing to erase" in r["verdict"]}
    one_token_models = {r["model"] for r in claims if r["dataset"] == "one_token"}
    assert nothing == {("one_sentence", "han-rnn")} | {("one_token", m) for m in one_token_models}
    assert {"lstm-tanh", "han-rnn", "transformer-cls"} <= one_token_models
    single = {r["verdict"] for r in claims if (r["dataset"], r["model"]) == ("one_sentence", "han-rnn")}
    assert single == {"not comparable: nothing to erase, every test instance has a single sentence (S&S §4)"}
    erasure = {(r["dataset"], r["model"]) for r in rows(results / "tables" / "serrano_smith_erasure.csv")}
    assert {(shape, "han-rnn") for shape in ("long", "many_classes", "unbalanced", "unicode")} <= erasure
    assert not erasure & nothing
    # every shape reaches the debate matrix and the scorecard; each stage's own tables name it
    assert {r["dataset"] for r in rows(results / "tables" / "debate_matrix.csv")} == set(SHAPES)
    scorecard = rows(results / "tables" / "scorecard.csv")
    assert {r["dataset"] for r in scorecard if r["paper"].startswith("Serrano")} == set(SHAPES)
    # the ERASER battery scores instances of two units or more: none of the one-token texts
    assert {r["dataset"] for r in rows(results / "tables" / "faithfulness_aopc.csv")} == set(SHAPES) - {"one_token"}
    assert {r["dataset"] for r in rows(results / "tables" / "wiegreffe_pinter_uniform.csv")} == set(BINARY)
    assert {r["dataset"] for r in rows(results / "tables" / "ground_truth.csv")} == set(BINARY)
    assert {r["dataset"] for r in rows(results / "tables" / "attention_attribution_pruning.csv")} == set(TRANSFORMER)
