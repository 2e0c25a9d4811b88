"""The job counts the docs state, written from dry runs rather than typed:

    python -m attnexp.job_counts README.md docs/getting-started.md

rewrites every count marked `<!-- jobs: PRESET -->N<!-- /jobs -->` with the number of jobs that write outputs
in PRESET's plan (`attnexp.cost.planned_jobs`; PRESET is `default` for config.yaml alone, else the name of a
file in presets/), and every `<!-- dry-run total: PRESET -->N<!-- /jobs -->` with the total Snakemake's own
dry run prints, one more: it also lists the rule `all`, which only collects the outputs. `--check` says
whether the pages are up to date (a test runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from functools import cache
from pathlib import Path

from attnexp.cost import REPO, planned_jobs

__all__ = ["MARKED", "count", "update_page", "main"]

MARKED = re.compile(r"<!-- (jobs|dry-run total): ([\w-]+) -->\d*<!-- /jobs -->")


@cache
def _planned(preset: str) -> int:
    if preset == "default":
        return len(planned_jobs())
    path = REPO / "presets" / f"{preset}.yaml"
    if not path.is_file():
        raise ValueError(f"a job count names the preset {preset!r}, but there is no {path.relative_to(REPO)}")
    return len(planned_jobs(path))


def count(kind: str, preset: str) -> int:
    """The number a `kind` marker (`jobs` or `dry-run total`) of `preset` stands for."""
    return _planned(preset) + (kind == "dry-run total")


def update_page(page: Path, check: bool = False) -> bool:
    """Rewrite the marked counts of `page` (unless `check`); whether any differed."""
    text = page.read_text(encoding="utf-8")
    if not MARKED.search(text):
        raise ValueError(f"{page}: no marked job count (<!-- jobs: PRESET -->N<!-- /jobs -->)")
    updated = MARKED.sub(lambda m: f"<!-- {m[1]}: {m[2]} -->{count(m[1], m[2])}<!-- /jobs -->", text)
    if updated != text and not check:
        page.write_text(updated, encoding="utf-8")
    return updated != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnexp.job_counts", description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", type=Path, nargs="+", help="pages with marked job counts, e.g. README.md")
    parser.add_argument(
        "--check", action="store_true", help="only say whether the pages are up to date (exit 1 if not)"
    )
    args = parser.parse_args(argv)
    stale = []
    for page in args.pages:
        try:
            changed = update_page(page, check=args.check)
        except (OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        stale += [page] * changed
        state = ("out of date" if args.check else "updated") if changed else "up to date"
        print(f"{page}: {state}")
    if args.check and stale:
        print(f"run: python -m attnexp.job_counts {' '.join(map(str, stale))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
