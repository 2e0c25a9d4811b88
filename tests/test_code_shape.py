"""The package's code stays readable in parts: no function over 60 lines, and `fit` takes its job as
one object rather than a long list of parameters. And every rule script reads its inputs inside its
`fail_cleanly` block, where a damaged one is one line naming it rather than a traceback."""

import ast
import inspect
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "attnexp"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# Calls that read a file (its bytes, or JSON, CSV or a checkpoint from them)
READERS = {"open", "load", "loads", "read_bytes", "read_csv", "read_json", "read_jsonl", "read_table", "read_text", "read_vocab"}
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


def _called_name(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(call.func, ast.Attribute) else None


def reads_outside_fail_cleanly(path: Path) -> list[str]:
    """`file:line name()` of every file-reading call (READERS) in a rule script's top-level
    statements other than its `with fail_cleanly(...)` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    outside = [
        node
        for node in tree.body
        if not (isinstance(node, ast.With) and any(isinstance(item.context_expr, ast.Call) and _called_name(item.context_expr) == "fail_cleanly" for item in node.items))
    ]
    return [
        f"{path.name}:{call.lineno} {_called_name(call)}()"
        for node in outside
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and _called_name(call) in READERS
    ]


def test_rule_scripts_read_their_inputs_inside_fail_cleanly():
    scripts = [path for path in sorted(SCRIPTS.glob("*.py")) if "log_to(" in path.read_text(encoding="utf-8")]
    assert scripts, f"no rule scripts under {SCRIPTS}"
    unguarded = [entry for path in scripts for entry in reads_outside_fail_cleanly(path)]
    assert not unguarded, "files read outside the fail_cleanly block (a damaged one would be a traceback):\n" + "\n".join(unguarded)
