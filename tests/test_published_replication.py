"""The published replication (`docs/replication`) as a reader meets it: it opens with what was found,
every number there is a value of the claims published beside it, and every job ran at one commit."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from attnexp.claims import CLAIM_COLUMNS
from attnexp.papers import PAPERS
from attnexp.scorecard import read_scorecard

PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "replication"
# "20news lstm-dot (0.060 ± 0.066)": a model and its measure of a finding, the mean ± sd over its seeds
MODEL_MEASURE = r"(\w+) ([\w-]+(?: vs [\w-]+)?) \((-?\d+\.\d+) ± (\d+\.\d+)\)"


def test_the_published_replication_opens_with_what_was_found_in_numbers_of_its_claims():
    index = (PUBLISHED / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", index, re.MULTILINE)
    assert headings[0] == "What we found", headings[:3]
    found = index.split("## What we found", 1)[1].split("\n## ", 1)[0]
    card = read_scorecard(PUBLISHED / "scorecard.csv")
    measured = {f"{v:.3f}" for column in ("ours", "sd") for v in card[column].dropna()}
    # a threshold a finding states ("max attention at least 0.5") is a number of its claims' quantity
    stated = {n for text in card["quantity"].dropna() for n in re.findall(r"-?\d+\.\d+", text)}
    numbers = re.findall(r"(?<![§\d.])-?\d+\.\d+", found)  # not the papers' section numbers
    assert numbers and set(numbers) <= measured | stated, sorted(set(numbers) - measured - stated)
    # each model's mean ± sd is that finding's claim on that dataset and model
    pairs = 0
    for paper in PAPERS.values():
        for table, prefix, words in paper.findings:
            line = next((x for x in found.splitlines() if x.startswith(f"- {words} — {table}: ")), None)
            if line is None:
                continue
            part = card[(card["paper"] == paper.citation) & (card["table"] == table) & card["seed"].isna()]
            rows = {
                (r.dataset, r.model): (f"{r.ours:.3f}", f"{r.sd:.3f}")
                for r in part.itertuples()
                if r.quantity.startswith(prefix)
            }
            for dataset, model, mean, sd in re.findall(MODEL_MEASURE, line):
                assert rows.get((dataset, model)) == (mean, sd), (words, dataset, model, mean, sd)
                pairs += 1
    assert pairs >= 10, pairs
    claims = pd.read_csv(PUBLISHED / "claims.csv")
    assert list(claims.columns) == list(CLAIM_COLUMNS) and len(claims) == len(card)


def test_every_job_of_the_published_replication_ran_at_one_commit():
    index = (PUBLISHED / "README.md").read_text()
    jobs = re.search(r"^\| jobs \| every one of the ([\d,]+) jobs ran at commit `([0-9a-f]{40})`", index, re.MULTILINE)
    assert jobs, "the provenance names one commit for every job"
