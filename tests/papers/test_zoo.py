"""The zoo's table and claims (`attnexp.papers.zoo.tables`): Mohankumar et al. 2020's measures from a
model's metrics.json and explanation files, the tolerance from the paper-rerun gaps, the findings
over seeds."""

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from attnexp import io
from attnexp.claims import read_claims
from attnexp.papers.zoo import in_zoo_table, is_zoo
from attnexp.papers.zoo.tables import run_measures, tolerances, write_tables
from attnexp.spec import parse_model_name

ATTENTION = [[0.7, 0.2, 0.1], [0.5, 0.5], [1.0]]
GRADIENT = [[-2.0, 1.0, 0.5], [0.1, -0.3], [4.0]]


def _run(root, model, seed, accuracy, conicity, scale=1.0):
    run = root / "sst" / model / f"seed{seed}"
    io.write_json(
        root / "models" / "sst" / model / f"seed{seed}" / "metrics.json",
        {"test": {"accuracy": accuracy}, "conicity": {"test": conicity}, "select_on": "test", "provenance": {}},
        seal=True,
    )
    records = [
        {
            "id": str(i),
            "length": len(a),
            "attention": a,
            "gradient": [scale * g for g in grad],
            "ig": grad,
            "ig_converged": i != 1,  # instance 1's completeness gap stayed above the tolerance
        }
        for i, (a, grad) in enumerate(zip(ATTENTION, GRADIENT))
    ]
    for method, keys in (("attention", ()), ("gradient", ()), ("ig", ("ig_converged",))):
        io.write_jsonl(
            run / f"{method}.jsonl",
            [{k: r[k] for k in ("id", "length", method, *keys)} for r in records],
            seal=True,
        )
    return root / "models" / "sst" / model / f"seed{seed}" / "metrics.json", [
        run / f"{m}.jsonl" for m in ("attention", "gradient", "ig")
    ]


def test_the_zoo_is_named_by_its_spec():
    assert is_zoo(parse_model_name("lstm-ortho-tanh", "binary")) and is_zoo(parse_model_name("cnn-entmax15", "binary"))
    assert not is_zoo(parse_model_name("lstm-tanh", "binary"))
    assert in_zoo_table(parse_model_name("lstm-tanh", "binary"))  # the vanilla LSTM is the baseline
    assert not in_zoo_table(parse_model_name("lstm-ortho-uniform", "binary"))  # no attention of its own
    assert not in_zoo_table(parse_model_name("average-tanh", "binary"))


def test_run_measures_are_pearson_and_jsd_of_attention_with_the_normalised_magnitudes(tmp_path):
    metrics, explanations = _run(tmp_path, "lstm-tanh", 10, 0.8, 0.6)
    row = run_measures(metrics, explanations)
    assert row["accuracy"] == 0.8 and row["conicity"] == 0.6 and row["instances"] == 3
    assert row["ig_unconverged"] == pytest.approx(1 / 3)  # stated beside the IG columns, which use every instance
    # instance 2 (one token) has no correlation; instance 1's attention is constant: none either
    expected_r = pearsonr(ATTENTION[0], np.abs(GRADIENT[0])).statistic
    assert row["pearson_gradient"] == pytest.approx(expected_r) and row["pearson_gradient_sd"] == 0

    def jsd(p, q):
        p, q = np.asarray(p) / np.sum(p), np.asarray(q) / np.sum(q)
        m = (p + q) / 2
        return 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(q * np.log(q / m))

    divergences = [jsd(a, np.abs(g)) for a, g in zip(ATTENTION, GRADIENT)]
    assert row["jsd_gradient"] == pytest.approx(np.mean(divergences)) and divergences[2] == 0
    assert row["jsd_gradient_sd"] == pytest.approx(np.std(divergences))


def test_tolerance_is_the_largest_gap_between_paper_and_rerun():
    reference = pd.DataFrame(
        {"quantity": ["conicity", "conicity", "accuracy"], "published": [0.68, 0.2, 0.8], "rerun": [0.6, 0.21, 0.79]}
    )
    assert tolerances(reference) == {"accuracy": 0.01, "conicity": 0.08}


def test_claims_compare_each_seed_and_test_the_findings_on_every_seed(tmp_path):
    metrics, explanations = [], []
    # the diversity model: lower conicity on every seed, higher correlation (the same attention, gradients
    # of another scale give the same Pearson r, so the gradient ranking is made to agree exactly below)
    for seed, (vanilla_conicity, diversity_conicity) in zip((10, 11, 12), ((0.7, 0.2), (0.65, 0.25), (0.6, 0.7))):
        for model, conicity, accuracy in (
            ("lstm-tanh", vanilla_conicity, 0.82),
            ("lstm-diversity-tanh", diversity_conicity, 0.80),
        ):
            m, e = _run(tmp_path, model, seed, accuracy, conicity)
            metrics.append(m)
            explanations += e
    reference = tmp_path / "reference.csv"
    pd.DataFrame(
        {
            "dataset": ["sst", "sst"],
            "model": ["lstm-tanh", "lstm-diversity-tanh"],
            "paper_model": ["vanilla LSTM", "diversity LSTM"],
            "quantity": ["conicity", "conicity"],
            "published": [0.68, 0.20],
            "published_sd": [math.nan, math.nan],
            "rerun": [0.71, 0.19],
            "source": ["Table 2", "Table 2"],
        }
    ).to_csv(reference, index=False)
    out = {k: tmp_path / f"zoo.{k}" for k in ("csv", "md", "claims")}
    write_tables(metrics, explanations, reference, out, 0.03)
    claims = read_claims(out["claims"])
    numeric = claims[claims["published"].notna()]
    assert len(numeric) == 6 and set(numeric["tolerance"]) == {0.03}
    verdicts = dict(zip(zip(numeric["model"], numeric["seed"]), numeric["verdict"]))
    assert verdicts[("lstm-tanh", 10)] == "match" and verdicts[("lstm-tanh", 12)] == "differs"  # 0.60 vs 0.68
    assert verdicts[("lstm-diversity-tanh", 12)] == "differs"  # 0.70 vs 0.20
    findings = claims[claims["published"].isna()].set_index("quantity")
    conicity = findings.filter(like="conicity", axis=0).iloc[0]
    # lower on seeds 10 and 11 (by 0.5, 0.4), above on seed 12 (by 0.1): the interval over the seeds spans 0
    assert conicity["verdict"] == "inconclusive" and conicity["seeds"] == 3
    assert conicity["low"] < 0 < conicity["high"] and not conicity["threshold_sensitive"]
    accuracy = findings.filter(like="accuracy", axis=0).iloc[0]
    assert accuracy["verdict"] == "holds" and accuracy["low"] == pytest.approx(-0.02)  # 0.02 below, within 0.03
    # the tolerance is ours (the paper says "comparable"): at half of it (0.015), 0.02 below does not hold
    assert accuracy["threshold_sensitive"] and "claims.performance_tolerance" in accuracy["condition"]
    assert "D-ZOO-BI" in numeric["deviations"].iloc[0]
    assert "lstm-diversity-tanh" in out["md"].read_text() and "0.03" in out["md"].read_text()
    rows = [line for line in out["md"].read_text().splitlines() if line.startswith("| sst |")]
    assert rows and not any(re.search(r"\d\.\d{4}", row) for row in rows), "3 decimals, as the other tables"
