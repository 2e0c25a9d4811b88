"""The package's code stays readable in parts: no function over 60 lines, and `fit` takes its job as
one object rather than a long list of parameters."""

import ast
import inspect
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "attnexp"
MAX_LINES = 60
MAX_FIT_PARAMETERS = 6


def long_functions(path: Path) -> list[str]:
    """`file:line name (n lines)` of every function or method in `path` over MAX_LINES lines,
    from its `def` to its last line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(SRC.parent)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]


def test_no_function_is_longer_than_60_lines():
    files = sorted(SRC.rglob("*.py"))
    assert files, f"no Python files under {SRC}"
    too_long = [entry for path in files for entry in long_functions(path)]
    assert not too_long, f"functions over {MAX_LINES} lines:\n" + "\n".join(too_long)


def test_fit_takes_at_most_six_parameters():
    from attnexp.train import fit

    parameters = list(inspect.signature(fit).parameters)
    assert len(parameters) <= MAX_FIT_PARAMETERS, f"attnexp.train.fit takes {len(parameters)} parameters: {parameters}"
