"""The published pretrained-encoder run (`docs/pretrained-sst`, `presets/pretrained_sst.yaml`) as a reader
meets it: every job ran at one commit, the fine-tuned all-MiniLM-L6-v2 reaches the accuracy that
docs/pretrained.md states on every seed, Hao et al.'s pruning claim and every other test's claims carry
verdicts on its three seeds, and each number docs/pretrained.md quotes is a value of the published pages."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from published_pages import markdown_table, published_claim_columns, quoted_claims

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "docs" / "pretrained-sst"
GUIDE = ROOT / "docs" / "pretrained.md"
MODEL = "minilm-cls"
SEEDS = (10, 11, 12)
# the bar for SST binary: a plain fine-tune reaches 0.875 after one epoch
MIN_ACCURACY = 0.86


@pytest.fixture(scope="module")
def claims() -> pd.DataFrame:
    table = pd.read_csv(PUBLISHED / "claims.csv")
    assert published_claim_columns(table.columns)
    return table[table["model"] == MODEL]


@pytest.fixture(scope="module")
def performance() -> pd.DataFrame:
    table = markdown_table(PUBLISHED / "data-and-models.md", "dataset | model")
    return table[(table["dataset"] == "sst") & (table["model"] == MODEL)]


def test_every_job_of_the_published_pretrained_run_ran_at_one_commit():
    index = (PUBLISHED / "README.md").read_text(encoding="utf-8")
    jobs = re.search(r"^\| jobs \| every one of the ([\d,]+) jobs ran at commit `([0-9a-f]{40})`", index, re.MULTILINE)
    assert jobs, "the provenance names one commit for every job"
    assert "presets/pretrained_sst.yaml" in index


def test_the_fine_tuned_encoder_reaches_the_stated_accuracy_on_every_seed(performance):
    assert sorted(int(s) for s in performance["seed"]) == list(SEEDS)
    assert set(performance["select_on"]) == {"dev"}
    accuracies = {int(r.seed): r.accuracy for r in performance.itertuples()}
    assert all(float(a) >= MIN_ACCURACY for a in accuracies.values()), accuracies
    # docs/pretrained.md states each seed's test accuracy as published
    guide = GUIDE.read_text(encoding="utf-8")
    stated = re.search(r"test accuracy ((?:\d+\.\d{3}, )+\d+\.\d{3}) \(seeds ([\d, ]+)\)", guide)
    assert stated, "docs/pretrained.md states the test accuracy of each seed"
    values = stated.group(1).split(", ")
    seeds = [int(s) for s in stated.group(2).split(", ")]
    assert dict(zip(seeds, values)) == accuracies


def test_hao_et_al_s_pruning_claim_and_every_tests_claims_carry_verdicts_on_three_seeds(claims):
    hao = claims[claims["paper"] == "Hao et al. 2021"]
    assert len(hao) == 2 and set(hao["seeds"]) == {3}, hao[["quantity", "seeds"]]
    assert set(hao["verdict"]) <= {"holds", "does not hold"}
    # S&S, the battery (ERASER, the violation test) and rollout, each with claims on the encoder (J&W
    # state their findings for BiLSTMs: the encoder's J&W results are its correlation table and figures)
    papers = set(claims["paper"])
    for paper in (
        "Serrano & Smith 2019",
        "DeYoung et al. 2020",
        "Abnar & Zuidema 2020",
        "Hao et al. 2021",
    ):
        assert paper in papers, paper
    judged = claims[claims["verdict"].isin(["holds", "does not hold", "match", "differs"])]
    assert len(judged) >= 10


def test_the_jain_wallace_page_holds_the_encoders_correlations_and_figures():
    page = (PUBLISHED / "jain-wallace-2019.md").read_text(encoding="utf-8")
    correlations = markdown_table(PUBLISHED / "jain-wallace-2019.md", "dataset | model | seed | select_on")
    mine = correlations[correlations["model"] == MODEL]
    assert sorted({int(s) for s in mine["seed"]}) == list(SEEDS)
    assert {"attention~gradient", "attention~loo"} <= set(mine["pair"])
    # the page shows the first seed's figures (every seed's are in the run folder)
    for figure in ("tau_histograms", "permutation", "adversarial_violin"):
        name = f"jain_wallace-sst-{MODEL}-seed{SEEDS[0]}-{figure}.png"
        assert f"(figures/{name})" in page and (PUBLISHED / "figures" / name).is_file(), name
    assert "|  |\n|\n" not in page, "an empty table is one line, not a header alone"


def test_the_numbers_docs_pretrained_quotes_are_the_published_ones(claims):
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide.split("## Results on SST", 1)[1].split("\n## ", 1)[0]
    # "attribution order − attention order: +0.012 ± 0.004": a Hao claim's mean ± sd over the seeds
    assert quoted_claims(section, claims), "the results section quotes the pruning claim"
