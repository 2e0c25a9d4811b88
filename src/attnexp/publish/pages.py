"""Building the pages in memory (`build`): each page of `PAGES` (`attnexp.publish.page`); the index
with what we found (`attnexp.publish.findings`), the scorecard, the misses and the provenance
(`attnexp.publish.provenance`); the effective config and the claims beside them."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from attnexp.claims import CLAIM_COLUMNS
from attnexp.markdown import to_markdown
from attnexp.publish.comparison import embeddings_comparison, with_comparison
from attnexp.publish.contents import INDEX, PAGES, page_of
from attnexp.publish.findings import what_we_found
from attnexp.publish.page import build_page
from attnexp.publish.provenance import provenance_block, without_local_folders
from attnexp.publish.record import Run
from attnexp.publish.text import counted, misses_table
from attnexp.scorecard import NOT_COMPARED, breakdown, summary


@dataclass
class Built:
    files: dict[str, bytes]  # path relative to OUT -> bytes
    counts: dict[str, tuple[int, int, int]]  # page -> (tables, figures, claims)
    card: pd.DataFrame | None
    notes: list[str]  # the index's note at the top


def _datasets(run: Run) -> list[str]:
    if run.config and isinstance(run.config.get("datasets"), dict):
        return list(run.config["datasets"])
    return []


def _companion(run: Run, comparison: Run, comparison_name: str) -> dict[str, list[str]]:
    """The embeddings comparison with the companion run, as a section of the J&W page (page slug ->
    lines); the run's claim card gets the comparison's causes of embedding misses."""
    lines, _ = embeddings_comparison(run.root, comparison.root)
    extra = {"jain-wallace-2019": lines[:2] + [f"Companion run: `{comparison_name}`.", ""] + lines[2:]}
    if run.card is not None and comparison.card is not None:
        run.card = with_comparison(run.card, comparison.card, comparison_name)
    return extra


def _scorecard_section(run: Run) -> list[str]:
    """The index's scorecard: its summary per paper."""
    card = run.card
    if card is None or not len(card):
        return ["## Scorecard", "", "No claims in this run.", ""]
    table = summary(card).rename(columns={"not_compared": "not compared"})
    table["paper"] = [f"[{p}]({page_of(p)}.md)" for p in table["paper"]]
    return [
        "## Scorecard",
        "",
        f"From `{run.card_source}` of the run; every claim: [scorecard.csv](scorecard.csv) "
        "(the claims with the basis of each tolerance and the cause of each miss) and [claims.csv](claims.csv).",
        "",
        to_markdown(table),
    ]


def _misses_section(run: Run) -> list[str]:
    """Every missed claim (unexplained first) and what was not compared, and why."""
    card = run.card
    if card is None or not len(card):
        return []
    lines = []
    misses = misses_table(
        card, ["paper", "table", "dataset", "model", "quantity", "ours", "published", "cause", "cause_status"]
    )
    if len(misses):
        lines += [
            "## Misses",
            "",
            "Every missed claim with its cause, the unexplained ones first.",
            "",
            to_markdown(misses),
        ]
    detail = breakdown(card)
    detail = detail[detail["outcome"] == NOT_COMPARED]
    if len(detail):
        lines += ["## Not compared", "", *[f"- {r.paper}: {r.rows} × {r.reason}" for r in detail.itertuples()], ""]
    return lines


def build(
    run: Run, name: str, command: str, comparison: Run | None = None, comparison_name: str = "", note: str = ""
) -> Built:
    """Every page in memory. `comparison`: the companion run of the embeddings comparison (its J&W
    models with other vectors), shown on the J&W page and named in the causes of embedding misses.
    `note`: Markdown from whoever ran it, on how the run was made, shown at the top of the index (one
    paragraph per blank-line-separated block)."""
    files: dict[str, bytes] = {}
    extra = _companion(run, comparison, comparison_name) if comparison is not None else {}
    counts: dict[str, tuple[int, int, int]] = {}
    datasets = _datasets(run) or sorted({p.split("/")[1] for p in run.pngs if p.count("/") >= 2})
    incomplete: list[str] = []
    for page in PAGES.values():
        text, page_counts, missing = build_page(page, run, name, files, datasets, extra.get(page.slug, ()))
        files[f"{page.slug}.md"] = text.encode("utf-8")
        counts[f"{page.slug}.md"] = page_counts
        incomplete += missing
    provenance, notes = provenance_block(run, name, command)
    top = []
    if incomplete or run.notes:
        unsure = (
            " (without a run record, outputs this run's config never asked for count as missing too)"
            if run.record is None
            else ""
        )
        top.append(
            f"**Incomplete run.** Missing{unsure}:\n>\n" + "\n".join(f"> - {item}" for item in incomplete + run.notes)
        )
    top += notes + [" ".join(block.split()) for block in re.split(r"\n\s*\n", note) if block.strip()]
    lines = ["# Replication results", ""]
    if top:
        lines += [line for note in top for line in (f"> {note}", ">")][:-1] + [""]
    lines += [
        "Jain & Wallace 2019, Serrano & Smith 2019 and Wiegreffe & Pinter 2019 regenerated from raw public data, and the "
        f"extensions beyond them, from the run in `{name}`. Every table and figure comes from the run's files; nothing is "
        "typed in. A claim is one published number or qualitative statement compared with ours: matched (`match`, `holds`), "
        "missed (`differs`, `does not hold`) with its named cause (a model outside the paper, a data stand-in, embeddings, "
        "checkpoint selection, a protocol deviation, or `unexplained`), or not compared (`not comparable`, `reference only`, "
        "`not public`, `undefined`).",
        "",
    ]
    lines += what_we_found(run.card)
    lines += _scorecard_section(run)
    lines += ["## Pages", ""]
    for page in PAGES.values():
        t, f, c = counts[f"{page.slug}.md"]
        lines.append(
            f"- [{page.title}]({page.slug}.md): {counted(t, 'table')}, {counted(f, 'figure')}, {counted(c, 'claim')}"
        )
    lines += [""] + _misses_section(run) + provenance
    totals = tuple(sum(c[i] for c in counts.values()) for i in range(3))
    lines.append(f"<!-- attnexp.publish: tables={totals[0]} figures={totals[1]} claims={totals[2]} -->")
    files[INDEX] = ("\n".join(lines) + "\n").encode("utf-8")
    counts[INDEX] = totals
    if run.config_text is not None:
        files["config.yaml"] = without_local_folders(run.config_text)
    if run.card is not None:  # every claim beside the pages, as the run's tables hold them
        files["scorecard.csv"] = run.card.to_csv(index=False, lineterminator="\n").encode("utf-8")
        files["claims.csv"] = (
            run.card[[*CLAIM_COLUMNS, "location", "statement"]].to_csv(index=False, lineterminator="\n").encode("utf-8")
        )
    return Built(files, counts, run.card, top)
