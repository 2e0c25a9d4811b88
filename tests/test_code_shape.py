"""The package's code stays readable in parts: no module over 500 lines, no function over 60 lines of statements (a
call the formatter wraps over several lines counts once), no function takes more than six parameters positionally
(the rest are keyword-only), and `fit` takes its job as one object rather than a long list of parameters. And every
rule script reads its inputs inside its
`fail_cleanly` block, where a damaged one is one line naming it rather than a traceback."""

import ast
import inspect
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "attnexp"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# Calls that read a file (its bytes, or JSON, CSV or a checkpoint from them)
READERS = {
    "open",
    "load",
    "loads",
    "read_bytes",
    "read_csv",
    "read_json",
    "read_jsonl",
    "read_table",
    "read_text",
    "read_vocab",
}
MAX_LINES = 60
MAX_MODULE_LINES = 500
MAX_FIT_PARAMETERS = 6
MAX_POSITIONAL = 6


def statement_lines(node: ast.AST) -> int:
    """How many lines of `node` begin a statement: its length with the formatter's wrapped arguments,
    collections and conditions counted once, as they were written before wrapping."""
    return len({child.lineno for child in ast.walk(node) if isinstance(child, ast.stmt)})


def long_functions(path: Path, root: Path = SRC.parent) -> list[str]:
    """`file:line name (n statement lines)` of every function or method in `path` whose statements
    begin on more than MAX_LINES lines, its `def` included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({statement_lines(node)} statement lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement_lines(node) > MAX_LINES
    ]


def test_no_function_is_longer_than_60_lines():
    files = sorted(SRC.rglob("*.py"))
    assert files, f"no Python files under {SRC}"
    too_long = [entry for path in files for entry in long_functions(path)]
    assert not too_long, f"functions over {MAX_LINES} statement lines:\n" + "\n".join(too_long)


def test_a_function_of_many_statements_is_found(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    (tmp_path / "long.py").write_text(
        f"def long():\n{body}\n\ndef short():\n    return f(\n{'        1,' * 3}\n    )\n"
    )
    assert long_functions(tmp_path / "long.py", tmp_path) == ["long.py:1 long (61 statement lines)"]


def long_modules(root: Path = SRC) -> list[str]:
    """`path (n lines)` of every module under `root` longer than MAX_MODULE_LINES lines."""
    lengths = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in sorted(root.rglob("*.py"))}
    return [f"{path.relative_to(root)} ({n} lines)" for path, n in lengths.items() if n > MAX_MODULE_LINES]


def test_no_module_is_longer_than_500_lines():
    too_long = long_modules()
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split them by concern):\n" + "\n".join(too_long)


def test_a_long_module_is_found(tmp_path):
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert long_modules(tmp_path) == [f"package/long.py ({MAX_MODULE_LINES + 1} lines)"]


def positional_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """The parameters a call may pass positionally, a method's `self` or `cls` not counted."""
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def many_positional(path: Path, root: Path = SRC.parent) -> dict[str, str]:
    """`file name` -> `file:line name (n positional parameters)` of every function, method or lambda in
    `path` that accepts more than MAX_POSITIONAL parameters positionally."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            n = len(positional_parameters(node))
            if n > MAX_POSITIONAL:
                name = getattr(node, "name", "<lambda>")
                found[f"{path.relative_to(root)} {name}"] = (
                    f"{path.relative_to(root)}:{node.lineno} {name} ({n} positional parameters)"
                )
    return found


def test_no_function_takes_more_than_six_positional_parameters():
    files = sorted(SRC.rglob("*.py"))
    assert files, f"no Python files under {SRC}"
    found = {key: entry for path in files for key, entry in many_positional(path).items()}
    too_many = list(found.values())
    assert not too_many, (
        f"functions taking more than {MAX_POSITIONAL} parameters positionally (make the ones after the "
        "leading subject parameters keyword-only, after `*`):\n" + "\n".join(too_many)
    )


def test_a_function_of_many_positional_parameters_is_found(tmp_path):
    (tmp_path / "wide.py").write_text(
        "def wide(a, b, c, d, e, f, g):\n    pass\n\n\n"
        "def cut(a, b, c, d, e, f, *, g, h):\n    pass\n\n\n"
        "def only(a, b, c, d, /, e, f, g):\n    pass\n\n\n"
        "class C:\n    def method(self, a, b, c, d, e, f):\n        pass\n\n"
        "    def over(self, a, b, c, d, e, f, g):\n        pass\n\n\n"
        "spread = lambda a, b, c, d, e, f, g: a\n"
    )
    assert sorted(many_positional(tmp_path / "wide.py", tmp_path).values()) == [
        "wide.py:1 wide (7 positional parameters)",
        "wide.py:17 over (7 positional parameters)",
        "wide.py:21 <lambda> (7 positional parameters)",
        "wide.py:9 only (7 positional parameters)",
    ]


def test_fit_takes_at_most_six_parameters():
    from attnexp.train import fit

    parameters = list(inspect.signature(fit).parameters)
    assert len(parameters) <= MAX_FIT_PARAMETERS, f"attnexp.train.fit takes {len(parameters)} parameters: {parameters}"


def _called_name(call: ast.Call) -> str | None:
    return (
        call.func.id
        if isinstance(call.func, ast.Name)
        else call.func.attr
        if isinstance(call.func, ast.Attribute)
        else None
    )


def reads_outside_fail_cleanly(path: Path) -> list[str]:
    """`file:line name()` of every file-reading call (READERS) in a rule script's top-level
    statements other than its `with fail_cleanly(...)` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    outside = [
        node
        for node in tree.body
        if not (
            isinstance(node, ast.With)
            and any(
                isinstance(item.context_expr, ast.Call) and _called_name(item.context_expr) == "fail_cleanly"
                for item in node.items
            )
        )
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
    assert not unguarded, (
        "files read outside the fail_cleanly block (a damaged one would be a traceback):\n" + "\n".join(unguarded)
    )
