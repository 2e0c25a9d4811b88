"""The claim contract (attnexp.claims): verdicts by hand, column validation, the CSV round trip,
concatenating papers and the Markdown scorecard."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from attnexp.claims import (
    CLAIM_COLUMNS,
    Setting,
    claim,
    claims_frame,
    claims_markdown,
    concatenate,
    finding,
    numeric_verdict,
    over_seeds,
    read_claims,
    write_claims,
)
from attnexp.verdicts import share


def jw_row(quantity="mean tau", ours=0.45, published=0.40, tolerance=0.07, **overrides):
    return claim(
        "Jain & Wallace 2019",
        "Table 2",
        "sst",
        "lstm-tanh",
        10,
        quantity,
        ours=ours,
        published=published,
        tolerance=tolerance,
        **overrides,
    )


# --------------------------------------------------------------------------------------------------
# verdicts


@pytest.mark.parametrize(
    "ours, published, tolerance, verdict",
    [
        (0.45, 0.40, 0.07, "match"),
        (0.40, 0.45, 0.07, "match"),  # symmetric
        (0.48, 0.40, 0.07, "differs"),
        (0.32, 0.40, 0.07, "differs"),
        (0.5, 0.53, 0.03, "match"),  # exactly at the tolerance (0.53 - 0.5 > 0.03 in floating point) still matches
        (0.5, 0.5301, 0.03, "differs"),
        (0.9, 0.9, 0.0, "match"),
        (0.45, 0.40, None, "reference only"),
        (math.nan, 0.40, 0.07, "undefined"),
        (0.45, math.nan, 0.07, "undefined"),
        (None, 0.40, 0.07, "undefined"),
        (0.45, None, 0.07, "undefined"),
    ],
)
def test_numeric_verdict_by_hand(ours, published, tolerance, verdict):
    assert numeric_verdict(ours, published, tolerance) == verdict


def test_not_comparable_wins_over_the_numbers():
    assert numeric_verdict(0.45, 0.45, 0.07, "selected on dev (D-SEL)") == "not comparable: selected on dev (D-SEL)"
    assert numeric_verdict(math.nan, None, None, "other data") == "not comparable: other data"
    assert numeric_verdict(0.45, 0.45, 0.07, "") == "match"  # an empty reason is no reason


def test_claim_row_computes_its_verdict_unless_given():
    row = jw_row()
    assert list(row) == list(CLAIM_COLUMNS)
    assert (row["ours"], row["published"], row["tolerance"], row["verdict"]) == (0.45, 0.40, 0.07, "match")
    assert (row["source"], row["condition"]) == ("", "")
    assert jw_row(ours=0.6)["verdict"] == "differs"
    qualitative = claim(
        "Serrano & Smith 2019",
        "§5",
        "yelp",
        "han-rnn",
        10,
        "gradient flips sooner",
        ours=0.8,
        verdict="holds",
        source="S&S §5",
    )
    assert qualitative["verdict"] == "holds" and qualitative["published"] is None and qualitative["tolerance"] is None
    assert (
        claim("P", "T", "d", "m", 1, "q", ours=1.0)["verdict"] == "reference only"
    )  # no published value, no tolerance


# --------------------------------------------------------------------------------------------------
# the table


def test_claims_frame_has_the_contract_columns_in_order():
    table = claims_frame([jw_row(), jw_row("sig_frac", 0.6, 0.59, 0.12)])
    assert tuple(table.columns) == CLAIM_COLUMNS and len(table) == 2
    assert table["verdict"].tolist() == ["match", "match"]
    empty = claims_frame([])
    assert tuple(empty.columns) == CLAIM_COLUMNS and empty.empty


def test_claims_frame_names_missing_and_unexpected_columns():
    row = jw_row()
    del row["source"]
    with pytest.raises(ValueError) as err:
        claims_frame([jw_row(), row | {"note": "x"}])
    assert str(err.value) == "claim row 1: missing columns ['source'], unexpected columns ['note']"


def test_write_and_read_claims_round_trip(tmp_path):
    rows = [
        jw_row(source="J&W Table 2", condition="select_on=test"),
        jw_row("sig_frac", 0.6, 0.59, 0.12, verdict="not comparable: dev"),
    ]
    written = write_claims(tmp_path / "claims" / "jw.csv", rows)
    read = read_claims(tmp_path / "claims" / "jw.csv")
    assert tuple(read.columns) == CLAIM_COLUMNS
    # an empty text cell reads back as missing (pandas' CSV default)
    pd.testing.assert_frame_equal(read.fillna({"source": "", "condition": ""}), written, check_dtype=False)
    assert read.loc[1, "verdict"] == "not comparable: dev" and read.loc[0, "seed"] == 10


def test_read_claims_refuses_other_columns(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"paper": ["x"], "verdict": ["match"]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="bad.csv: expected the claim columns"):
        read_claims(path)


def test_concatenate_keeps_the_order_given(tmp_path):
    ss = [
        claim(
            "Serrano & Smith 2019",
            "Table 3",
            "yelp",
            "han-rnn",
            10,
            "flip share",
            ours=0.7,
            published=0.65,
            tolerance=0.1,
        )
    ]
    jw = [jw_row(), jw_row("sig_frac", 0.6, 0.59, 0.12)]
    write_claims(tmp_path / "ss.csv", ss)
    write_claims(tmp_path / "jw.csv", jw)
    table = concatenate([tmp_path / "ss.csv", tmp_path / "jw.csv"])
    assert table["paper"].tolist() == ["Serrano & Smith 2019", "Jain & Wallace 2019", "Jain & Wallace 2019"]
    assert table.index.tolist() == [0, 1, 2]
    assert concatenate([tmp_path / "jw.csv", tmp_path / "ss.csv"])["paper"].tolist()[0] == "Jain & Wallace 2019"
    empty = concatenate([])
    assert tuple(empty.columns) == CLAIM_COLUMNS and empty.empty


# --------------------------------------------------------------------------------------------------
# pooling over seeds


def seeded(seed, ours, **overrides):
    return claim(
        "Jain & Wallace 2019",
        "Table 2",
        "sst",
        "lstm-tanh",
        seed,
        "mean tau",
        ours=ours,
        published=0.40,
        tolerance=0.05,
        **overrides,
    )


def test_a_numeric_claim_over_seeds_matches_when_the_seed_mean_is_within_the_tolerance():
    # seeds 0.30, 0.33, 0.32: the mean 0.3167 is 0.083 from 0.40, beyond 0.05
    pooled = over_seeds(claims_frame([seeded(10, 0.30), seeded(11, 0.33), seeded(12, 0.32)]))
    assert len(pooled) == 1
    row = pooled.iloc[0]
    assert pd.isna(row["seed"]) and row["seeds"] == 3 and row["verdict"] == "differs"
    assert row["ours"] == pytest.approx(0.3167, abs=1e-4) and row["sd"] == pytest.approx(0.0153, abs=1e-4)
    assert "per seed 10: 0.3000, 11: 0.3300, 12: 0.3200" in row["condition"]
    # the interval over the seeds is printed beside it, and spans the seeds (3 seeds: one draw in 27 repeats one)
    assert row["low"] == pytest.approx(0.30) and row["high"] == pytest.approx(0.33)
    # one seed at 0.36 would have widened the old range to reach 0.40; the mean (0.33) is 0.07 away: differs
    pooled = over_seeds(claims_frame([seeded(10, 0.30), seeded(11, 0.36), seeded(12, 0.33)]))
    assert pooled.iloc[0]["verdict"] == "differs"
    # a mean within the tolerance matches however wide the seeds spread
    pooled = over_seeds(claims_frame([seeded(10, 0.30), seeded(11, 0.50), seeded(12, 0.40)]))
    assert pooled.iloc[0]["verdict"] == "match"


def test_pooling_keeps_single_seeds_findings_and_other_claims_apart_in_their_order():
    rows = [
        seeded(10, 0.41),
        claim(
            "Jain & Wallace 2019", "Table 2", "sst", "lstm-tanh", 10, "sig frac", ours=0.5, published=0.6, tolerance=0.1
        ),
        seeded(11, 0.50),
        finding(
            "Jain & Wallace 2019",
            "§4.2",
            "sst",
            "lstm-tanh",
            "share",
            {10: 0.8, 11: 0.9, 12: 0.7},
            threshold=0.5,
            side="above",
            rule="rule",
            source="J&W",
        ),
        seeded(12, 0.39, setting=Setting(select_on="dev")),  # another setting: another claim
    ]
    pooled = over_seeds(claims_frame(rows))
    assert pooled["quantity"].tolist() == ["mean tau", "sig frac", "share", "mean tau"]
    assert pooled["seeds"].tolist() == [2, 1, 3, 1]
    assert pooled["verdict"].tolist() == ["differs", "match", "holds", "match"]  # 0.41 and 0.50: mean 0.455, 0.055 away
    assert pooled.loc[1, "seed"] == 10 and pd.isna(pooled.loc[2, "seed"])


def test_pooling_a_qualitative_claim_is_three_valued_and_leaves_unlike_verdicts_apart():
    def sign(seed, verdict):
        return claim("Serrano & Smith 2019", "§5", "yelp", "han-rnn", seed, "ΔJS > 0", ours=0.1, verdict=verdict)

    pooled = over_seeds(claims_frame([sign(10, "holds"), sign(11, "does not hold"), sign(12, "holds")]))
    assert pooled["verdict"].tolist() == ["inconclusive"] and "holds on 2 of 3 seeds" in pooled.iloc[0]["condition"]
    pooled = over_seeds(claims_frame([sign(s, "does not hold") for s in (10, 11, 12)]))
    assert pooled["verdict"].tolist() == ["does not hold"]
    pooled = over_seeds(claims_frame([sign(s, "holds") for s in (10, 11, 12)]))
    assert pooled["verdict"].tolist() == ["holds"]
    # an undefined seed is not pooled with the defined ones
    pooled = over_seeds(claims_frame([seeded(10, 0.41), seeded(11, math.nan), seeded(12, 0.42)]))
    assert pooled["verdict"].tolist() == ["match", "undefined"] and pooled["seeds"].tolist() == [2, 1]
    # reruns give the same table
    pd.testing.assert_frame_equal(
        over_seeds(claims_frame([sign(10, "holds"), sign(11, "holds")])),
        over_seeds(claims_frame([sign(10, "holds"), sign(11, "holds")])),
    )


# --------------------------------------------------------------------------------------------------
# Markdown


def test_claims_markdown_counts_verdicts_per_paper_and_lists_every_row():
    rows = [
        jw_row(),  # match
        jw_row("sig_frac", 0.6, 0.8, 0.12),  # differs
        jw_row("other", 0.1, 0.2, 0.5, verdict="not comparable: selected on dev"),
        claim(
            "Serrano & Smith 2019", "§5", "yelp", "han-rnn", 10, "gradient flips sooner", ours=0.81234, verdict="holds"
        ),
        claim("Serrano & Smith 2019", "§5", "yahoo", "han-rnn", 10, "gradient flips sooner", ours=0.5, verdict="holds"),
    ]
    text = claims_markdown(claims_frame(rows))
    assert text.startswith("# Claims: our numbers beside the published ones")
    assert "| Jain & Wallace 2019 | match | 1 |" in text
    assert "| Jain & Wallace 2019 | differs | 1 |" in text
    assert "| Jain & Wallace 2019 | not comparable | 1 |" in text  # counted by the verdict before its reason
    assert "| Serrano & Smith 2019 | holds | 2 |" in text
    assert "| 0.450 | – | 0.400 | 0.070 | match |" in text  # numbers to 3 decimals (no sd: one seed)
    assert "| 0.812 | – | – | – | holds |" in text  # no published value: a dash
    assert "not comparable: selected on dev" in text  # the row keeps its reason
    assert text.count("\n| Jain & Wallace 2019 | Table 2 |") == 3


# --------------------------------------------------------------------------------------------------
# findings: a paper's conclusion on every seed


def jw_finding(per_seed, undefined="undefined", **options):
    return finding(
        "Jain & Wallace 2019",
        "§4.2",
        "sst",
        "lstm-tanh",
        "share of instances",
        per_seed,
        threshold=0.5,
        side="above",
        rule="the share exceeds 0.5",
        source="J&W §4.2",
        undefined=undefined,
        **options,
    )


def test_a_finding_reads_its_interval_three_ways_and_needs_three_seeds():
    row = jw_finding({10: 0.6, 11: 0.7, 12: 0.8})
    assert list(row) == list(CLAIM_COLUMNS)
    assert (row["verdict"], row["seed"], row["seeds"], row["ours"], row["sd"]) == ("holds", None, 3, 0.7, 0.1)
    assert (row["low"], row["high"]) == (0.6, 0.8)  # seeds known as single values: the interval spans them
    assert row["condition"] == (
        "the share exceeds 0.5; threshold 0.5, above; 95 % interval [0.600, 0.800] over 3 seeds (one value per seed); "
        "per seed 10: 0.600, 11: 0.700, 12: 0.800"
    )
    assert row["published"] is None and row["tolerance"] is None and row["threshold_sensitive"] is False
    # one contrary seed no longer decides against the finding: the interval straddles the threshold
    assert jw_finding({10: 0.6, 11: 0.4, 12: 0.8})["verdict"] == "inconclusive"
    assert jw_finding({10: 0.3, 11: 0.4, 12: 0.2})["verdict"] == "does not hold"
    assert jw_finding({10: 0.9, 11: 0.9})["verdict"] == "not comparable: 2 seeds, a finding needs 3"
    assert jw_finding({10: 0.9})["verdict"] == "not comparable: 1 seed, a finding needs 3"
    assert jw_finding({10: 0.9})["sd"] is None
    gap = jw_finding({10: 0.9, 11: None, 12: 0.8}, undefined="fewer than 20 peaked instances")
    assert gap["verdict"] == "not comparable: fewer than 20 peaked instances on seed 11" and gap["ours"] == 0.85
    table = claims_frame([row, jw_row()])
    assert list(table["seed"].astype(object).where(table["seed"].notna(), None)) == [None, 10] and list(
        table["seeds"]
    ) == [3, 1]


def test_a_finding_over_instances_is_inconclusive_when_the_instances_do_not_decide():
    rng = np.random.default_rng(0)
    # 40 instances a seed, 55 % of them showing the finding: the interval over instances reaches below 0.5
    few = {s: share(rng.random(40) < 0.55) for s in (10, 11, 12)}
    assert jw_finding(few)["verdict"] == "inconclusive"
    # 4000 instances a seed at 70 %: decided
    many = {s: share(rng.random(4000) < 0.7) for s in (10, 11, 12)}
    row = jw_finding(many)
    assert row["verdict"] == "holds" and "over 3 seeds and their test instances" in row["condition"]
    assert row["p_value"] < 0.01


def test_a_finding_is_threshold_sensitive_when_half_or_double_our_threshold_changes_it():
    steady = jw_finding({10: 0.95, 11: 0.96, 12: 0.97}, parameter="often", span=(0.25, 0.75))
    assert steady["verdict"] == "holds" and steady["threshold_sensitive"] is False
    assert "(often, ours; also read at 0.25 and 0.75)" in steady["condition"]
    shaky = jw_finding({10: 0.6, 11: 0.62, 12: 0.64}, parameter="often", span=(0.25, 0.75))
    assert shaky["verdict"] == "holds" and shaky["threshold_sensitive"] is True
    # an instance-level parameter of ours, recomputed at other values (`variants`), counts the same way
    moved = jw_finding({10: 0.6, 11: 0.62, 12: 0.64}, variants={"2x": {10: 0.4, 11: 0.4, 12: 0.4}})
    assert moved["threshold_sensitive"] is True


def test_a_finding_that_cannot_fail_is_not_counted():
    row = jw_finding({10: 1.0, 11: 1.0, 12: 1.0}, cannot_fail="attention near uniform")
    assert row["verdict"] == "not comparable: the test cannot fail here (attention near uniform)"


def test_q_values_adjust_the_counted_findings_p_values_across_the_table(tmp_path):
    rows = [jw_finding({10: 0.6, 11: 0.7, 12: 0.8}), jw_finding({10: 0.6, 11: 0.4, 12: 0.8})]
    rows.append(jw_finding({10: 1.0, 11: 1.0, 12: 1.0}, cannot_fail="uniform"))
    write_claims(tmp_path / "jw.csv", rows)
    table = concatenate([tmp_path / "jw.csv"])
    assert table["q_value"].notna().tolist() == [True, True, False]
    assert (table["q_value"].dropna() >= table["p_value"].iloc[:2]).all()
