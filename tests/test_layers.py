"""No module imports from a layer above its own (docs/architecture.md, "Layers"). The layers, lowest
first, are what a module may build on: a foundation knows nothing of the pipeline; the torch-free
records (papers, run plans, claims) know nothing of data or models; data knows nothing of models;
models nothing of training; training and explanations nothing of a paper's experiments; and only the
publishing command reads everything. Imports inside one layer are free (the cycle test guards them).
Imports inside functions count too."""

from __future__ import annotations

import ast
import re

from test_import_graph import SRC, import_graph, module_name

# (layer, what it is, modules: a regular expression over the module name without `attnexp.`);
# a module takes the first layer whose expression matches it in full
LAYERS = (
    (0, "foundations", r"(|io|messages|markdown|metrics|spec|verdicts)"),
    (5, "experiments", r"papers\.[a-z_]+\.[a-z_]+"),  # a paper package's own modules (experiment, tables, plots)
    (
        1,
        "records: torch-free descriptions, plans, claims",
        r"(papers(\.[a-z_]+)?|plan|config|config_reference|job_counts|cost|cost_units|cost_rates|claims|tables|scorecard(\..+)?|explanations)",
    ),
    (2, "data", r"data(\..+)?"),
    (3, "models", r"models(\..+)?"),
    (4, "training, run time, explanations", r"(train(\..+)?|runtime|checkpoints|runs|workflow|explain(\..+)?)"),
    (5, "experiments", r"(experiments|plots)(\..+)?"),
    (6, "publishing", r"publish(\..+)?"),
)
TORCH_FREE = 1  # the layers up to this one import no torch: they run before any job, in every process


def layer(module: str) -> int:
    name = module.removeprefix("attnexp").removeprefix(".")
    for number, _, pattern in LAYERS:
        if re.fullmatch(pattern, name):
            return number
    raise LookupError(
        f"{module}: no layer in tests/test_layers.py LAYERS matches it; place it there and in docs/architecture.md"
    )


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer(target) > layer(module)
    )


def test_every_module_has_a_layer():
    for module in import_graph():
        layer(module)


def test_the_rule_finds_an_upward_import():
    graph = {"attnexp.models.flat": {"attnexp.train"}, "attnexp.train": {"attnexp.models.flat"}}
    assert upward_imports(graph) == ["attnexp.models.flat (layer 3) imports attnexp.train (layer 4)"]
    assert layer("attnexp.papers") == layer("attnexp.papers.jain_wallace") == 1  # a paper's descriptor
    assert layer("attnexp.papers.jain_wallace.tables") == layer("attnexp.experiments.cached") == 5
    assert layer("attnexp.scorecard.rules") == layer("attnexp.scorecard") == 1  # the scorecard package


def test_no_module_imports_from_a_layer_above():
    assert upward_imports(import_graph()) == []


def _loaded_on_import(tree: ast.Module) -> list[str]:
    """The modules a module's body imports when it is imported (not those under `if TYPE_CHECKING:`
    or inside functions, which load only when called)."""
    names, pending = [], list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody + [n for h in node.handlers for n in h.body]
    return names


def test_only_what_loads_on_import_counts():
    code = "import torch\nif TYPE_CHECKING:\n    import numpy\ntry:\n    import captum\nexcept ImportError:\n    pass\ndef f():\n    import pandas\n"
    assert sorted(_loaded_on_import(ast.parse(code))) == ["captum", "torch"]


def test_the_lower_layers_load_no_torch():
    heavy = [
        f"{module_name(path)} imports {name}"
        for path in (SRC / "attnexp").rglob("*.py")
        if layer(module_name(path)) <= TORCH_FREE
        for name in _loaded_on_import(ast.parse(path.read_text(encoding="utf-8")))
        if name.split(".")[0] in ("torch", "captum", "transformers", "matplotlib")
    ]
    assert heavy == []
