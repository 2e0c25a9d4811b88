"""Writing: `publish` reads the run, refuses one whose jobs ran under several commits and a page (or
the README's status block) emptier than the one it would replace, writes the pages byte-stable and
removes stale figures; `main` is `python -m attnexp.publish`, its refusals one line on stderr."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from attnexp import io
from attnexp.publish.comparison import grouped_comparisons
from attnexp.publish.contents import INDEX, PAGES
from attnexp.publish.pages import Built, build
from attnexp.publish.record import PublishError, read_run
from attnexp.publish.text import counted
from attnexp.scorecard import END, START, update_readme

COUNTS = re.compile(r"<!-- attnexp\.publish: tables=(\d+) figures=(\d+) claims=(\d+) -->")


def _existing_counts(path: Path) -> tuple[int, int, int] | None:
    match = COUNTS.search(path.read_text(encoding="utf-8", errors="replace"))
    return tuple(int(g) for g in match.groups()) if match else None


def _readme_claims(text: str) -> int | None:
    """The claims counted in a README's status block (the `claims` column of its table), if any."""
    if START not in text or END not in text:
        return None
    block = text.split(START, 1)[1].split(END, 1)[0]
    rows = [line.strip().strip("|").split("|") for line in block.splitlines() if line.strip().startswith("|")]
    if not rows:
        return None
    header = [c.strip() for c in rows[0]]
    if "claims" not in header:
        return None
    i = header.index("claims")
    return sum(int(r[i]) for r in rows[2:] if len(r) > i and r[i].strip().isdigit())


def _refusals(out: Path, built: Built, readme: Path | None) -> list[str]:
    refusals = []
    for page, new in built.counts.items():
        path = out / page
        if not path.is_file():
            continue
        old = _existing_counts(path)
        if old is None:
            refusals.append(f"{path} was not written by attnexp.publish")
            continue
        fewer = [f"{kind} {o} -> {n}" for kind, o, n in zip(("tables", "figures", "claims"), old, new) if n < o]
        if fewer:
            refusals.append(f"{path} would get fewer {', '.join(fewer)}")
    if readme is not None and readme.is_file() and built.card is not None:
        old = _readme_claims(readme.read_text(encoding="utf-8"))
        if old is not None and len(built.card) < old:
            refusals.append(f"{readme}'s status block would get fewer claims {old} -> {len(built.card)}")
    return refusals


def _relative(path: str | Path) -> str:
    """A path as the user gave it; an absolute one relative to the working folder when that is short."""
    text = str(path)
    if not os.path.isabs(text):
        return Path(text).as_posix()
    relative = os.path.relpath(text)
    return Path(relative).as_posix() if relative.count("..") <= 2 else Path(text).as_posix()


def publish(
    run_dir: str | Path,
    out: str | Path,
    *,
    readme: str | Path | None = None,
    force: bool = False,
    name: str | None = None,
    embeddings_comparison: str | Path | None = None,
    comparison_name: str | None = None,
    note: str | Path | None = None,
    allow_mixed_commits: bool = False,
) -> Built:
    """Read the run, refuse one whose jobs ran under several commits (unless `allow_mixed_commits`),
    build every page in memory, refuse an emptier page (unless `force`), write. `note`: a Markdown
    file on how the run was made, shown at the top of the index."""
    out = Path(out)
    name = name or _relative(run_dir)
    command = f"python -m attnexp.publish {name} --out {_relative(out)}"
    comparison = None
    if embeddings_comparison is not None:
        comparison_name = comparison_name or _relative(embeddings_comparison)
        command += f" --embeddings-comparison {comparison_name}"
        comparison = read_run(embeddings_comparison)
    note_text = ""
    if note is not None:
        command += f" --note {_relative(note)}"
        try:
            note_text = Path(note).read_text(encoding="utf-8")
        except OSError as err:
            raise PublishError(f"{note}: cannot read the note ({err.strerror})") from err
    run = read_run(run_dir)
    if len(run.job_commits) > 1:
        if not allow_mixed_commits:
            counts = ", ".join(f"{commit} ({len(logs)})" for commit, logs in sorted(run.job_commits.items()))
            raise PublishError(
                f"{run_dir}: its jobs ran under {len(run.job_commits)} commits (jobs: {counts}); a published run is made by one "
                "commit: rerun it from one commit in a fresh folder, or pass --allow-mixed-commits to publish it with a table "
                "of which jobs ran under which",
                code=1,
            )
        command += " --allow-mixed-commits"
    built = build(run, name, command, comparison, comparison_name or "", note_text)
    readme = Path(readme) if readme else None
    if not force:
        refusals = _refusals(out, built, readme)
        if refusals:
            more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
            raise PublishError(f"refusing to overwrite: {refusals[0]}{more}; rerun with --force to replace", code=1)
    for relative, data in sorted(built.files.items()):
        path = out / relative
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with io.atomic_path(path) as tmp:
            tmp.write_bytes(data)
            tmp.chmod(0o644)
    figures = out / "figures"
    if figures.is_dir():
        for stale in sorted(figures.glob("*.png")):
            if f"figures/{stale.name}" not in built.files:
                stale.unlink()
    if readme is not None:
        if built.card is None:
            raise PublishError(f"{readme}: no claims in the run to write its status block from")
        link = Path(os.path.relpath(out / INDEX, readme.parent)).as_posix()
        update_readme(
            readme,
            grouped_comparisons(built.card),
            f"the run in `{name}`",
            command=f"{command} --readme {_relative(readme)}",
            link=link,
        )
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnexp.publish",
        description="Turn a run folder into the published results section: an index page with the scorecard and the "
        "provenance, one page per paper with its tables and figures.",
    )
    parser.add_argument("run", help="the run folder (the --directory of the Snakemake run)")
    parser.add_argument("--out", required=True, help="the folder of the pages, e.g. docs/replication")
    parser.add_argument(
        "--readme",
        help="also regenerate the status block of this README (between the scorecard markers), linking the pages",
    )
    parser.add_argument(
        "--name",
        help="the run folder as the pages and their regenerating command name it, e.g. ../replication when it was "
        "given by an absolute path (default: the run folder as given)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace pages even with ones that have fewer tables, figures or claims"
    )
    parser.add_argument(
        "--embeddings-comparison",
        metavar="RUN2",
        help="a companion run of the same J&W models with other vectors "
        "(presets/replication_word2vec.yaml): both side by side on the J&W page, and its numbers in the causes of embedding misses",
    )
    parser.add_argument(
        "--comparison-name", help="the companion run folder as the pages name it (default: its folder as given)"
    )
    parser.add_argument(
        "--allow-mixed-commits",
        action="store_true",
        help="publish a run whose jobs ran under several commits "
        "(their first log lines differ), with a table of which jobs ran under which",
    )
    parser.add_argument(
        "--note",
        metavar="FILE",
        help="a Markdown file on how the run was made (e.g. what was rerun with which commit), shown at the top of the index",
    )
    args = parser.parse_args(argv)
    try:
        built = publish(
            args.run,
            args.out,
            readme=args.readme,
            force=args.force,
            name=args.name,
            embeddings_comparison=args.embeddings_comparison,
            comparison_name=args.comparison_name,
            note=args.note,
            allow_mixed_commits=args.allow_mixed_commits,
        )
    except PublishError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.code
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    t, f, c = built.counts[INDEX]
    print(
        f"{args.out}: {len(PAGES) + 1} pages, {counted(t, 'table')}, {counted(f, 'figure')}, {counted(c, 'claim')}"
        + (
            f"; read the note{'s' if len(built.notes) > 1 else ''} at the top of {Path(args.out) / INDEX}"
            if built.notes
            else ""
        )
    )
    return 0
