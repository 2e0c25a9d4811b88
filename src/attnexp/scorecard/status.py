"""The README's status block (`readme_status`, written between the scorecard markers by
`update_readme`): per paper the findings that hold, do not hold or are inconclusive
(`findings_tally`), the claim counts, and the misses and non-comparisons by cause."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.markdown import to_markdown
from attnexp.scorecard.card import breakdown, papers_in_order, summary
from attnexp.scorecard.rules import FINDINGS, MISSED, NOT_COMPARED
from attnexp.verdicts import FDR

START, END = "<!-- scorecard:start -->", "<!-- scorecard:end -->"


def is_finding(card: pd.DataFrame) -> pd.Series:
    """Which rows are finding claims (`attnexp.claims.finding`): no single seed, and the table and
    quantity of a registered finding (`Paper.findings`), not a number pooled over seeds."""
    findings = list(FINDINGS)

    def registered(row) -> bool:
        return any(
            row["paper"] == paper and row["table"] == table and str(row["quantity"]).startswith(prefix)
            for paper, table, prefix in findings
        )

    return card["seed"].isna() & card.apply(registered, axis=1).astype(bool) if len(card) else card["seed"].isna()


def cannot_fail(card: pd.DataFrame) -> pd.Series:
    """Finding rows whose test cannot fail on their model (not counted)."""
    return card["verdict"].str.startswith("not comparable: the test cannot fail")


def findings_tally(card: pd.DataFrame) -> list[tuple[str, int, int, int, int, int]]:
    """Per paper with finding claims (`is_finding`), in the card's order: (paper, finding–model pairs
    that hold, that do not hold, inconclusive, decided at a 5 % false discovery rate (q-value), not
    compared)."""
    found = card[is_finding(card)]
    tally = []
    for paper in papers_in_order(found):
        part = found[found["paper"] == paper]
        verdicts = part["verdict"]
        decided = verdicts.isin(["holds", "does not hold"]) & (part["q_value"] <= FDR).fillna(False)
        tally.append(
            (
                paper,
                int((verdicts == "holds").sum()),
                int((verdicts == "does not hold").sum()),
                int((verdicts == "inconclusive").sum()),
                int(decided.sum()),
                int((~verdicts.isin(["holds", "does not hold", "inconclusive"])).sum()),
            )
        )
    return tally


def findings_line(paper: str, held: int, failed: int, inconclusive: int, decided: int, not_compared: int) -> str:
    """ "3 hold, 1 does not hold, 2 inconclusive (4 decided at a 5 % false discovery rate; 2 not compared)"."""
    if not held + failed + inconclusive:
        return "no finding compared" + (f" ({not_compared} not compared)" if not_compared else "")
    said = f"{held} finding–model pairs hold, {failed} do not hold, {inconclusive} inconclusive"
    notes = [f"{decided} of the {held + failed} decided at a 5 % false discovery rate"]
    if not_compared:
        notes.append(f"{not_compared} not compared")
    return f"{said} ({'; '.join(notes)})"


def readme_status(
    card: pd.DataFrame, source: str, command: str = "python -m attnexp.scorecard --readme", link: str | None = None
) -> str:
    """The README's status block: per paper the counts, then the misses and non-comparisons by cause;
    with `link`, a line pointing to the published results section (`attnexp.publish`) first."""
    lines = [
        f"Generated from {source} by `{command}`.",
        "",
    ]
    if link:
        lines += [
            f"The published results, with each paper's tables, figures and every claim: [{link.rsplit('/', 1)[0] if '/' in link else link}]({link}).",
            "",
        ]
    tally = findings_tally(card)
    if tally:
        lines += [
            "The papers' findings, each tested on every seed of the models it concerns: holds or does not hold when the "
            "95 % interval over seeds and test instances lies on one side of the threshold, inconclusive when it does not:",
            "",
        ]
        lines += [f"- {paper}: {findings_line(paper, *counts)}" for paper, *counts in tally] + [""]
    lines.append(to_markdown(summary(card).rename(columns={"not_compared": "not compared"})))
    detail = breakdown(card)
    for label, kind in (("Misses by cause", MISSED), ("Not compared, by cause", NOT_COMPARED)):
        part = detail[detail["outcome"] == kind]
        if len(part):
            lines.append(f"{label}:\n")
            lines += [f"- {r.paper}: {r.rows} × {r.reason}" for r in part.itertuples()]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def update_readme(
    readme: str | Path,
    card: pd.DataFrame,
    source: str,
    command: str = "python -m attnexp.scorecard --readme",
    link: str | None = None,
) -> bool:
    """Replace the text between the scorecard markers of `readme` with `readme_status`; True when it changed."""
    readme = Path(readme)
    text = readme.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"{readme}: expected one {START} line followed by one {END} line")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{START}\n{readme_status(card, source, command, link)}{END}{tail}"
    if updated != text:
        io.write_text(readme, updated)
    return updated != text
