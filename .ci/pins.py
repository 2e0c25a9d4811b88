#!/usr/bin/env python3
"""The pins, from one list to every file that installs them.

The one list is three files of exact pins, one `name==version` a line: requirements.txt (what the pipeline
runs with), requirements-pretrained.txt (the optional pretrained encoders) and requirements-dev.txt (the
tests and the checks). From them this script writes

- requirements.lock, requirements-pretrained.lock, requirements-dev.lock: the three lists resolved together
  by pip-compile, every package at one version with the sha256 of each file PyPI has for it, split so that
  each lock holds what its list needs beyond the locks before it (the README installs them with
  `--require-hashes`). torch and what only torch needs stay out: torch is installed first and on its own, as
  the CUDA or the CPU build, whose files (and, for the CUDA build, NVIDIA's libraries) differ;
- envs/attnexp.yaml, the conda env of every rule (`--sdm conda`): torch, then every pin of the first two locks.

    python .ci/pins.py           # resolve again on PyPI and write the locks and the env (needs pip-tools)
    python .ci/pins.py --check   # offline: exit 1 naming each file that disagrees with the one list
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LISTS = ("requirements.txt", "requirements-pretrained.txt", "requirements-dev.txt")
LOCKS = tuple(name.replace(".txt", ".lock") for name in LISTS)
CONDA_ENV = "envs/attnexp.yaml"
INSTALLED_FIRST = "torch"  # its build differs by machine: installed on its own, before the locks
PIP_TOOLS = "7.7.0"  # the pip-compile that resolved the locks
INDEX = "https://pypi.org/simple"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9_,.-]+\])?==(?P<version>[A-Za-z0-9.+!_-]+)$")


def canonical(name: str) -> str:
    """A distribution's name as pip compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    name: str  # as written, extras included (`snakemake[reports]`)
    version: str

    @property
    def key(self) -> str:
        return canonical(self.name.split("[", 1)[0])


@dataclass(frozen=True)
class Locked:
    name: str
    version: str
    hashes: tuple[str, ...]
    via: tuple[str, ...]  # what needs it: packages, or the list (`-r requirements.txt`) that pins it

    @property
    def key(self) -> str:
        return canonical(self.name)


class PinError(ValueError):
    """A list, a lock or the conda env that is not what this script reads or writes; says the file and line."""


def read_list(path: Path) -> list[Pin]:
    pins = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.match(line)
        if not match:
            raise PinError(f"{path.name}:{number}: expected one exact pin `name==version`, got {line!r}")
        pins.append(Pin(line.split("==", 1)[0], match["version"]))
    return pins


def read_lists(root: Path = REPO) -> dict[str, list[Pin]]:
    lists = {name: read_list(root / name) for name in LISTS}
    seen: dict[str, str] = {}
    for name, pins in lists.items():
        for pin in pins:
            if pin.key in seen:
                raise PinError(f"{name}: {pin.name} is pinned already in {seen[pin.key]}; pin it in one list")
            seen[pin.key] = name
    return lists


def lists_digest(lists: dict[str, list[Pin]]) -> str:
    """sha256 of the pins themselves (not their comments): a lock records the lists it was resolved from."""
    text = "".join(f"{name}:{pin.name}=={pin.version}\n" for name, pins in lists.items() for pin in pins)
    return hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------- resolving


def resolve(root: Path = REPO) -> list[Locked]:
    """The three lists resolved together by pip-compile on PyPI alone (the pip settings of the machine it runs on
    ignored), with the hashes of every file of each version."""
    try:
        found = metadata.version("pip-tools")
    except metadata.PackageNotFoundError:
        found = None
    if found != PIP_TOOLS:
        raise SystemExit(
            f"resolving the locks needs pip-tools {PIP_TOOLS} (found {found}): pip install pip-tools=={PIP_TOOLS}"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "resolved.txt"
        command = [sys.executable, "-m", "piptools", "compile", "--quiet", "--generate-hashes", "--allow-unsafe"]
        command += ["--strip-extras", "--no-emit-index-url", "--index-url", INDEX, "--output-file", str(out), *LISTS]
        subprocess.run(command, cwd=root, env=env, check=True)
        return read_compiled(out.read_text(encoding="utf-8"))


def read_compiled(text: str) -> list[Locked]:
    """pip-compile's output: `name==version \\`, its `--hash=sha256:…` lines, then `# via` one or more names."""
    packages: list[Locked] = []
    name = version = None
    hashes: list[str] = []
    via: list[str] = []

    def close():
        if name is not None:
            packages.append(Locked(name, version, tuple(hashes), tuple(via)))

    for raw in text.splitlines():
        line = raw.strip().rstrip("\\").strip()
        if not raw.startswith((" ", "#")) and "==" in line:
            close()
            name, version = line.split("==", 1)
            hashes, via = [], []
        elif line.startswith("--hash="):
            hashes.append(line.removeprefix("--hash="))
        elif line.startswith("# via"):
            via += [v.strip() for v in line.removeprefix("# via").split(",") if v.strip()]
        elif line.startswith("#   ") or (line.startswith("#") and raw.startswith("    #")):
            via.append(line.lstrip("#").strip())
    close()
    return packages


def split_locks(resolved: list[Locked]) -> list[list[Locked]]:
    """One lock per list: what that list and the ones before it need, less what the locks before hold.

    "Needs" follows the dependency edges pip-compile reports (`# via`) from each list's own pins, never
    through torch: what only torch needs comes with torch's own install."""
    by_key = {p.key: p for p in resolved}
    children: dict[str, set[str]] = {}
    for package in resolved:
        for parent in package.via:
            children.setdefault(parent if parent.startswith("-r ") else canonical(parent), set()).add(package.key)
    locks, taken = [], set()
    for upto in range(1, len(LISTS) + 1):
        todo = [key for name in LISTS[:upto] for key in children.get(f"-r {name}", ())]
        reached: set[str] = set()
        while todo:
            key = todo.pop()
            if key in reached or key == INSTALLED_FIRST:
                continue
            reached.add(key)
            todo += children.get(key, ())
        locks.append(sorted((by_key[k] for k in reached - taken), key=lambda p: p.key))
        taken |= reached
    return locks


# ----------------------------------------------------------------------------- writing


LOCK_HEADER = """\
# Generated by `python .ci/pins.py` from {lists}: do not edit.
# {role} Each version with the sha256 of every file PyPI has of it.
# Install after torch (installed first, on its own: it stays out): pip install --require-hashes -r {lock}
# lists: {digest}
"""
LOCK_ROLES = {
    "requirements.lock": "What the pipeline runs with.",
    "requirements-pretrained.lock": "The pretrained encoders, beyond requirements.lock.",
    "requirements-dev.lock": "The tests and the checks, beyond requirements.lock and requirements-pretrained.lock.",
}


def render_lock(index: int, packages: list[Locked], digest: str) -> str:
    lock = LOCKS[index]
    lists = ", ".join(LISTS[: index + 1])
    lines = [LOCK_HEADER.format(lists=lists, role=LOCK_ROLES[lock], lock=lock, digest=digest)]
    for package in packages:
        lines.append(f"{package.name}=={package.version}" + "".join(f" \\\n    --hash={h}" for h in package.hashes))
        lines.append(f"    # via {', '.join(package.via)}")
    return "\n".join(lines) + "\n"


def read_lock(path: Path) -> tuple[str, list[Locked]]:
    """A lock this script wrote: the digest of the lists it came from, and its packages."""
    text = path.read_text(encoding="utf-8")
    digest = re.search(r"^# lists: ([0-9a-f]{64})$", text, re.M)
    if not digest:
        raise PinError(f"{path.name}: no `# lists: <sha256>` line; write it with `python .ci/pins.py`")
    packages = read_compiled(text)
    for package in packages:
        if not package.hashes:
            raise PinError(f"{path.name}: {package.name}=={package.version} has no --hash")
    return digest[1], packages


CONDA_HEADER = """\
# Generated by `python .ci/pins.py` from requirements.txt and requirements-pretrained.txt: do not edit.
# The one software environment of every rule (`--sdm conda`): torch (from PyPI: the CUDA build on Linux
# x86-64), then every version of requirements.lock and requirements-pretrained.lock.
name: attnexp
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - pip
  - pip:
"""


def render_conda_env(lists: dict[str, list[Pin]], locks: list[list[Locked]]) -> str:
    (torch,) = [pin for pin in lists[LISTS[0]] if pin.key == INSTALLED_FIRST]
    pins = [f"{torch.name}=={torch.version}"] + [f"{p.name}=={p.version}" for lock in locks[:2] for p in lock]
    return CONDA_HEADER + "".join(f"      - {pin}\n" for pin in pins)


def write(root: Path = REPO) -> None:
    lists = read_lists(root)
    locks = split_locks(resolve(root))
    digest = lists_digest(lists)
    for index, packages in enumerate(locks):
        (root / LOCKS[index]).write_text(render_lock(index, packages, digest), encoding="utf-8")
    (root / CONDA_ENV).write_text(render_conda_env(lists, locks), encoding="utf-8")
    problems = check(root)
    if problems:
        raise SystemExit("\n".join(problems))


# ----------------------------------------------------------------------------- checking


def check(root: Path = REPO) -> list[str]:
    """What disagrees between the lists, the locks and the conda env, one line each (empty: they agree)."""
    try:
        lists = read_lists(root)
        locks = [read_lock(root / name) for name in LOCKS]
    except (PinError, FileNotFoundError) as error:
        return [str(error)]
    problems = []
    digest = lists_digest(lists)
    stale = [name for name, (recorded, _) in zip(LOCKS, locks) if recorded != digest]
    if stale:
        problems.append(
            f"{', '.join(stale)}: resolved from other lists than {', '.join(LISTS)}: run python .ci/pins.py"
        )
    where: dict[str, tuple[str, Locked]] = {}
    for name, (_, packages) in zip(LOCKS, locks):
        for package in packages:
            if package.key in where:
                problems.append(f"{name}: {package.name} is in {where[package.key][0]} already")
            where[package.key] = (name, package)
    if INSTALLED_FIRST in where:
        problems.append(f"{where[INSTALLED_FIRST][0]}: {INSTALLED_FIRST} is installed first, on its own: not locked")
    for index, (name, pins) in enumerate(lists.items()):
        for pin in pins:
            if pin.key == INSTALLED_FIRST:
                continue
            lock, package = where.get(pin.key, (None, None))
            if package is None or LOCKS.index(lock) > index:
                problems.append(f"{name}: {pin.name}=={pin.version} is in none of {', '.join(LOCKS[: index + 1])}")
            elif package.version != pin.version:
                problems.append(f"{name}: {pin.name}=={pin.version}, but {lock} has {package.version}")
    expected = render_conda_env(lists, [packages for _, packages in locks])
    if (root / CONDA_ENV).read_text(encoding="utf-8") != expected:
        problems.append(f"{CONDA_ENV}: not what the locks give: run python .ci/pins.py")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only check (offline); exit 1 naming what disagrees")
    args = parser.parse_args(argv)
    if not args.check:
        write()
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
