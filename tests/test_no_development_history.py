"""The repository describes what it is, not how it was developed (that is git's history): no issue
numbers, no working sessions, no paths or remarks of the machine it was written on, and no references
to notes a clone cannot resolve. Every tracked text file is searched; a hit is reported as
`file:line: text`."""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(REPO).as_posix()

# name -> what must not appear
PATTERNS = {
    "an issue number": re.compile(r"\bissues?[ #-]*\d+", re.IGNORECASE),
    "an issue reference": re.compile(r"\(issue", re.IGNORECASE),
    "a working session": re.compile(r"\bsessions?\b", re.IGNORECASE),
    "a sitting": re.compile(r"\bsittings?\b", re.IGNORECASE),
    "a path of the development machine": re.compile(r"/work/"),
    "the development machine": re.compile(r"\bdevelopment machine", re.IGNORECASE),
    "a GPU loan": re.compile(r"\bno GPU (was )?lent\b", re.IGNORECASE),
    "a folder outside the checkout": re.compile(r"\.\./shared|\bshared/reference\b"),
    # notes that lived beside the checkout; the repository's own pages (docs/*.md, README.md,
    # benchmarks/*.md) have other names
    "a note outside the repository": re.compile(r"\b(jain_wallace|serrano_smith|wiegreffe_pinter|beyond|speed)\.md\b"),
    # short figure codes of those notes; the text names the figure instead
    "a figure code": re.compile(r"\bF-(τ|tau|box|dJS|ΔJS|enc|mass|perm|adv)\b|\bT-flip\b"),
}

# (file, text) pairs whose hits are not development history: the text is removed from a line of that
# file before the patterns are searched, so anything else on the line still counts.
ALLOWED = [
    # pytest's own vocabulary: a fixture that lives for the whole test run
    (re.compile(r"^tests/.*\.py$"), re.compile(r"""scope=["']session["']""")),
]

# files that must hold such strings: this test
EXCLUDED = {THIS}


def tracked_text_files() -> list[tuple[str, str]]:
    """(path, text) of every tracked file that is text (UTF-8 without NUL bytes)."""
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of tracked files")
    files = []
    for name in listing.decode("utf-8").split("\0"):
        path = REPO / name
        if not name or name in EXCLUDED or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            files.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return files


def hits(name: str, text: str) -> list[str]:
    allowed = [pattern for where, pattern in ALLOWED if where.search(name)]
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        searched = line
        for pattern in allowed:
            searched = pattern.sub("", searched)
        for what, pattern in PATTERNS.items():
            if pattern.search(searched):
                found.append(f"{name}:{number}: {line.strip()}  [{what}]")
    return found


def test_no_development_history_in_tracked_files():
    files = tracked_text_files()
    assert len(files) > 100, "expected the repository's tracked files"
    found = [hit for name, text in files for hit in hits(name, text)]
    assert not found, f"{len(found)} line(s) about how the repository was developed:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        "# Training (issue 3). One protocol per model family",
        "# Issue-12 acceptance run: W&P on SST",
        "Measured 2026-11-24 (third session) on the 2-core development machine",
        "vectors /work/runs/sst14/results/embeddings/sst/vectors.npy",
        "--config mirror=../shared/datasets",
        "J&W's own BiLSTMs differ by up to 0.026 (jain_wallace.md §7.3)",
        "integrated gradients (beyond.md §1)",
        "the numbers behind F-box and F-mass",
        "the encoder comparison (F-enc), the τ histograms (F-τ-hist)",
        "Serrano & Smith §5 (T-flip)",
        "| one GPU | not measured: no GPU was lent to the session that measured this |",
    ],
)
def test_the_patterns_catch_development_history(line):
    assert hits("config.yaml", line)


@pytest.mark.parametrize(
    "name, line",
    [
        ("config.yaml", "# D-EMB (docs/decisions.md): `auto` uses the paper's pretrained vectors"),
        ("config.yaml", "`python benchmarks/jain_wallace_speed.py`, written to benchmarks/jain_wallace_speed.md"),
        (
            "config.yaml",
            "Jain & Wallace 2019 Table 2 [P] = successar/AttentionExplanation@675b0dc graph_outputs/GradientPval",
        ),
        ("tests/conftest.py", '@pytest.fixture(scope="session")'),
        ("tests/test_publish.py", 'assert "### The debate matrix" in (out / "beyond-the-papers.md").read_text()'),
    ],
)
def test_the_patterns_leave_the_repository_alone(name, line):
    assert not hits(name, line)
