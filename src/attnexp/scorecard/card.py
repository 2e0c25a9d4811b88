"""The scorecard table (`scorecard`: every claim row with the rules' columns added), its summary per
paper (`summary`) and its misses and non-comparisons by cause (`breakdown`), as CSV and Markdown
(`write_scorecard`, `read_scorecard`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.claims import CLAIM_COLUMNS, EMPTY_WHEN_MISSING, SETTING_COLUMNS, read_claims
from attnexp.markdown import to_markdown
from attnexp.scorecard.rules import (
    INCONCLUSIVE,
    MATCHED,
    MISSED,
    NOT_COMPARED,
    PAPERS,
    PAPERS_SETTING,
    cause,
    incompetent,
    location,
    not_learning,
    outcome,
    paper_setting,
    statement,
    tolerance_basis,
)

SCORECARD_COLUMNS = CLAIM_COLUMNS + ("location", "statement", "tolerance_basis", "cause", "cause_status", "setting")


def scorecard(claims: pd.DataFrame, same_data: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The claims table -> the scorecard (same rows, same order, the columns of `SCORECARD_COLUMNS`
    added). A row on a model that does not learn the task (`incompetent`) becomes `not comparable`."""
    table = claims.reset_index(drop=True).copy()
    failing = incompetent(table)
    why = [not_learning(r, failing) for r in table.to_dict("records")]
    table["verdict"] = [f"not comparable: {w}" if w else v for v, w in zip(table["verdict"], why)]
    rows = table.to_dict("records")
    table["location"] = [location(r) for r in rows]
    table["statement"] = [statement(r) for r in rows]
    table["tolerance_basis"] = [tolerance_basis(r) for r in rows]
    table["cause"] = [cause(r, same_data) for r in rows]
    # a named cause is what the setting makes likely; only a run without it (a companion run) establishes it
    table["cause_status"] = [
        "suspected" if outcome(r["verdict"]) == MISSED and c != "unexplained" else ""
        for r, c in zip(rows, table["cause"])
    ]
    table["setting"] = [paper_setting(r, same_data) for r in rows]
    return table[list(SCORECARD_COLUMNS)]


def _with_outcome(card: pd.DataFrame) -> pd.DataFrame:
    card = card.assign(outcome=card["verdict"].map(outcome), cause=card["cause"].fillna(""))
    # a not-compared row without a cause is grouped by its verdict ("reference only", "not public: …")
    return card.assign(reason=card["cause"].where(card["cause"] != "", card["verdict"]))


def papers_in_order(card: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(card["paper"]))  # in the claims table's order


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """One row per paper: claims, matched, missed (and of those unexplained), inconclusive, not compared."""
    card = _with_outcome(card)
    rows = []
    for paper in papers_in_order(card):
        part = card[card["paper"] == paper]
        counts = part["outcome"].value_counts()
        matched = part[part["outcome"] == MATCHED]
        at_paper = int((matched["setting"] == PAPERS_SETTING).sum()) if "setting" in part else None
        rows.append(
            {
                "paper": paper,
                "role": PAPERS[paper].role if paper in PAPERS else "unregistered",
                "claims": len(part),
                "matched": len(matched),
                "at the paper's setting": at_paper,
                "under a stand-in": None if at_paper is None else len(matched) - at_paper,
                "missed": int(counts.get(MISSED, 0)),
                "unexplained": int(((part["outcome"] == MISSED) & (part["cause"] == "unexplained")).sum()),
                "inconclusive": int(counts.get(INCONCLUSIVE, 0)),
                "not_compared": int(counts.get(NOT_COMPARED, 0)),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "paper",
            "role",
            "claims",
            "matched",
            "at the paper's setting",
            "under a stand-in",
            "missed",
            "unexplained",
            "inconclusive",
            "not_compared",
        ],
    )


def breakdown(card: pd.DataFrame) -> pd.DataFrame:
    """Missed and not-compared rows per paper by cause (not compared without one: by verdict)."""
    card = _with_outcome(card)
    card = card[~card["outcome"].isin([MATCHED, INCONCLUSIVE])]
    order = {paper: i for i, paper in enumerate(papers_in_order(card))}
    counts = card.groupby(["paper", "outcome", "reason"], sort=True).size().rename("rows").reset_index()
    counts = counts.assign(order=counts["paper"].map(order)).sort_values(["order", "outcome", "reason"], kind="stable")
    return counts.drop(columns="order").reset_index(drop=True)


def _number(value):
    return value if isinstance(value, str) else (None if pd.isna(value) else f"{value:.3f}")


def scorecard_markdown(card: pd.DataFrame) -> str:
    """The per-paper summary, the misses by cause, then every row (numbers to 3 decimals)."""
    shown = card.copy()
    for column in ("ours", "sd", "published", "tolerance"):
        shown[column] = shown[column].map(_number)
    return (
        "# Replication scorecard\n\n"
        "Every claim (`results/tables/claims.csv`) with why its tolerance is what it is and, for each miss, a named cause "
        "(`attnexp.scorecard`: model outside the paper, data stand-in, embeddings, checkpoint selection, a `D-…` protocol "
        "deviation of docs/decisions.md, or `unexplained`). Matched: `match`/`holds`; missed: `differs`/`does not hold`; "
        "inconclusive: the 95 % interval straddles the threshold; "
        "not compared: `not comparable`, `reference only`, `not public`, `undefined`.\n\n"
        "## Per paper\n\n"
        + to_markdown(summary(card).rename(columns={"not_compared": "not compared"}))
        + "\n## Misses and claims not compared, by cause\n\n"
        + to_markdown(breakdown(card))
        + "\n## Every claim\n\n"
        + to_markdown(shown)
    )


def read_scorecard(path: str | Path) -> pd.DataFrame:
    text = {
        c: str
        for c in (
            "paper",
            "table",
            "dataset",
            "model",
            "quantity",
            "verdict",
            "source",
            "condition",
            "location",
            "statement",
            "tolerance_basis",
            "cause",
            "cause_status",
            "setting",
        )
        + SETTING_COLUMNS
    }
    table = pd.read_csv(
        path,
        dtype=text | {"seed": "Int64", "seeds": "Int64", "threshold_sensitive": "boolean"},
        keep_default_na=False,
        na_values={c: [""] for c in EMPTY_WHEN_MISSING},
    )
    if tuple(table.columns) != SCORECARD_COLUMNS:
        raise ValueError(f"{path}: expected the scorecard columns {list(SCORECARD_COLUMNS)}, got {list(table.columns)}")
    return table


def write_scorecard(
    claims_path: str | Path,
    out_csv: str | Path,
    out_md: str | Path,
    same_data: frozenset[str] = frozenset(),
    sealed: bool = False,
) -> pd.DataFrame:
    """results/tables/claims.csv -> results/tables/scorecard.{csv,md}; returns the scorecard.
    `sealed`: the claims table is a job's output, verified against its seal (`io.verify_seal`)."""
    card = scorecard(read_claims(claims_path, sealed), same_data)
    io.write_csv(out_csv, card, seal=True)
    io.write_text(out_md, scorecard_markdown(card))
    return card
