"""What we found: one sentence per registered finding of a paper (`Paper.findings`), with the models
where it holds, where it does not and where it is inconclusive, for the index's opening section
(`what_we_found`) and the top of each paper's page (`paper_findings`); `FINDINGS_INTRO` says how a
finding is tested."""

from __future__ import annotations

import pandas as pd

from attnexp.papers import PAPERS
from attnexp.publish.contents import page_of
from attnexp.publish.text import counted, shown_number
from attnexp.scorecard import findings_line, findings_tally

FOUND_SHOWN = 6  # models named per verdict in a finding's sentence; the rest are counted


def _finding_models(part: pd.DataFrame) -> str:
    """ "sst lstm-tanh (0.654 [0.630, 0.671], 3 seeds)" for each row (at most `FOUND_SHOWN`, then how many more)."""
    named = [
        f"{r.dataset} {r.model} ({shown_number(r.ours)}"
        + (f" [{shown_number(r.low)}, {shown_number(r.high)}]" if not pd.isna(r.low) else "")
        + f", {r.seeds} seeds)"
        for r in part.head(FOUND_SHOWN).itertuples()
    ]
    more = len(part) - len(named)
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def paper_findings(card: pd.DataFrame, paper) -> list[str]:
    """One sentence per finding of `paper` (`Paper.findings`) with finding claims in `card`: the
    models where it holds, where it does not (ours: mean ± sd over the seeds), how many were not
    compared and why."""
    found = card[card["seed"].isna() & (card["paper"] == paper.citation)]
    sentences = []
    for f in paper.findings:
        part = found[(found["table"] == f.table) & found["quantity"].str.startswith(f.prefix)]
        if not len(part):
            continue
        held, missed = part[part["verdict"] == "holds"], part[part["verdict"] == "does not hold"]
        open_ = part[part["verdict"] == "inconclusive"]
        rest = part[~part.index.isin(held.index.union(missed.index).union(open_.index))]
        said = []
        if len(held):
            said.append(f"holds on {_finding_models(held)}")
        if len(missed):
            said.append(f"does not hold on {_finding_models(missed)}")
        if len(open_):
            said.append(f"inconclusive on {_finding_models(open_)}")
        if len(rest):
            reasons = sorted({v.split(":", 1)[-1].strip() for v in rest["verdict"]})
            said.append(f"not compared on {counted(len(rest), 'model')} ({'; '.join(reasons)})")
        sensitive = int(part["threshold_sensitive"].fillna(False).astype(bool).sum())
        if sensitive:
            said.append(f"threshold-sensitive on {counted(sensitive, 'model')}")
        sentences.append(f"- {f.statement} — {f.location}: {'; '.join(said)}.")
    return sentences


FINDINGS_INTRO = (
    "Each finding is tested on every seed of the models it concerns, by one rule: its statistic gets a 95 % interval "
    "from a two-stage bootstrap (the seeds, then the test instances within each seed). It **holds** when the whole "
    "interval lies on the finding's side of the threshold, **does not hold** when it lies on the other side, and is "
    "**inconclusive** when the interval straddles the threshold; with fewer than three seeds it is not compared. "
    "Across all findings, Benjamini-Hochberg q-values say which verdicts stand at a 5 % false discovery rate. A "
    "threshold the paper does not state is ours, named, and the verdict is also read at half and double it "
    "(threshold-sensitive when that changes it). A test that cannot fail on a model (permuting near-uniform attention) "
    "and a model that does not learn its task (test performance below 0.8 of the paper's) are not counted. The number "
    "after a model is its statistic, the mean over the seeds, with its interval; the claims below say what is measured "
    "and against which threshold."
)


def what_we_found(card: pd.DataFrame | None) -> list[str]:
    """The index's opening section: per paper, its findings (`paper_findings`), from the finding
    claims alone."""
    lines = ["## What we found", ""]
    if card is None or not len(card):
        return lines + ["No claims in this run.", ""]
    lines += [FINDINGS_INTRO.replace("the claims below say", "each paper's page says"), ""]
    tally = {paper: counts for paper, *counts in findings_tally(card)}
    for paper in PAPERS.values():
        sentences = paper_findings(card, paper) if paper.findings and paper.citation in tally else []
        if sentences:
            lines += [
                f"**[{paper.citation}]({page_of(paper.citation)}.md)**: {findings_line(paper.citation, *tally[paper.citation])}.",
                "",
                *sentences,
                "",
            ]
    return lines
