"""Normalised AOPC (`attnexp.papers.faithfulness.bounds`, Edin et al. 2025): each instance's AOPC range
over every ordering of its units, exact by dynamic programming and by beam search, against every
permutation scored by ERASER itself; and the normalised scores."""

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import flat, hierarchical, random_documents, random_examples

from attnexp.papers.faithfulness import bounds as fb
from attnexp.papers.faithfulness import experiment as ff
from attnexp.papers.faithfulness import summary as fs

torch.use_deterministic_algorithms(True)
BINS = (0.1, 0.2, 0.5)  # n = 5: k = 1, 1, 3; n = 6: 1, 2, 3


def every_ordering(model, examples, units=None):
    """Per instance, the lowest and highest AOPC of each kind over all n! orderings, by ERASER."""
    sizes = [len(u) for u in units] if units is not None else [len(e.tokens) for e in examples]
    rows = []
    for i, n in enumerate(sizes):
        orders = [np.array(p) for p in permutations(range(n))]
        # an ordering as scores: the first position gets the highest score
        rankings = {f"o{k}": [None] * len(examples) for k in range(len(orders))}
        for k, order in enumerate(orders):
            scores = np.empty(n)
            scores[order] = np.arange(n, 0, -1)
            for j in range(len(examples)):
                rankings[f"o{k}"][j] = scores if j == i else np.arange(sizes[j], dtype=float)
        frame = ff.eraser(model, examples, rankings, bins=BINS, op="delete", units=units)
        per = frame[frame["id"] == examples[i].id].groupby("ranking")[["comprehensiveness", "sufficiency"]].mean()
        rows.append(
            {
                "id": examples[i].id,
                "comprehensiveness_min": per["comprehensiveness"].min(),
                "comprehensiveness_max": per["comprehensiveness"].max(),
                "sufficiency_min": per["sufficiency"].min(),
                "sufficiency_max": per["sufficiency"].max(),
            }
        )
    return pd.DataFrame(rows)


def test_levels_are_the_distinct_bin_sizes_with_their_counts():
    assert fb.levels(5, BINS) == [(1, 2), (3, 1)]
    assert fb.levels(6, BINS) == [(1, 1), (2, 1), (3, 1)]
    assert fb.bin_size(0.07, 100) == 7  # exact decimal arithmetic


@pytest.mark.parametrize("case", ["flat", "han-sentences"])
def test_exact_and_wide_beam_bounds_equal_the_extremes_over_every_ordering(case):
    if case == "flat":
        model, examples, units = flat("lstm", "tanh", 1).eval(), random_examples([5, 6, 4], seed=3), None
    else:
        model = hierarchical("han", "rnn").eval()
        examples = random_documents([14, 16], seed=4)
        units = [ff.attended_units(e, "sentences") for e in examples]
    truth = every_ordering(model, examples, units).set_index("id")
    exact = fb.aopc_bounds(model, examples, BINS, units=units, exact_max_units=10).set_index("id")
    beam = fb.aopc_bounds(model, examples, BINS, units=units, exact_max_units=1, beam_width=1000).set_index("id")
    assert set(exact["bounds"]) == {"exact"} and set(beam["bounds"]) == {"beam"}
    columns = list(fb.BOUND_COLUMNS[:4])
    np.testing.assert_allclose(exact[columns].to_numpy(), truth.loc[exact.index, columns].to_numpy(), atol=1e-6)
    np.testing.assert_allclose(beam[columns].to_numpy(), truth.loc[beam.index, columns].to_numpy(), atol=1e-6)


def test_bounds_do_not_depend_on_how_many_instances_are_searched_together():
    model, examples = flat("lstm", "tanh", 1).eval(), random_examples([7, 12, 6, 15, 3], seed=8)
    one = fb.aopc_bounds(model, examples, BINS, exact_max_units=8, beam_width=4, group=1)
    all_ = fb.aopc_bounds(model, examples, BINS, exact_max_units=8, beam_width=4, group=32)
    assert one["id"].tolist() == all_["id"].tolist() == [e.id for e in examples]
    columns = list(fb.BOUND_COLUMNS[:4])
    np.testing.assert_allclose(one[columns].to_numpy(), all_[columns].to_numpy(), atol=1e-6)


def test_a_narrow_beam_finds_orderings_inside_the_exact_range():
    model, examples = flat("lstm", "tanh", 1).eval(), random_examples([7, 8, 6], seed=5)
    exact = fb.aopc_bounds(model, examples, BINS).set_index("id")
    narrow = fb.aopc_bounds(model, examples, BINS, exact_max_units=1, beam_width=1).set_index("id")
    for kind in ("comprehensiveness", "sufficiency"):
        assert (narrow[f"{kind}_max"] <= exact[f"{kind}_max"] + 1e-9).all()
        assert (narrow[f"{kind}_min"] >= exact[f"{kind}_min"] - 1e-9).all()
        assert (narrow[f"{kind}_min"] <= narrow[f"{kind}_max"]).all()


def test_normalised_aopc_lies_in_the_unit_interval_and_orders_the_rankings():
    model, examples = flat("lstm", "tanh", 1).eval(), random_examples([5, 6, 4, 9, 12], seed=6)
    settings = {
        "bins": BINS,
        "max_tokens": 20_000,
        "bounds": {"exact_max_units": 6, "beam_width": 5, "beam_max_units": None, "max_instances": None},
    }
    rankings = {
        "forward": [np.arange(len(e.tokens), 0, -1, dtype=float) for e in examples],
        "backward": [np.arange(len(e.tokens), dtype=float) for e in examples],
    }
    frame = ff.with_bounds(ff.eraser(model, examples, rankings, bins=BINS), model, examples, settings, "delete")
    assert set(frame["bounds"]) == {"exact", "beam"}
    table = fs.aopc(frame).set_index("ranking")
    for column in ("aopc_comprehensiveness_normalised", "aopc_sufficiency_normalised"):
        assert table[column].between(0, 1).all()
    assert (table["instances_normalised"] == 5).all()
    # per instance, each ranking lies within the (widened) range
    per = frame.groupby(["ranking", "id"])[["comprehensiveness", "sufficiency", *fb.BOUND_COLUMNS[:4]]].first()
    means = frame.groupby(["ranking", "id"])[["comprehensiveness", "sufficiency"]].mean()
    for kind in ("comprehensiveness", "sufficiency"):
        assert (means[kind] >= per[f"{kind}_min"] - 1e-9).all() and (means[kind] <= per[f"{kind}_max"] + 1e-9).all()
    # a budget bounds fewer instances; the rest have no normalised score
    budget = settings | {"bounds": settings["bounds"] | {"max_instances": 2}}
    partial = ff.with_bounds(ff.eraser(model, examples, rankings, bins=BINS), model, examples, budget, "delete")
    partial_table = fs.aopc(partial)
    assert (partial_table["instances_normalised"] == 2).all() and (partial_table["instances"] == 5).all()
    # the raw score over the two bounded instances, beside the raw score over all five
    first_two = frame[frame["id"].isin([examples[i].id for i in ff.evenly_spaced(5, 2)])]
    expected = first_two.groupby(["ranking", "id"])["comprehensiveness"].mean().groupby("ranking").mean()
    bounded = partial_table.set_index("ranking")["aopc_comprehensiveness_bounded"]
    assert bounded.to_dict() == pytest.approx(expected.to_dict())
    short = settings | {"bounds": settings["bounds"] | {"beam_max_units": 9}}  # the 12-token instance is left out
    capped = ff.with_bounds(ff.eraser(model, examples, rankings, bins=BINS), model, examples, short, "delete")
    assert (fs.aopc(capped)["instances_normalised"] == 4).all()
    # a budget under a cap is spent on instances within it: 2 of the 4 of at most 9 tokens, the first and last
    both = settings | {"bounds": settings["bounds"] | {"beam_max_units": 9, "max_instances": 2}}
    spent = ff.with_bounds(ff.eraser(model, examples, rankings, bins=BINS), model, examples, both, "delete")
    assert set(spent.loc[spent["bounds"].notna(), "id"]) == {examples[0].id, examples[3].id}


def test_widen_and_normalised_by_hand():
    found = pd.DataFrame(
        {
            "id": ["a", "b"],
            "comprehensiveness_min": [0.0, 0.1],
            "comprehensiveness_max": [0.5, 0.2],
            "sufficiency_min": [-0.1, 0.0],
            "sufficiency_max": [0.3, 0.0],
            "bounds": ["beam", "exact"],
        }
    )
    observed = pd.DataFrame({"id": ["a", "a"], "comprehensiveness": [0.6, 0.2], "sufficiency": [0.0, 0.1]})
    wide = fb.widen(found, observed).set_index("id")
    assert wide.loc["a", "comprehensiveness_max"] == 0.6 and wide.loc["a", "comprehensiveness_min"] == 0.0
    assert wide.loc["b", "comprehensiveness_max"] == 0.2  # no ranking of b: as found
    values = fs.normalised(np.array([0.3, 0.0, 0.15]), np.array([0.0, 0.0, 0.1]), np.array([0.6, 0.0, 0.2]))
    assert values[0] == pytest.approx(0.5) and np.isnan(values[1]) and values[2] == pytest.approx(0.5)


def test_tables_show_raw_and_normalised_and_where_their_orders_differ():
    from attnexp.papers.faithfulness.tables import faithfulness_claims, rank_changes

    table = pd.DataFrame(
        {
            "dataset": "sst",
            "model": ["a", "a", "a", "b", "b", "b"],
            "seed": 10,
            "operator": "delete",
            "unit": "tokens",
            "ranking": ["random", "attention", "ig"] * 2,
            "aopc_comprehensiveness": [0.1, 0.3, 0.2, 0.05, 0.4, 0.35],
            "aopc_sufficiency": [0.2, 0.1, 0.15, 0.3, 0.2, 0.1],
            "aopc_comprehensiveness_normalised": [0.2, 0.5, 0.6, 0.1, 0.4, 0.45],
            "aopc_sufficiency_normalised": [0.5, 0.3, 0.4, 0.6, 0.7, 0.2],
            "aopc_comprehensiveness_bounded": [0.1, 0.3, 0.2, 0.05, 0.4, 0.35],
            "instances": 50,
            "instances_normalised": 50,
        }
    )
    changes = rank_changes(table)
    # model a's explainers: attention > ig raw, ig > attention normalised; b's likewise; by attention and by ig
    # b > a raw and a > b normalised; by random the order stays
    assert set(changes["compared"]) == {
        "explainers of a (seed 10)",
        "explainers of b (seed 10)",
        "models by attention",
        "models by ig",
    }
    row = changes.set_index("compared").loc["models by attention"]
    assert row["by raw AOPC"] == "b/10 > a/10" and row["by normalised AOPC"] == "a/10 > b/10"
    claims = pd.DataFrame(faithfulness_claims(table))
    normalised = claims[claims["quantity"].str.startswith("normalised")]
    assert len(normalised) == 2 * 2 * 2  # two models, two rankings, two metrics
    attention_b = normalised[
        (normalised["model"] == "b") & normalised["quantity"].str.contains("sufficiency\\(attention")
    ]
    assert attention_b["verdict"].item() == "does not hold"  # 0.7 is above random's 0.6
    assert "Edin et al. 2025" in attention_b["source"].item()
