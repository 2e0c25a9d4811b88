"""The user documentation stands on its own: every `D-…` decision id the code, config, captions or
docs name has its entry in docs/decisions.md, and every relative link of the README and docs/ points
to a file of the repository (links elsewhere are public URLs)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DECISION = re.compile(r"\bD-[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def tracked(*suffixes: str) -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    return [REPO / n for n in names if n.endswith(suffixes) and (REPO / n).is_file()]


def test_every_decision_id_named_in_the_repository_has_an_entry_in_docs_decisions():
    documented = set(
        re.findall(r"^## (D-[A-Z0-9-]+):", (REPO / "docs" / "decisions.md").read_text(encoding="utf-8"), re.M)
    )
    named: dict[str, str] = {}
    for path in tracked(".py", ".smk", ".yaml", ".md", ".rst", ".csv"):
        if path.name == Path(__file__).name:
            continue
        for match in DECISION.finditer(path.read_text(encoding="utf-8", errors="replace")):
            named.setdefault(match.group(0), str(path.relative_to(REPO)))
    missing = {d: where for d, where in named.items() if d not in documented}
    assert not missing, f"decision ids without an entry in docs/decisions.md (first file naming each): {missing}"


@pytest.mark.parametrize(
    "page", ["README.md", *[str(p.relative_to(REPO)) for p in sorted((REPO / "docs").rglob("*.md"))]]
)
def test_links_of_the_docs_resolve_inside_the_repository_or_are_public_urls(page):
    path = REPO / page
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file = target.split("#", 1)[0]
        if not file:  # an anchor on the same page
            continue
        resolved = (path.parent / file).resolve()
        if not resolved.is_relative_to(REPO) or not resolved.exists():
            broken.append(target)
    assert not broken, f"{page}: links that leave the repository or point nowhere: {broken}"


def test_the_configuration_reference_is_generated_from_the_schema_and_up_to_date():
    from attnexp.config_reference import update_page

    page = REPO / "docs" / "configuration.md"
    assert not update_page(page, check=True), (
        "docs/configuration.md is stale: run python -m attnexp.config_reference docs/configuration.md"
    )
    text = page.read_text(encoding="utf-8")
    assert "| `train.protocols.jain_wallace.epochs` | integer | `8` |" in text
    assert "| `datasets.<name>.select_on` |" in text and "| `embeddings.source` |" in text


def test_the_readmes_measured_cost_is_the_published_provenances():
    """The README's job-hours and wall time of the default config (and getting-started's wall time) are
    those docs/replication's provenance gives (compute and wall time of the published run), rounded: not
    numbers of their own."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    provenance = (REPO / "docs" / "replication" / "README.md").read_text(encoding="utf-8")
    hours, wall = re.search(r"\*\*measured at ([\d.]+) job-hours, (\d+ h \d+ min) on 2 cores\*\*", readme).groups()
    h, m, s = map(int, re.search(r"^\| compute time \| (\d+) h (\d+) min (\d+) s:", provenance, re.M).groups())
    assert hours == f"{h + m / 60 + s / 3600:.1f}"
    assert re.search(r"^\| wall time \| (\d+ h \d+ min) \d+ s:", provenance, re.M)[1] == wall
    started = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert (
        re.search(
            r"the published replication: (?:<!-- jobs: default -->)?\d+(?:<!-- /jobs -->)? jobs,\s+(\d+ h \d+ min) on 2 cores",
            started,
        )[1]
        == wall
    )
