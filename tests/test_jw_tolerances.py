"""J&W's Table 2 tolerances (attnexp.papers.jain_wallace.tolerances): measured from the two states of
their repository, and the config's values are those measurements."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnexp.papers.jain_wallace.tolerances import (
    measured_tolerances,
    state_gaps,
    tolerance_markdown,
    tolerance_table,
    write_tolerances,
)

REPO = Path(__file__).resolve().parents[1]
STATES = REPO / "references" / "jain_wallace_table2_states.csv"


def states(rows):
    return pd.DataFrame(
        rows, columns=["dataset", "class", "label", "column", "state", "mean", "std", "sig_frac", "n", "source"]
    )


def test_gaps_pair_the_states_by_label_and_leave_out_changed_datasets():
    table = states(
        [
            ("sst", "0", "0", "gradient_lstm", "675b0dc", 0.40, 0.2, 0.59, 900, "a"),
            ("sst", "0", "0", "gradient_lstm", "425a89a", 0.34, 0.2, 0.48, 950, "b"),
            ("snli", "1", "0", "loo_lstm", "675b0dc", 0.43, 0.2, 0.59, 900, "a"),
            ("snli", "0", "0", "loo_lstm", "425a89a", 0.16, 0.2, 0.20, 950, "b"),  # another class id, the same label
            ("sst", "1", "1", "gradient_average", "675b0dc", 0.70, 0.1, 0.94, 900, "a"),
            ("sst", "1", "1", "gradient_average", "425a89a", 0.68, 0.1, 0.83, 950, "b"),
            ("imdb", "1", "1", "gradient_average", "675b0dc", 0.70, 0.1, 0.90, 900, "a"),  # one state only: no gap
        ]
    )
    gaps = state_gaps(table)
    assert gaps[["dataset", "column", "counted"]].values.tolist() == [
        ["snli", "loo_lstm", False],
        ["sst", "gradient_lstm", True],
        ["sst", "gradient_average", True],
    ]
    assert gaps["mean"].tolist() == pytest.approx([0.27, 0.06, 0.02]) and gaps["sig_frac"].tolist() == pytest.approx(
        [0.39, 0.11, 0.11]
    )
    measured = measured_tolerances(table)  # one counted cell each: its gap is the median
    assert measured == {"lstm": {"mean": 0.06, "sig_frac": 0.11}, "average": {"mean": 0.02, "sig_frac": 0.11}}
    shown = tolerance_table(table, measured)
    assert (
        shown.loc[0, "largest_gap_left_out"] == pytest.approx(0.27)
        and shown.loc[0, "where_left_out"] == "snli, class 0, loo_lstm"
    )
    assert "Left out of the basis: snli" in tolerance_markdown(shown)


def test_the_configured_tolerances_are_the_measured_spread_of_the_authors_states(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    table = pd.read_csv(STATES, dtype={"class": str, "label": str})
    assert config["jain_wallace"]["table2_tolerance"] == measured_tolerances(table)
    written = write_tolerances(
        STATES, config["jain_wallace"]["table2_tolerance"], tmp_path / "t.csv", tmp_path / "t.md"
    )
    assert len(written) == 4 and (written["median_gap"] <= written["tolerance"]).all()
