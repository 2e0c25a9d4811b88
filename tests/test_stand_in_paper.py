"""Adding a paper (docs/architecture.md, "Adding a paper"): a minimal stand-in registered through its
descriptor alone is found by config validation, run selection, the claims and the scorecard, the
debate matrix and the published results, with no other module edited; and a toy paper made as the
docs say (its package, its rule file, then three registrations: its `include:`, its config block and
its schema) is planned by the workflow, its claims, debate cells and report table included, while the
workflow refuses to start with its `include:` forgotten or misplaced."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from attnexp.claims import Setting, claim, claims_frame
from attnexp.config import ConfigError, load_config, validate_config
from attnexp.experiments.debate_matrix import debate_matrix, write_debate_cells
from attnexp.papers import DEBATE_MEASURES as MEASURES
from attnexp.papers import PAPERS, Paper, Protocol, discover_papers, register_paper
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
            ours=0.5,
            published=0.4,
            tolerance=0.05,
            setting=Setting("test", "glove6b50", "none"),
        ),
        claim(
            CITATION,
            "Table 1",
            "sst",
            "lstm-tanh",
            10,
            "score",
            ours=0.5,
            published=0.4,
            tolerance=0.05,
            setting=Setting("test", "word2vec_local", "none"),
        ),
        claim(
            CITATION,
            "§4",
            "sst",
            "transformer-cls",
            10,
            "holds",
            ours=0.1,
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
    cells = tmp_path / "debate_cells" / "stand_in.csv"
    cells.parent.mkdir(parents=True)
    write_debate_cells(cells, {("sst", "lstm-tanh", 10): {"stand_in_score": 0.75}})
    assert MEASURES["stand_in_score"] == ("Stand-in", "stand-in score, mean", "higher: attention explains the decision")
    matrix = debate_matrix([cells], MEASURES)
    assert matrix[["dataset", "model", "seed", "paper", "measure", "value"]].values.tolist() == [
        ["sst", "lstm-tanh", 10, "Stand-in", "stand_in_score", 0.75]
    ]
    assert stand_in.debate_cells_file == "results/debate_cells/stand_in.csv"
    assert stand_in.claims_file == "results/claims/stand_in.csv"
    write_debate_cells(cells, {("sst", "lstm-tanh", 10): {"nobodys_score": 1.0}})
    with pytest.raises(ValueError, match=r"measures \['nobodys_score'\] are no paper's"):
        debate_matrix([cells], MEASURES)


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


def test_the_papers_are_found_in_their_packages_in_their_order():
    assert list(PAPERS) == [
        "jain_wallace",
        "serrano_smith",
        "wiegreffe_pinter",
        "faithfulness",
        "attention_attribution",
        "zoo",
    ]
    assert PAPERS["zoo"].citation == "Mohankumar et al. 2020" and not PAPERS["zoo"].selected_in_config


def test_a_paper_package_without_its_descriptor_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "plugins" / "lonely").mkdir(parents=True)
    (tmp_path / "plugins" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "lonely" / "__init__.py").write_text('"""A package that forgot its Paper."""\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"plugins.lonely: a paper's package defines one Paper with key 'lonely'"):
        discover_papers("plugins")


# ----------------------------------------------------------------------------- a toy paper in the workflow

# What docs/architecture.md ("Adding a paper") asks for, for a paper `toy`: its package and rule file
# (its own files), then its registrations, each an edit of a file the project already has
TOY_PACKAGE = """\"\"\"A toy paper for the tests: one score per model.\"\"\"

from attnexp.papers.descriptor import BEYOND_THE_PAPERS, InReport, Page, Paper, Protocol, Table

TOY = Paper(
    "toy",
    "Toy",
    requirements=(("has_own_attention", "its own trained attention"),),
    tasks=("binary",),
    anchors={"Toy et al. 2026": Protocol("beyond the papers")},
    measures={"toy_score": ("toy score", "higher: attention explains the decision")},
    page=Page(BEYOND_THE_PAPERS, "", "", (), (Table("toy_scores", "toy_scores", report=InReport("Beyond - toy", "tables", "toy")),)),
)
"""
TOY_RULES = """\
TOY_RUNS = experiment_runs(config, "toy")


rule toy_tables:
    input:
        [trained(run) for run in TOY_RUNS],
    output:
        csv="results/tables/toy_scores.csv",
        md="results/tables/toy_scores.md",
        claims="results/claims/toy.csv",
    script:
        "../scripts/toy_tables.py"


rule toy_debate_cells:
    input:
        [trained(run) for run in TOY_RUNS],
    output:
        "results/debate_cells/toy.csv",
    script:
        "../scripts/toy_debate_cells.py"


TARGETS["toy"] = ["results/tables/toy_scores.csv", "results/tables/toy_scores.md"] if TOY_RUNS else []


rule toy:
    input:
        TARGETS["toy"],
"""
# one thin script per rule (what they compute does not matter here: the workflow is only planned)
TOY_SCRIPTS = {
    "toy_tables.py": """\"\"\"Rule toy_tables: one score per model, and its claims.\"\"\"

import pandas as pd

from attnexp import io
from attnexp.claims import claim, write_claims
from attnexp.markdown import to_markdown
from attnexp.plan import RunKey

runs = [RunKey.of_file(path) for path in snakemake.input]
table = pd.DataFrame([run._asdict() | {"score": 1.0} for run in runs])
io.write_csv(snakemake.output.csv, table, seal=True)
io.write_text(snakemake.output.md, to_markdown(table))
write_claims(snakemake.output.claims, [claim("Toy et al. 2026", "Table 1", *run, "score", 1.0, 1.0, 0.1) for run in runs])
""",
    "toy_debate_cells.py": """\"\"\"Rule toy_debate_cells: the toy's numbers of the debate matrix.\"\"\"

from attnexp.experiments.debate_matrix import write_debate_cells
from attnexp.plan import RunKey

write_debate_cells(snakemake.output[0], {RunKey.of_file(path): {"toy_score": 1.0} for path in snakemake.input})
""",
}
TOY_INCLUDE = 'include: "rules/toy.smk"\n'


def _with_include(snakefile: str, before: str) -> str:
    """The Snakefile with the toy's `include:` placed before `include: "rules/<before>.smk"`."""
    anchor = f'include: "rules/{before}.smk"\n'
    assert anchor in snakefile
    return snakefile.replace(anchor, TOY_INCLUDE + anchor)


@pytest.fixture(scope="module")
def toy_workflow(tmp_path_factory) -> Path:
    """A copy of the workflow with the toy paper added as the docs say."""
    root = tmp_path_factory.mktemp("toy") / "workflow"
    root.mkdir()
    for name in ("Snakefile", "config.yaml"):
        shutil.copy(ROOT / name, root / name)
    for folder in ("src", "rules", "scripts", "schemas", "presets", "report", "envs", "references"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # its own files: the package with its descriptor, the rule file, its report caption
    (root / "src" / "attnexp" / "papers" / "toy").mkdir()
    (root / "src" / "attnexp" / "papers" / "toy" / "__init__.py").write_text(TOY_PACKAGE)
    (root / "rules" / "toy.smk").write_text(TOY_RULES)
    (root / "report" / "toy_scores.rst").write_text("The toy's scores.\n")
    for name, text in TOY_SCRIPTS.items():
        (root / "scripts" / name).write_text(text)
    # its registrations: the include, the config block, its schema
    snakefile = root / "Snakefile"
    snakefile.write_text(_with_include(snakefile.read_text(), "debate_matrix"))
    with open(root / "config.yaml", "a") as config:
        config.write("\ntoy:\n  datasets: null\n  models: null\n")
    schema = yaml.safe_load((root / "schemas" / "config.schema.yaml").read_text())
    schema["properties"]["toy"] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["datasets", "models"],
        "properties": {"datasets": {"type": ["array", "null"]}, "models": {"type": ["array", "null"]}},
    }
    (root / "schemas" / "config.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
    changed = sorted(str(path) for path, content in before.items() if (root / path).read_bytes() != content)
    assert changed == ["Snakefile", "config.yaml", "schemas/config.schema.yaml"]  # at most 3 registrations
    return root


def _dry_run(workflow: Path, workdir: Path) -> subprocess.CompletedProcess:
    environment = os.environ | {"PYTHONPATH": str(workflow / "src")}
    command = [sys.executable, "-m", "snakemake", "-s", str(workflow / "Snakefile"), "--workflow-profile", "none"]
    command += [
        "--directory",
        str(workdir),
        "--configfile",
        str(workflow / "presets" / "quick.yaml"),
        "-n",
        "--cores",
        "1",
    ]
    return subprocess.run(command, capture_output=True, text=True, env=environment)


def test_a_toy_paper_is_its_package_rule_file_and_three_registrations(toy_workflow, tmp_path):
    result = _dry_run(toy_workflow, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out, re.M))
    assert jobs["toy_tables"] == jobs["toy_debate_cells"] == "1"  # its rules, found from its targets ...
    for path in ("results/claims/toy.csv", "results/debate_cells/toy.csv", "results/report/toy_scores.html"):
        assert path in out, path  # ... and what it makes, read by the claims, the debate matrix and the report


@pytest.mark.parametrize("placed", ["forgotten", "after claims.smk"])
def test_a_toy_paper_without_its_include_before_the_readers_stops_the_workflow(toy_workflow, tmp_path, placed):
    snakefile = toy_workflow / "Snakefile"
    text = snakefile.read_text()
    try:
        without = text.replace(TOY_INCLUDE, "")
        snakefile.write_text(without if placed == "forgotten" else _with_include(without, "publish"))
        result = _dry_run(toy_workflow, tmp_path)
    finally:
        snakefile.write_text(text)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    line = "error: paper toy is registered but rules/toy.smk is not included (in the Snakefile, before rules/debate_matrix.smk)"
    assert line in out.splitlines(), out[-4000:]
    assert not any(line.lstrip().startswith('File "') or "IncludeError in file" in line for line in out.splitlines())
