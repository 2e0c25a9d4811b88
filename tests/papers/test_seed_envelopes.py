"""Seed envelopes (attnexp.papers.faithfulness.seed_envelopes): each explainer's agreement with
itself across seed models, beside attention's agreement with it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from attnexp import io
from attnexp.papers.faithfulness import seed_envelopes as se


def record(id, attention, gradient, loo, ig) -> dict:
    vectors = {
        k: np.asarray(v, dtype=float) for k, v in dict(attention=attention, gradient=gradient, loo=loo, ig=ig).items()
    }
    return {"id": id, "length": len(attention), **vectors}


BASE = [
    record("a", [0.1, 0.2, 0.7], [-3.0, 1.0, 2.0], [0.3, 0.1, 0.2], [1.0, -2.0, 3.0]),
    record("b", [0.25, 0.25, 0.25, 0.25], [1.0, 2.0, 3.0, 4.0], [0.4, 0.3, 0.2, 0.1], [4.0, 3.0, 2.0, 1.0]),
]
SEEDS = {
    7: [
        record("a", [0.2, 0.1, 0.7], [3.0, 1.0, -2.0], [0.1, 0.3, 0.2], [-1.0, 2.0, 3.0]),
        record("b", [0.1, 0.2, 0.3, 0.4], [4.0, 3.0, 2.0, 1.0], [0.4, 0.3, 0.2, 0.1], [1.0, 2.0, 3.0, 4.0]),
    ],
    8: [
        record("a", [0.1, 0.2, 0.7], [-3.0, 1.0, 2.0], [0.3, 0.2, 0.1], [1.0, 2.0, 3.0]),
        record("b", [0.4, 0.3, 0.2, 0.1], [1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.4], [4.0, 3.0, 2.0, 1.0]),
    ],
}


def tau(a, b) -> float:
    return kendalltau(a, b).statistic


def test_agreement_uses_magnitudes_of_gradient_and_ig():
    table = se.seed_agreement(BASE, SEEDS).set_index(["id", "measure", "seed"])["tau"]
    assert table["a", "gradient", 7] == pytest.approx(tau([3, 1, 2], [3, 1, 2]))  # |g| equal although signs differ
    assert table["a", "ig", 7] == pytest.approx(1.0) and table["a", "ig", 8] == pytest.approx(1.0)
    assert table["a", "loo", 8] == pytest.approx(tau([0.3, 0.1, 0.2], [0.3, 0.2, 0.1]))
    assert math.isnan(table["b", "attention", 7])  # the base's uniform attention: τ undefined
    assert len(table) == 2 * 4 * 2


def test_envelope_is_the_median_over_seeds_beside_attentions_own_tau():
    table = se.envelopes(se.seed_agreement(BASE, SEEDS), BASE).set_index(["id", "measure"])
    assert table.loc[("b", "gradient"), "seed_median_tau"] == pytest.approx(np.median([-1.0, 1.0]))
    assert table.loc[("a", "loo"), "seed_median_tau"] == pytest.approx(
        np.median([tau([0.3, 0.1, 0.2], [0.1, 0.3, 0.2]), tau([0.3, 0.1, 0.2], [0.3, 0.2, 0.1])])
    )
    assert table.loc[("a", "gradient"), "attention_tau"] == pytest.approx(tau([0.1, 0.2, 0.7], [3, 1, 2]))
    assert table.loc[("a", "attention"), "attention_tau"] == pytest.approx(1.0)


def test_summary_counts_undefined_and_the_share_below_the_envelope():
    summary = se.summarise_envelopes(se.envelopes(se.seed_agreement(BASE, SEEDS), BASE)).set_index("measure")
    # b's attention is uniform: every τ involving it is undefined, so only a counts
    assert summary.loc["gradient", "instances"] == 1 and summary.loc["gradient", "undefined"] == 1
    a_gradient = tau([0.1, 0.2, 0.7], [3, 1, 2]) < 1.0  # a: envelope of |gradient| is 1
    assert summary.loc["gradient", "share_attention_below_envelope"] == float(a_gradient)
    assert summary.loc["ig", "seed_median_tau"] == pytest.approx(np.mean([1.0, 0.0]))  # a: 1; b: median(-1, 1)


def test_misaligned_seed_model_is_refused_naming_it():
    shifted = {9: [BASE[1], BASE[0]]}
    with pytest.raises(
        ValueError, match="seed model 9: instance 'b' \\(length 4\\) where the base model has 'a' \\(length 3\\)"
    ):
        se.seed_agreement(BASE, shifted)
    with pytest.raises(ValueError, match="seed model 9: 1 explanation records, the base model has 2"):
        se.seed_agreement(BASE, {9: BASE[:1]})


def test_write_reads_explanation_files(tmp_path):
    def dump(records, name):
        path = tmp_path / f"{name}.jsonl"
        io.write_jsonl(
            path,
            (
                {
                    **r,
                    **{k: r[k].tolist() for k in ("attention", "gradient", "loo", "ig")},
                    "probs": [0.5, 0.5],
                    "ig_delta": 0.0,
                }
                for r in records
            ),
            seal=True,
        )
        return path

    out = tmp_path / "envelope.csv"
    se.write_seed_envelope(dump(BASE, "base"), {seed: dump(r, f"s{seed}") for seed, r in SEEDS.items()}, out)
    table = pd.read_csv(out)
    assert list(table.columns) == ["id", "measure", "seed_median_tau", "attention_tau"]
    assert len(table) == 8
