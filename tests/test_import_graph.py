"""The package's import graph has no cycle: every module can be read knowing only what it imports.
Imports inside functions count too (a deferred import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """attnexp module -> the attnexp modules it imports (`from attnexp.x import y` names `attnexp.x.y`
    where that is a module, else `attnexp.x`)."""
    modules = {module_name(p): p for p in (SRC / "attnexp").rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package `level - 1` folders up
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                    )
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    graph[name] |= {target} if target in modules else ({base} if base in modules else set())
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
    for name in graph:
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    assert "attnexp.data.documents" in graph["attnexp.data.preprocess"]
    assert "attnexp.markdown" in graph["attnexp.claims"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_package():
    assert cycles(import_graph()) == []


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


def test_the_debate_matrix_imports_no_paper():
    """The debate matrix merges the papers' debate cells in their common format: it knows no paper's
    package, not even the registry (its measures are handed to it), directly or through another module."""
    graph = import_graph()
    assert reachable({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == {"a", "b", "c"}
    papers = sorted(m for m in reachable(graph, "attnexp.experiments.debate_matrix") if m.startswith("attnexp.papers"))
    assert papers == []
