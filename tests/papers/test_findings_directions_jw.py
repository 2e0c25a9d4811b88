"""Each of Jain & Wallace's permutation and adversarial findings on constructed cases whose answer is
known, in both directions: 300 test instances on each of three seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from attnexp.claims import Setting
from attnexp.papers.jain_wallace.findings import finding_claims

THRESHOLDS = {
    "minimal_output_change": 0.05,
    "peaked_attention": 0.5,
    "min_peaked_instances": 20,
    "very_different_jsd": 0.5,
    "often": 0.5,
}
INSTANCES = 300


def runs(change: float, peak: float, jsd: float) -> list[dict]:
    """Three seeds whose every instance has this median output change under permutation, this max
    attention and this ε-max JSD."""
    permutation = pd.DataFrame(
        {
            "id": [f"t{i}" for i in range(INSTANCES)],
            "max_attention": [peak] * INSTANCES,
            "median_output_difference": [change] * INSTANCES,
        }
    )
    adversarial = pd.DataFrame({"eps_max_jsd": [jsd] * INSTANCES, "max_attention": [peak] * INSTANCES})
    return [
        {
            "dataset": "sst",
            "model": "lstm-tanh",
            "seed": seed,
            "encoder": "lstm",
            "setting": Setting("test"),
            "permutation": permutation,
            "adversarial": adversarial,
        }
        for seed in (10, 11, 12)
    ]


def verdicts(found: list[dict]) -> dict[str, str]:
    return {("peaked" if r["quantity"].startswith("the same") else r["table"][:4]): r["verdict"] for r in found}


@pytest.mark.parametrize(
    ("change", "jsd", "expected"),
    [
        (0.01, 0.6, "holds"),  # permuting moves nothing; a very different attention keeps the output
        (0.3, 0.1, "does not hold"),  # permuting moves the output; no very different attention keeps it
    ],
)
def test_permutation_and_adversarial_findings_in_both_directions(change, jsd, expected):
    found = verdicts(finding_claims(runs(change, 0.9, jsd), THRESHOLDS))
    assert found == {"§4.2": expected, "peaked": expected, "§4.3": expected}


def test_permuting_near_uniform_attention_cannot_fail_and_is_not_counted():
    found = verdicts(finding_claims(runs(0.0, 0.1, 0.6), THRESHOLDS))
    why = "not comparable: the test cannot fail here (attention near uniform"
    assert found["§4.2"].startswith(why)
    assert found["peaked"].startswith("not comparable: fewer than 20 test instances")  # no peaked instance at all
    assert found["§4.3"] == "holds"  # the adversarial search is not a permutation: it is counted
