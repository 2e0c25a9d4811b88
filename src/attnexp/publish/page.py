"""One page of `PAGES` in Markdown (`build_page`): its findings and a key figure first, its claims
(the misses, unexplained first, and what was not compared), its tables, its key figures, every claim,
and notes on what the run misses of it."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from attnexp.markdown import to_markdown
from attnexp.papers import PAPERS
from attnexp.papers.descriptor import Page
from attnexp.publish.contents import INDEX, page_of
from attnexp.publish.figures import figure_groups, figure_name, figure_pattern, small_png
from attnexp.publish.findings import FINDINGS_INTRO, paper_findings
from attnexp.publish.record import Run
from attnexp.publish.text import (
    caption,
    demoted,
    empty_tables_marked,
    folded,
    misses_table,
    not_compared_lines,
    shown_number,
    summary_line,
)


def _expected(run: Run) -> set[str] | None:
    return set(run.record.get("targets", [])) if run.record else None


def _missing(page: Page, run: Run) -> tuple[list[str], list[str], int, int]:
    """(missing tables, tables not in this run's config, missing figures, expected figures)."""
    expected = _expected(run)
    missing, unconfigured = [], []
    for table in page.tables:
        path = f"results/tables/{table.name}.md"
        if table.name in run.tables:
            continue
        (missing if expected is None or path in expected else unconfigured).append(path)
    figures_missing = figures_expected = 0
    if expected is not None:
        patterns = [figure_pattern(f) for figures in page.figures for f in figures.files]
        wanted = [
            t
            for t in expected
            if t.startswith("results/figures/") and any(p.match(t[len("results/figures/") :]) for p in patterns)
        ]
        figures_expected = len(wanted)
        figures_missing = sum(t[len("results/figures/") :] not in run.pngs for t in wanted)
    return missing, unconfigured, figures_missing, figures_expected


def _claims_section(part: pd.DataFrame) -> list[str]:
    lines = ["## Claims", "", summary_line(part), ""]
    misses = misses_table(
        part, ["table", "dataset", "model", "seed", "quantity", "ours", "published", "tolerance", "verdict", "cause"]
    )
    if len(misses):
        lines += ["Misses, unexplained first:", "", to_markdown(misses)]
    not_compared = not_compared_lines(part)
    if not_compared:
        lines += ["Not compared, by cause:", "", *not_compared, ""]
    return lines


def _every_claim(part: pd.DataFrame) -> list[str]:
    shown = part.drop(columns=["paper"]).copy()
    for column in ("ours", "sd", "published", "tolerance"):
        shown[column] = shown[column].map(shown_number)
    return [
        "## Every claim",
        "",
        "<details>",
        f"<summary>{len(shown)} claims: ours beside the published value, the verdict, "
        "the tolerance basis and, for a miss, its cause</summary>",
        "",
        to_markdown(shown),
        "</details>",
        "",
    ]


def _tables_section(page: Page, run: Run) -> tuple[list[str], int]:
    """The page's tables the run has, under `## Tables` (none: no lines), and how many."""
    body: list[str] = []
    n_tables = 0
    for table in page.tables:
        if table.name not in run.tables:
            continue
        title, text = demoted(run.tables[table.name])
        text = empty_tables_marked(text)
        body += [f"### {title or table.name}", ""]
        if caption(table.caption):
            body += [caption(table.caption), ""]
        body += [
            folded(text) if table.fold else text,
            "",
            f"*From `results/tables/{table.name}.md` (and `.csv`) of the run.*",
            "",
        ]
        n_tables += 1
    return (["## Tables", ""] + body if body else body), n_tables


def _figures_section(page: Page, run: Run, files: dict[str, bytes], datasets: list[str]) -> tuple[list[str], int]:
    """The page's key figures under `## Figures` (none: no lines), each PNG added to `files` once,
    and how many are shown."""
    shown_figures: list[str] = []
    more = n_figures = 0
    for figures in page.figures:
        groups, hidden = figure_groups(figures, run.pngs, datasets)
        more += hidden
        for wildcards, pngs in groups:
            heading = figures.heading.format(**wildcards) if wildcards else figures.heading
            shown_figures += [f"### {heading}", "", caption(figures.caption, wildcards), ""]
            for png in pngs:
                target = figure_name(png)
                if target not in files:
                    files[target] = small_png((run.root / "results" / "figures" / png).read_bytes())
                label = Path(png).stem if not re.fullmatch(r"seed\d+", Path(png).stem) else Path(png).parent.parent.name
                words = label.replace("_", " ")
                shown_figures += [
                    f"![{words}: {heading}]({target})",
                    "",
                    f"*{words[:1].upper() + words[1:]}, {heading}* (the run's `results/figures/{png}`)",
                    "",
                ]
                n_figures += 1
    if not shown_figures:
        return [], n_figures
    lines = ["## Figures", ""] + shown_figures
    if more:
        lines += [f"{more} more figure groups of this kind are in the run folder's results/figures/.", ""]
    return lines, n_figures


def _incomplete_notes(page: Page, run: Run) -> tuple[list[str], list[str]]:
    """What the page misses: the notes at its top, and its line for the index's note (if any)."""
    missing, unconfigured, figures_missing, figures_expected = _missing(page, run)
    lines, index_note = [], []
    if missing or figures_missing:
        parts = [", ".join(f"`{m}`" for m in missing)] if missing else []
        if figures_missing:
            parts.append(f"{figures_missing} of the {figures_expected} figures the key figures are chosen from")
        index_note.append(f"[{page.title.split(':')[0]}]({page.slug}.md): {'; '.join(parts)}")
        lines += [f"> **Incomplete run**: missing {'; '.join(parts)}. See [the index]({INDEX}).", ""]
    if unconfigured:
        lines += [f"Tables this run's config does not make: {', '.join(f'`{u}`' for u in unconfigured)}.", ""]
    return lines, index_note


def build_page(
    page: Page, run: Run, name: str, files: dict[str, bytes], datasets: list[str], extra: list[str] = ()
) -> tuple[str, tuple[int, int, int], list[str]]:
    """A page's Markdown, its counts and its lines for the index's note (what is missing); `extra`: a
    section of tables after the run's own (counted as one table)."""
    part = run.card[run.card["paper"].map(page_of) == page.slug] if run.card is not None else None
    body, n_tables = _tables_section(page, run)
    if extra:
        body += list(extra)
        n_tables += 1
    figures, n_figures = _figures_section(page, run, files, datasets)
    body += figures
    notes, index_note = _incomplete_notes(page, run)
    lines = [f"# {page.title}", "", *notes]
    lines += [page.about, "", f"From the run in `{name}` ([provenance]({INDEX}#provenance)).", ""]
    if part is not None and len(part):  # the first screen: the findings, then a key figure
        findings = [
            sentence
            for paper in PAPERS.values()
            if paper.citation in page.papers and paper.findings
            for sentence in paper_findings(part, paper)
        ]
        if findings:
            lines += ["## Findings", "", FINDINGS_INTRO, "", *findings, ""]
            lines += [line for line in figures if line.startswith("![")][:1] + [""]
    n_claims = 0
    if part is not None and len(part):
        lines += _claims_section(part)
        n_claims = len(part)
    elif page.papers:
        lines += ["## Claims", "", "No claims of this page's papers in this run.", ""]
    lines += body
    if not n_tables and not n_figures:
        lines += ["Nothing of this page is in this run.", ""]
    if n_claims:
        lines += _every_claim(part)
    counts = (n_tables, n_figures, n_claims)
    lines.append(f"<!-- attnexp.publish: tables={counts[0]} figures={counts[1]} claims={counts[2]} -->")
    return "\n".join(lines) + "\n", counts, index_note
