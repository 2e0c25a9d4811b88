"""What a model-running job depends on is declared once (`attnexp.papers.JobSettings`: beside each
paper's descriptor, and `attnexp.plan.EXPLAIN_SETTINGS` per explanation method). Its rule passes
`of(config)` as the job's `settings` param, so the job re-runs exactly when one of those keys changes;
the code the job runs reads those keys and no others."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
import yaml

from attnexp.config import load_config
from attnexp.papers import PAPERS, JobSettings
from attnexp.papers.faithfulness import ERASER_SETTINGS, eraser_settings
from attnexp.plan import EXPLAIN_SETTINGS, EXPLANATION_METHODS, model_spec

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "attnexp"


def _declared(key: str) -> list[JobSettings]:
    """The JobSettings a registered paper's package declares (beside its descriptor)."""
    package = importlib.import_module(f"attnexp.papers.{key}")
    return [value for value in vars(package).values() if isinstance(value, JobSettings)]


# the declarations -> the module whose code reads the settings dict they make: every registered
# paper's experiment module (a paper added to the registry is checked without editing this test), and
# the explanation methods'
READERS = {
    **{
        f"papers/{key}/experiment.py": _declared(key)
        for key in PAPERS
        if (SRC / "papers" / key / "experiment.py").exists()
    },
    "explain/__init__.py": list(EXPLAIN_SETTINGS.values()),
}


def test_the_readers_come_from_the_registry():
    assert {
        "papers/jain_wallace/experiment.py",
        "papers/serrano_smith/experiment.py",
        "papers/faithfulness/experiment.py",
    } <= set(READERS)
    assert len(READERS["papers/jain_wallace/experiment.py"]) == 2  # permutation and adversary


def settings_read(path: Path) -> set[str]:
    """The keys a module reads from a variable named `settings`: `settings["key"]`, `settings.get("key")`."""
    keys = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "settings":
            if isinstance(node.slice, ast.Constant):
                keys.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
            if (
                isinstance(target, ast.Name)
                and target.id == "settings"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                keys.add(node.args[0].value)
    return keys


@pytest.mark.parametrize("module", sorted(READERS))
def test_the_code_reads_exactly_the_declared_settings(module):
    declared = {name for declaration in READERS[module] for name in declaration.names()}
    assert settings_read(SRC / module) == declared


def test_of_takes_the_keys_in_order_then_the_borrowed_ones():
    config = {"a": {"x": 1, "y": [2], "unused": 0}, "b": {"z": "three"}}
    declaration = JobSettings("a", ("y", "x"), borrowed=(("zed", "b.z"),))
    assert list(declaration.of(config).items()) == [("y", [2]), ("x", 1), ("zed", "three")]
    assert declaration.names() == ("y", "x", "zed")


def test_every_declared_key_is_in_the_config_and_its_schema():
    config = load_config()
    schema = yaml.safe_load((ROOT / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))["properties"]
    for declaration in [d for ds in READERS.values() for d in ds]:
        assert set(declaration.of(config)) == set(declaration.names())
        sources = [(declaration.section, key) for key in declaration.keys]
        sources += [tuple(source.split(".")) for _, source in declaration.borrowed]
        for section, key in sources:
            assert key in schema[section]["properties"], f"{section}.{key}"


def test_an_explain_job_per_method_depends_on_the_batch_size_and_its_own_settings():
    assert tuple(EXPLAIN_SETTINGS) == EXPLANATION_METHODS
    config = load_config()
    assert EXPLAIN_SETTINGS["attention"].of(config) == {"batch_size": config["explain"]["batch_size"]}
    assert list(EXPLAIN_SETTINGS["loo"].of(config)) == ["batch_size", "loo_op"]


def test_the_battery_depends_on_han_units_only_for_a_model_attending_over_sentences():
    config = load_config()
    han, flat = (model_spec(config, "synthetic", model) for model in ("han-rnn", "lstm-tanh"))
    assert list(eraser_settings(config, han)) == list(ERASER_SETTINGS.keys)
    assert list(eraser_settings(config, flat)) == [key for key in ERASER_SETTINGS.keys if key != "han_units"]
