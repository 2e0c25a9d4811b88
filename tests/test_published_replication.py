"""The published replication (`docs/replication`) as a reader meets it: it opens with what was found,
every number there is a value of the claims published beside it, and every job ran at one commit."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from published_pages import published_claim_columns

from attnexp.papers import PAPERS

PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "replication"
# "20news lstm-dot (0.060 ± 0.066)": a model and its measure of a finding, the mean ± sd over its seeds
MODEL_MEASURE = r"(\w+) ([\w-]+(?: vs [\w-]+)?) \((-?\d+\.\d+) ± (\d+\.\d+)\)"
# since D-VERDICT: "20news lstm-dot (0.060 [0.010, 0.110], 3 seeds)", the mean and its 95 % interval
MODEL_INTERVAL = r"(\w+) ([\w-]+(?: vs [\w-]+)?) \((-?\d+\.\d+) \[(-?\d+\.\d+), (-?\d+\.\d+)\], \d+ seeds\)"


def test_the_published_replication_opens_with_what_was_found_in_numbers_of_its_claims():
    index = (PUBLISHED / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", index, re.MULTILINE)
    assert headings[0] == "What we found", headings[:3]
    found = index.split("## What we found", 1)[1].split("\n## ", 1)[0]
    card = pd.read_csv(PUBLISHED / "scorecard.csv", dtype={"quantity": str, "dataset": str, "model": str})
    measured = {f"{v:.3f}" for column in ("ours", "sd", "low", "high") if column in card for v in card[column].dropna()}
    # a threshold a finding states ("max attention at least 0.5") is a number of its claims' quantity
    stated = {n for text in card["quantity"].dropna() for n in re.findall(r"-?\d+\.\d+", text)}
    listed = "\n".join(line for line in found.splitlines() if line.startswith(("- ", "**[")))  # not the rule's words
    numbers = re.findall(r"(?<![§\d.])-?\d+\.\d+", listed)  # not the papers' section numbers
    assert numbers and set(numbers) <= measured | stated, sorted(set(numbers) - measured - stated)
    # each model's mean ± sd is that finding's claim on that dataset and model
    pairs = 0
    for paper in PAPERS.values():
        for f in paper.findings:
            table, prefix = f.table, f.prefix
            starts = (f"- {f.statement} — {f.location}: ", f"- {f.statement} — {table}: ")  # since / before D-VERDICT
            line = next((x for x in found.splitlines() if x.startswith(starts)), None)
            if line is None:
                continue
            part = card[(card["paper"] == paper.citation) & (card["table"] == table) & card["seed"].isna()]
            rows = {
                (r.dataset, r.model): (f"{r.ours:.3f}", f"{r.sd:.3f}")
                for r in part.itertuples()
                if r.quantity.startswith(prefix)
            }
            for dataset, model, mean, sd in re.findall(MODEL_MEASURE, line):
                assert rows.get((dataset, model)) == (mean, sd), (f.statement, dataset, model, mean, sd)
                pairs += 1
            intervals = {
                (r.dataset, r.model): (f"{r.ours:.3f}", f"{r.low:.3f}", f"{r.high:.3f}")
                for r in part.itertuples()
                if r.quantity.startswith(prefix) and "low" in part and not pd.isna(r.low)
            }
            for dataset, model, mean, low, high in re.findall(MODEL_INTERVAL, line):
                assert intervals.get((dataset, model)) == (mean, low, high), (f.statement, dataset, model)
                pairs += 1
    assert pairs >= 10, pairs
    claims = pd.read_csv(PUBLISHED / "claims.csv")
    assert published_claim_columns(claims.columns) and len(claims) == len(card)


def test_every_job_of_the_published_replication_ran_at_one_commit():
    index = (PUBLISHED / "README.md").read_text()
    jobs = re.search(r"^\| jobs \| every one of the ([\d,]+) jobs ran at commit `([0-9a-f]{40})`", index, re.MULTILINE)
    assert jobs, "the provenance names one commit for every job"
