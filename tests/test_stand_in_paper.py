"""Adding a paper (docs/architecture.md, "Adding a paper"): a minimal stand-in registered through its
descriptor alone is found by config validation, run selection, the claims and the scorecard, the
debate matrix and the published results, with no other module edited."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnexp import io
from attnexp.claims import Setting, claim, claims_frame
from attnexp.config import ConfigError, load_config, validate_config
from attnexp.experiments.debate_matrix import MEASURES, debate_matrix
from attnexp.papers import PAPERS, Paper, Protocol, register_paper
from attnexp.papers.descriptor import Page, Table
from attnexp.plan import TITLES, experiment_runs, model_spec, selection_problems
from attnexp.scorecard import cause, scorecard, summary, tolerance_basis

ROOT = Path(__file__).resolve().parents[1]
CITATION = "Stand-in et al. 2026"


def _threshold_problems(config: dict) -> list[str]:
    threshold = config["stand_in"]["threshold"]
    return [f"config key 'stand_in.threshold': {threshold} is not below 1"] if threshold >= 1 else []


STAND_IN = Paper(
    "stand_in",
    "Stand-in",
    requirements=(("has_own_attention", "its own trained attention"),),
    tasks=("binary",),
    anchors={CITATION: Protocol("replicated", "test", ("glove6b50",), "GloVe vectors", r"lstm-(tanh|dot)")},
    tolerance_bases=(("Table 1", "", "stand_in.tolerance: the spread of the stand-in's own seeds"),),
    measures={"stand_in_score": ("stand-in score, mean", "higher: attention explains the decision")},
    config_problems=_threshold_problems,
    page=Page(
        "stand-in-2026",
        "Stand-in et al. 2026: a paper for the tests",
        "What it shows.",
        (),
        (Table("stand_in_scores", "stand_in_scores"),),
    ),
)


@pytest.fixture
def quick() -> dict:
    """The quick preset's config, with the paper's block (validated before the paper is registered)."""
    return load_config(ROOT / "presets" / "quick.yaml") | {
        "stand_in": {"datasets": None, "models": None, "threshold": 0.5}
    }


@pytest.fixture
def stand_in():
    register_paper(STAND_IN)
    yield STAND_IN
    del PAPERS[STAND_IN.key]


@pytest.fixture
def schema(tmp_path) -> Path:
    """The project's schema with the paper's config block added, as its checklist asks."""
    document = yaml.safe_load((ROOT / "schemas" / "config.schema.yaml").read_text())
    document["properties"]["stand_in"] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["datasets", "models", "threshold"],
        "properties": {
            "datasets": {"type": ["array", "null"]},
            "models": {"type": ["array", "null"]},
            "threshold": {"type": "number"},
        },
    }
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_registering_twice_is_an_error(stand_in):
    with pytest.raises(ValueError, match="'stand_in' is registered already"):
        register_paper(STAND_IN)


def test_config_validation_runs_the_papers_own_checks(quick, stand_in, schema):
    config = quick
    config["stand_in"]["datasets"] = ["synthetic"]
    assert validate_config(config, schema)["stand_in"]["threshold"] == 0.5
    config["stand_in"]["threshold"] = 2
    with pytest.raises(ConfigError, match=r"config key 'stand_in.threshold': 2 is not below 1"):
        validate_config(config, schema)


def test_run_selection_follows_the_descriptor(quick, stand_in):
    config = quick
    runs = experiment_runs(config, "stand_in")
    tasks = {config["datasets"][r.dataset]["task"] for r in runs}
    assert runs and tasks == {"binary"}  # its tasks: the QA dataset of the preset is left out
    configured = {
        (d, m)
        for d, ds in config["datasets"].items()
        if ds["enabled"] and ds["task"] == "binary"
        for m in ds.get("models", [])
    }
    left_out = configured - {(r.dataset, r.model) for r in runs}
    assert left_out and all(model_spec(config, d, m).has_own_attention is False for d, m in left_out)  # its requirement
    assert TITLES["stand_in"] == "Stand-in"
    config["stand_in"]["datasets"] = ["synthetic_qa"]
    assert selection_problems(config, "stand_in") == [
        "config key 'stand_in.datasets.0': dataset 'synthetic_qa' is a qa task; the Stand-in experiments need binary"
    ]


def test_its_claims_are_scored_with_its_protocol(stand_in):
    rows = [
        claim(
            CITATION,
            "Table 1",
            "sst",
            "lstm-tanh",
            10,
            "score",
            0.5,
            0.4,
            0.05,
            setting=Setting("test", "glove6b50", "none"),
        ),
        claim(
            CITATION,
            "Table 1",
            "sst",
            "lstm-tanh",
            10,
            "score",
            0.5,
            0.4,
            0.05,
            setting=Setting("test", "word2vec_local", "none"),
        ),
        claim(
            CITATION,
            "§4",
            "sst",
            "transformer-cls",
            10,
            "holds",
            0.1,
            verdict="does not hold",
            setting=Setting("dev", "glove6b50", "none"),
        ),
    ]
    card = scorecard(claims_frame(rows))
    assert tolerance_basis(rows[0]) == "stand_in.tolerance: the spread of the stand-in's own seeds"
    assert list(card["cause"]) == [
        "unexplained",
        "embeddings (word2vec_local; the paper: GloVe vectors)",
        "model outside the paper (transformer-cls); checkpoint selection (D-SEL)",
    ]
    assert cause(rows[0]) == "unexplained"
    assert summary(card).iloc[0][["paper", "role", "claims", "missed"]].tolist() == [CITATION, "replicated", 3, 3]


def test_its_measures_are_rows_of_the_debate_matrix(stand_in, tmp_path):
    cells = tmp_path / "stand_in" / "sst" / "lstm-tanh" / "seed10" / "debate_cells.csv"
    cells.parent.mkdir(parents=True)
    pd.DataFrame({"measure": ["stand_in_score"], "value": [0.75]}).to_csv(cells, index=False)
    io.write_seal(cells)
    assert MEASURES["stand_in_score"] == ("Stand-in", "stand-in score, mean", "higher: attention explains the decision")
    matrix = debate_matrix({}, cells=[cells])
    assert matrix[["dataset", "model", "seed", "paper", "measure", "value"]].values.tolist() == [
        ["sst", "lstm-tanh", 10, "Stand-in", "stand_in_score", 0.75]
    ]
    pd.DataFrame({"measure": ["nobodys_score"], "value": [1.0]}).to_csv(cells, index=False)
    io.write_seal(cells)
    with pytest.raises(ValueError, match=r"measures \['nobodys_score'\] are no paper's"):
        debate_matrix({}, cells=[cells])


def test_its_page_is_published(stand_in):
    from attnexp.publish.contents import PAGES, page_of

    assert list(PAGES)[-3:] == ["beyond-the-papers", "stand-in-2026", "data-and-models"]
    assert PAGES["stand-in-2026"].papers == (CITATION,) and PAGES["stand-in-2026"].tables == (
        Table("stand_in_scores", "stand_in_scores"),
    )
    assert page_of(CITATION) == "stand-in-2026"


def test_without_registration_nothing_knows_it():
    from attnexp.publish.contents import PAGES

    assert (
        "stand_in" not in PAPERS
        and "stand_in" not in TITLES
        and "stand_in_score" not in MEASURES
        and "stand-in-2026" not in PAGES
    )
