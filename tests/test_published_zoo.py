"""The published zoo runs as a reader meets them. On each dataset of `PAGES` (SST: `docs/zoo-sst`,
`presets/zoo_sst.yaml`; IMDB: `docs/zoo-imdb`, `presets/zoo_imdb.yaml`): every job ran at one commit; the
zoo's table has every model on every seed; Mohankumar et al.'s claims carry verdicts on the three seeds; the
debate matrix has a column per model. On SST also: the diversity LSTM's conicity is below the vanilla
BiLSTM's; Liu et al.'s and DeYoung et al.'s claims carry verdicts; the AOPC table has raw and normalised AOPC
under each removal operator. The planted-cue table (`docs/zoo-planted`) shows every model's dev, test and
shifted-test accuracy. The numbers docs/extensions.md quotes from each page are the page's."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from published_pages import markdown_table, published_claim_columns, quoted_claims, section

ROOT = Path(__file__).resolve().parents[1]
# each dataset whose zoo part is published: its page
PAGES = {"sst": ROOT / "docs" / "zoo-sst", "imdb": ROOT / "docs" / "zoo-imdb"}
PLANTED = ROOT / "docs" / "zoo-planted"
VANILLA = "lstm-tanh"
ZOO = ("lstm-ortho-tanh", "lstm-diversity-tanh", "lstm-sparsemax")
SEEDS = (10, 11, 12)
OPERATORS = ("delete", "zero", "attention_mask")
JUDGED = {"holds", "does not hold", "match", "differs"}


def _mean(cell: str) -> float:
    return float(cell.split(" ± ")[0])


def _claims(dataset: str) -> pd.DataFrame:
    table = pd.read_csv(PAGES[dataset] / "claims.csv")
    assert published_claim_columns(table.columns)
    return table[table["dataset"] == dataset]


@pytest.fixture(scope="module")
def claims() -> pd.DataFrame:
    return _claims("sst")


@pytest.mark.parametrize(
    ("page", "preset"), [("zoo-sst", "zoo_sst"), ("zoo-imdb", "zoo_imdb"), ("zoo-planted", "zoo_planted")]
)
def test_every_job_of_each_published_zoo_run_ran_at_one_commit(page, preset):
    index = (ROOT / "docs" / page / "README.md").read_text(encoding="utf-8")
    jobs = re.search(r"^\| jobs \| every one of the ([\d,]+) jobs ran at commit `([0-9a-f]{40})`", index, re.MULTILINE)
    assert jobs, "the provenance names one commit for every job"
    assert f"presets/{preset}.yaml" in index


def _zoo_table(dataset: str) -> pd.DataFrame:
    zoo = markdown_table(PAGES[dataset] / "beyond-the-papers.md", "dataset | model | seed | accuracy | conicity")
    return zoo[zoo["dataset"] == dataset]


@pytest.mark.parametrize("dataset", PAGES)
def test_the_zoo_table_has_every_model_on_every_seed(dataset):
    zoo = _zoo_table(dataset)
    assert {(m, int(s)) for m, s in zip(zoo["model"], zoo["seed"])} == {(m, s) for m in (VANILLA, *ZOO) for s in SEEDS}
    assert "ig_unconverged" in zoo.columns and all(0 <= float(u) <= 1 for u in zoo["ig_unconverged"])
    assert all(0 <= float(c) <= 1 for c in zoo["conicity"]), "conicity is reported for every recurrent model"


@pytest.mark.parametrize("dataset", PAGES)
def test_mohankumar_claims_carry_verdicts_on_every_zoo_model(dataset):
    claims = _claims(dataset)
    for model in ZOO:
        mohankumar = claims[(claims["model"] == model) & (claims["paper"] == "Mohankumar et al. 2020")]
        findings = mohankumar[mohankumar["seeds"] == len(SEEDS)]
        assert len(findings) >= 3 and set(findings["verdict"]) <= JUDGED, (model, findings[["quantity", "verdict"]])


def test_on_sst_the_diversity_lstm_is_less_conical_than_the_vanilla_bilstm():
    zoo = _zoo_table("sst")
    conicity = {(r.model, int(r.seed)): float(r.conicity) for r in zoo.itertuples()}
    for seed in SEEDS:
        assert conicity["lstm-diversity-tanh", seed] < conicity[VANILLA, seed], seed


def test_liu_and_deyoung_claims_carry_verdicts_on_the_zoo_on_sst(claims):
    for model in ZOO:
        mine = claims[claims["model"] == model]
        liu = mine[(mine["paper"] == "Liu et al. 2022") & mine["quantity"].str.startswith("violation ratio(attention)")]
        assert len(liu) == 1 and liu["verdict"].iloc[0] in JUDGED and liu["seeds"].iloc[0] == len(SEEDS), model
        deyoung = mine[mine["paper"] == "DeYoung et al. 2020"]
        assert deyoung["quantity"].str.startswith("normalised AOPC").any() and set(deyoung["verdict"]) <= JUDGED
    conicity = claims[(claims["model"] == "lstm-diversity-tanh") & claims["quantity"].str.contains("conicity")]
    assert "holds" in set(conicity["verdict"]), conicity[["quantity", "verdict"]]


def test_the_aopc_table_has_raw_and_normalised_aopc_under_each_operator():
    aopc = markdown_table(PAGES["sst"] / "beyond-the-papers.md", "dataset | model | seed | operator | unit | ranking")
    aopc = aopc[aopc["dataset"] == "sst"]
    for model in (VANILLA, *ZOO):
        mine = aopc[(aopc["model"] == model) & (aopc["ranking"] == "attention")]
        assert set(mine["operator"]) == set(OPERATORS), model
        for cell in (*mine["normalised comprehensiveness"], *mine["normalised sufficiency"]):
            assert 0 <= _mean(cell) <= 1, (model, cell)
        assert all(-1 <= _mean(c) <= 1 for c in mine["AOPC-comprehensiveness"]), model  # raw beside normalised


@pytest.mark.parametrize("dataset", PAGES)
def test_the_debate_matrix_has_a_column_for_every_model(dataset):
    page = (PAGES[dataset] / "beyond-the-papers.md").read_text(encoding="utf-8")
    assert page.index(f"#### {dataset}") < page.index("| paper | test |"), f"the matrix's first section is {dataset}'s"
    matrix = markdown_table(page, "paper | test")
    assert {f"{m} seed{s}" for m in (VANILLA, *ZOO) for s in SEEDS} <= set(matrix.columns)


@pytest.mark.parametrize(("dataset", "quoted"), [("sst", 20), ("imdb", 8)])
def test_the_numbers_the_zoo_docs_quote_are_the_published_ones(dataset, quoted):
    results = section(ROOT / "docs" / "extensions.md", f"### Results on {dataset.upper()}")
    assert len(quoted_claims(results, _claims(dataset))) >= quoted, "the results section quotes the claims it rests on"
    # the comparison table: every cell is the page's, and "further" where the page says so
    quoted_table = markdown_table(results, "test | reading | lstm-tanh").set_index("test")
    page = (PAGES[dataset] / "beyond-the-papers.md").read_text(encoding="utf-8")
    for model in ZOO:
        compared = markdown_table(page.split(f"#### {dataset}: {model}\n", 1)[1], "paper | test | seeds")
        further = (compared["compared"] == "further").sum()
        assert quoted_table.loc["further on", model] == f"{further} of {len(compared)}", model
        for row in compared.itertuples():
            cell = quoted_table.loc[f"{row.paper}: {row.test}"]
            assert cell["lstm-tanh"] == row.vanilla, (row.test, cell["lstm-tanh"], row.vanilla)
            assert cell[model] == row.zoo + (" (further)" if row.compared == "further" else ""), (model, row.test)


def test_the_planted_cue_table_shows_dev_test_and_shifted_test_accuracy_of_every_zoo_model():
    table = markdown_table(PLANTED / "jain-wallace-2019.md", "dataset | model | seed | dev_accuracy")
    assert {(m, int(s)) for m, s in zip(table["model"], table["seed"])} == {
        (m, s) for m in (VANILLA, *ZOO) for s in SEEDS
    }
    for column in ("dev_accuracy", "test_accuracy", "shifted_test_accuracy"):
        assert all(0.5 <= float(a) <= 1 for a in table[column]), column  # every model learnt the planted cues
    ig = table[table["method"] == "ig"]
    assert len(ig) == 4 * len(SEEDS) and all(float(n) >= 0 for n in ig["n_ig_unconverged"])
    assert set(table.loc[table["method"] != "ig", "n_ig_unconverged"]) == {"–"}, "only IG rows can be unconverged"


def test_the_planted_results_the_docs_quote_are_the_pages():
    results = section(ROOT / "docs" / "extensions.md", "## Planted ground truth").split("**Results.**", 1)[1]
    table = markdown_table(PLANTED / "jain-wallace-2019.md", "dataset | model | seed | dev_accuracy")
    mass = table.assign(mass=table["mass_mean"].astype(float)).groupby("method")["mass"]
    quoted = {
        "attention": "0.993 to 1.000",
        "ig": "0.790 to 0.986",
        "gradient": "0.640 to 0.961",
        "loo": "0.593 to 0.794",
    }
    for method, span in quoted.items():
        assert span == f"{mass.min()[method]:.3f} to {mass.max()[method]:.3f}" and span in results, method
    runs = table.groupby(["model", "seed"], sort=False)["method"]  # each model's methods ranked by AUPRC
    assert set(runs.first()) == {"attention"} and set(runs.last()) == {"loo"}, "attention first, leave-one-out last"
    unconverged = table[(table["method"] == "ig") & (table["model"] == VANILLA)]["n_ig_unconverged"]
    assert [int(float(n)) for n in unconverged] == [2, 2, 4] and "2, 2 and 4 of the 1,441" in results
