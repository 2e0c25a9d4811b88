"""Jain & Wallace's §4.1 correlation findings (`findings.correlation_claims`), each on every seed: a
BiLSTM's attention correlates only weakly with gradient and leave-one-out, which agree with each other
more than either does with attention, and the Average encoders' attention correlates better with
gradients than the BiLSTMs'."""

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from attnexp import io
from attnexp.claims import Setting, claims_frame, read_claims
from attnexp.papers.jain_wallace import tables as jwt
from attnexp.papers.jain_wallace.correlations import COLUMNS
from attnexp.papers.jain_wallace.findings import CORRELATION, correlation_claims
from attnexp.spec import parse_model_name

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = {
    "minimal_output_change": 0.05,
    "peaked_attention": 0.5,
    "min_peaked_instances": 1,
    "very_different_jsd": 0.5,
    "often": 0.5,
    "weak_tau": 0.5,
}
SEEDS = (10, 11, 12)
TOLERANCE = {encoder: {"mean": 0.07, "sig_frac": 0.12} for encoder in ("lstm", "average")}  # Table 2's, per encoder
WEAK = "the larger of mean tau(attention, gradient) and mean tau(attention, loo)"
AGREE = "mean tau(gradient, loo) minus"
ENCODER = "mean tau(attention, gradient) of the Average encoder"


def means(gradient, loo=None, between=None) -> dict[str, float]:
    pairs = {"attention~gradient": gradient, "attention~loo": loo, "gradient~loo": between}
    return {pair: value for pair, value in pairs.items() if value is not None}


def correlations_of(values: dict[str, float], instances: int = 200) -> pd.DataFrame:
    """A per-instance τ table whose mean per pair is `values`'s: τ = mean ± 0.02, alternating."""
    rows = [
        {"id": f"t{i}", "length": 5, "predicted": i % 2, "pair": pair, "tau": mean + (0.02 if i % 2 else -0.02)}
        for pair, mean in values.items()
        for i in range(instances)
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def run(model: str, seed: int, values: dict[str, float], dataset="sst") -> dict:
    encoder, attention = model.split("-")
    return {
        "correlations": correlations_of(values),
        "dataset": dataset,
        "model": model,
        "seed": seed,
        "encoder": encoder,
        "attention": attention,
        "setting": Setting("test", "glove6b50", "none"),
        "means": values,
    }


def runs_of(model: str, per_seed: dict[int, dict[str, float]], dataset="sst") -> list[dict]:
    return [run(model, seed, values, dataset) for seed, values in per_seed.items()]


def by_quantity(rows: list[dict], model: str, prefix: str, dataset="sst") -> dict:
    found = [r for r in rows if r["dataset"] == dataset and r["model"] == model and r["quantity"].startswith(prefix)]
    assert len(found) == 1, f"{len(found)} rows of {dataset} {model} {prefix!r}"
    return found[0]


def typical() -> list[dict]:
    """Three seeds of a BiLSTM and an Average model per attention: the BiLSTMs weakly correlated,
    gradient and LOO agreeing more, the Average models' attention nearer their gradients."""
    lstm = {s: means(0.30 + 0.01 * i, 0.25, 0.60) for i, s in enumerate(SEEDS)}
    average = {s: means(0.70, 0.65, 0.80) for s in SEEDS}
    return (
        runs_of("lstm-tanh", lstm)
        + runs_of("average-tanh", average)
        + runs_of("lstm-dot", lstm)
        + runs_of("average-dot", average)
        + runs_of("cnn-tanh", average)
    )


def test_the_findings_hold_on_every_seed_of_the_models_they_concern():
    rows = correlation_claims(typical(), THRESHOLDS)
    claims_frame(rows)  # the claim contract's columns, exactly
    assert {r["table"] for r in rows} == {CORRELATION} and {r["paper"] for r in rows} == {"Jain & Wallace 2019"}
    # the BiLSTMs' two findings, and Average against BiLSTM per attention; no finding on the CNN nor on the Average models alone
    assert sorted((r["model"], r["quantity"][:10]) for r in rows) == sorted(
        [(m, q[:10]) for m in ("lstm-tanh", "lstm-dot") for q in (WEAK, AGREE)]
        + [("average-dot vs lstm-dot", ENCODER[:10]), ("average-tanh vs lstm-tanh", ENCODER[:10])]
    )
    weak = by_quantity(rows, "lstm-tanh", WEAK)
    assert (weak["verdict"], weak["seeds"], weak["ours"], weak["seed"]) == ("holds", 3, 0.31, None)
    assert weak["sd"] == pytest.approx(0.01, abs=1e-4)
    assert (
        "below 0.5" in weak["quantity"]
        and "threshold 0.5, below" in weak["condition"]
        and "jain_wallace.findings.weak_tau, ours" in weak["condition"]
        and "over 3 seeds and their test instances" in weak["condition"]
    )
    assert weak["high"] < 0.5 and weak["threshold_sensitive"] is True  # 0.25 (half of 0.5) is below 0.30
    assert weak["select_on"] == "test" and weak["embeddings"] == "glove6b50"
    agree = by_quantity(rows, "lstm-tanh", AGREE)
    assert (agree["verdict"], agree["ours"]) == ("holds", 0.29) and "threshold 0, above" in agree["condition"]
    encoder = by_quantity(rows, "average-tanh vs lstm-tanh", ENCODER)
    assert (encoder["verdict"], encoder["ours"], encoder["seeds"]) == (
        "holds",
        0.39,
        3,
    ) and "tanh attention" in encoder["quantity"]
    assert "threshold 0, above" in encoder["condition"] and "the BiLSTM run's setting" in encoder["condition"]


def test_the_threshold_comes_from_the_config_and_is_named():
    rows = correlation_claims(typical(), THRESHOLDS | {"weak_tau": 0.3})
    weak = by_quantity(rows, "lstm-tanh", WEAK)
    # the larger tau is 0.30, 0.31, 0.32: below 0.3 on no seed
    assert weak["verdict"] == "does not hold" and "below 0.3" in weak["quantity"] and weak["low"] >= 0.3


def test_a_finding_that_fails_on_one_seed_is_inconclusive():
    lstm = {
        10: means(0.30, 0.25, 0.60),
        11: means(0.30, 0.55, 0.50),
        12: means(0.30, 0.25, 0.60),
    }  # seed 11: LOO tau 0.55
    average = {10: means(0.70), 11: means(0.70), 12: means(0.20)}  # seed 12: below the BiLSTM's 0.30
    rows = correlation_claims(runs_of("lstm-tanh", lstm) + runs_of("average-tanh", average), THRESHOLDS)
    weak = by_quantity(rows, "lstm-tanh", WEAK)
    # one contrary seed of three: the interval straddles the threshold
    assert weak["verdict"] == "inconclusive" and "11: 0.550" in weak["condition"]
    agree = by_quantity(rows, "lstm-tanh", AGREE)
    assert agree["verdict"] == "inconclusive" and "11: -0.050" in agree["condition"]
    encoder = by_quantity(rows, "average-tanh vs lstm-tanh", ENCODER)
    assert encoder["verdict"] == "inconclusive" and "12: -0.100" in encoder["condition"]


def test_a_finding_contradicted_on_every_seed_does_not_hold():
    lstm = {s: means(0.30, 0.70, 0.50) for s in SEEDS}  # LOO tau 0.70: not weak; gradient~loo below it
    average = {s: means(0.10) for s in SEEDS}  # below the BiLSTM's 0.30
    rows = correlation_claims(runs_of("lstm-tanh", lstm) + runs_of("average-tanh", average), THRESHOLDS)
    assert by_quantity(rows, "lstm-tanh", WEAK)["verdict"] == "does not hold"
    assert by_quantity(rows, "lstm-tanh", AGREE)["verdict"] == "does not hold"
    assert by_quantity(rows, "average-tanh vs lstm-tanh", ENCODER)["verdict"] == "does not hold"


def test_two_seeds_are_not_compared():
    lstm = {s: means(0.30, 0.25, 0.60) for s in SEEDS[:2]}
    average = {s: means(0.70) for s in SEEDS}
    rows = correlation_claims(runs_of("lstm-tanh", lstm) + runs_of("average-tanh", average), THRESHOLDS)
    assert len(rows) == 3 and {r["verdict"] for r in rows} == {"not comparable: 2 seeds, a finding needs 3"}
    # Average against BiLSTM: only the seeds both models have
    encoder = by_quantity(rows, "average-tanh vs lstm-tanh", ENCODER)
    assert encoder["seeds"] == 2 and encoder["ours"] == pytest.approx(0.4)


def test_without_leave_one_out_the_weak_finding_rests_on_gradients_alone():
    lstm = {s: means(0.30) for s in SEEDS}
    rows = correlation_claims(runs_of("lstm-tanh", lstm), THRESHOLDS)
    assert len(rows) == 1  # no agreement of gradient and LOO without LOO
    weak = rows[0]
    assert (
        weak["quantity"]
        == "the larger of mean tau(attention, gradient) alone (leave-one-out not measured), all test instances; weak: below 0.5"
    )
    assert (weak["verdict"], weak["ours"]) == ("holds", 0.3)


def test_a_seed_without_a_pair_its_other_seeds_have_is_undefined():
    lstm = {10: means(0.30, 0.25, 0.60), 11: means(0.30), 12: means(0.30, 0.25, 0.60)}
    rows = correlation_claims(runs_of("lstm-tanh", lstm), THRESHOLDS)
    assert {r["verdict"] for r in rows} == {
        "not comparable: no mean tau of a pair the model's other seeds have on seed 11"
    }


def test_rows_do_not_depend_on_the_order_of_the_runs():
    runs = (
        typical()
        + runs_of("lstm-tanh", {s: means(0.1, 0.2, 0.3) for s in SEEDS}, dataset="imdb")
        + runs_of("average-tanh", {s: means(0.6) for s in SEEDS}, dataset="imdb")
    )
    shuffled = runs[:]
    random.Random(0).shuffle(shuffled)
    assert correlation_claims(shuffled, THRESHOLDS) == correlation_claims(runs, THRESHOLDS)
    rows = correlation_claims(runs, THRESHOLDS)
    assert [(r["dataset"], r["model"]) for r in rows] == [
        ("imdb", "lstm-tanh"),
        ("imdb", "lstm-tanh"),
        ("imdb", "average-tanh vs lstm-tanh"),
        ("sst", "lstm-dot"),
        ("sst", "lstm-dot"),
        ("sst", "lstm-tanh"),
        ("sst", "lstm-tanh"),
        ("sst", "average-dot vs lstm-dot"),
        ("sst", "average-tanh vs lstm-tanh"),
    ]


# --------------------------------------------------------------------------------------------------
# write_tables: the correlation findings from every run's mean tau, whenever `findings` is given


def write_run(root: Path, model: str, seed: int, taus: dict[str, list[float]]) -> tuple[Path, ...]:
    """A correlation table (one instance per tau, two predicted classes), a metrics.json and the
    permutation and adversarial tables of one sst run."""
    name = f"{model}-{seed}"
    rows = [
        {"id": f"t{i}", "length": 5, "predicted": i % 2, "pair": pair, "tau": tau, "p_value": 0.01}
        for pair, values in taus.items()
        for i, tau in enumerate(values)
    ]
    paths = tuple(
        root / f"{name}.{kind}" for kind in ("correlations.csv", "metrics.json", "permutation.csv", "adversarial.csv")
    )
    pd.DataFrame(rows, columns=COLUMNS).to_csv(paths[0], index=False)
    paths[1].write_text(
        json.dumps(
            {
                "model": model,
                "seed": seed,
                "spec": parse_model_name(model, "binary").record(),
                "classes": ["0", "1"],
                "select_on": "test",
                "settings": {"epochs": 8},
                "provenance": {"dataset": "sst", "embeddings": "glove6b50"},
            }
        )
    )
    pd.DataFrame({"id": ["t0", "t1"], "max_attention": [0.9, 0.2], "median_output_difference": [0.01, 0.2]}).to_csv(
        paths[2], index=False
    )
    pd.DataFrame({"eps_max_jsd": [0.6, 0.1], "max_attention": [0.9, 0.2]}).to_csv(paths[3], index=False)
    for path in paths:
        io.write_seal(path)
    return paths


def test_write_tables_adds_the_correlation_findings_given_the_thresholds(tmp_path):
    runs = [
        write_run(
            tmp_path,
            "lstm-tanh",
            s,
            {"attention~gradient": [0.2, 0.4], "attention~loo": [0.1, 0.3], "gradient~loo": [0.6, 0.8]},
        )
        for s in SEEDS
    ]
    runs += [
        write_run(
            tmp_path,
            "average-tanh",
            s,
            {"attention~gradient": [0.7, 0.9], "attention~loo": [0.6, 0.8], "gradient~loo": [0.8, None]},
        )
        for s in SEEDS
    ]
    out = {
        key: tmp_path / "out" / f"{key}.{'csv' if key.endswith('csv') or key == 'claims' else 'md'}"
        for key in ("summary_csv", "summary_md", "table2_csv", "table2_md", "claims")
    }
    paths = [list(p) for p in zip(*runs)]
    jwt.write_tables(
        paths[0],
        paths[1],
        ROOT / "references" / "jain_wallace_table2.csv",
        significance=0.05,
        tolerance=TOLERANCE,
        loo_op="delete",
        out=out,
        permutation_paths=paths[2],
        adversarial_paths=paths[3],
        findings=THRESHOLDS,
    )
    claims = read_claims(out["claims"])
    found = claims[claims["table"] == CORRELATION].set_index("model")
    assert sorted(found.index) == ["average-tanh vs lstm-tanh", "lstm-tanh", "lstm-tanh"]
    weak = found[found.quantity.str.startswith(WEAK)].loc["lstm-tanh"]
    assert (weak.verdict, weak.ours, weak.seeds) == ("holds", 0.3, 3)  # max(0.3, 0.2) on every seed
    agree = found[found.quantity.str.startswith(AGREE)].loc["lstm-tanh"]
    assert (agree.verdict, agree.ours) == ("holds", pytest.approx(0.4))  # 0.7 - 0.3
    encoder = found.loc["average-tanh vs lstm-tanh"]
    assert (encoder.verdict, encoder.ours) == ("holds", pytest.approx(0.5))  # 0.8 - 0.3
    assert (
        len(claims[claims["table"].str.startswith(("§4.2", "§4.3"))]) == 3
    )  # the permutation and adversarial findings, still
    # without the thresholds: no finding at all
    jwt.write_tables(
        paths[0],
        paths[1],
        ROOT / "references" / "jain_wallace_table2.csv",
        significance=0.05,
        tolerance=TOLERANCE,
        loo_op="delete",
        out=out,
    )
    assert not read_claims(out["claims"])["table"].str.startswith("§").any()
