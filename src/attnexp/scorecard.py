"""The replication scorecard: every claim row (`attnexp.claims`) with why its tolerance is what it
is and, where ours is not the published result, a named cause; a summary per paper; and the
README's status block, generated from it.

Columns: the claim columns (`CLAIM_COLUMNS`), then `tolerance_basis`, `cause`, `cause_status` and
`setting`. Rows keep the
claims table's order. Each row has one outcome (the summary counts them):

| outcome | verdicts |
|---|---|
| matched | `match`, `holds` |
| missed | `differs`, `does not hold` |
| not compared | `not comparable: <why>`, `reference only`, `not public: <why>`, `not in the paper: <why>`, `undefined` |

`tolerance_basis`, why a tolerance is what it is:
- a row with a tolerance: the first entry of `TOLERANCE_BASES` whose paper (None: any), table and
  quantity prefix fit the row; none fits: "unregistered: …", which asks for an entry in the paper's
  descriptor (`Paper.tolerance_bases`).
- a row without one: `none: reference only` (a published value kept as a sanity target),
  `none: no published value` (`not public`), else `qualitative` (a sign or an ordering of ours).

`cause`, for a missed row every rule that applies, in this order, joined by "; ". The rules read the
row's setting (`attnexp.claims.Setting`: the columns `select_on`, `embeddings`, `stand_ins`,
`stands_for`, `deviations`, which each paper's claims write), never the condition's words:
1. `model outside the paper (<model>)`: the paper's claims were made on other models
   (`PAPERS[paper].models`, e.g. a W&P claim on the Transformer).
2. `data stand-in (<what>)`: `stand_ins` names stand-in files that change the data, or `stands_for`
   names the paper's dataset ours stands for. A stand-in that only repackages the same data
   (`same_data`: config `substitute.splits_affected: []`, `same_data_stand_ins`) is no cause.
3. embeddings: `embeddings` is not what the paper used (`PAPERS[paper]`): `embeddings (D-EMB)` for our
   word2vec instead of the paper's pretrained vectors, `embeddings (<what stands in>, D-EMB)` for
   pretrained vectors that stand in for the paper's (`STAND_IN_VECTORS`), else `embeddings (<ours>;
   the paper: <theirs>)`; never where ours are the paper's own for that dataset
   (`Protocol.own_embeddings`: J&W's bAbI models start from random embeddings).
4. `checkpoint selection (D-SEL)`: a qualitative claim (no tolerance) whose `select_on` is not the
   paper's. A numeric comparison never: its verdict is `not comparable` when the selections differ.
5. each id of `deviations`, by its kind (`DEVIATION_KINDS`; any other id: `protocol deviation (D-…)`).
None applies: `unexplained`. A `not comparable` row's cause is its `deviations`, named the same way
(else the reason its verdict gives); the cause of every other row is empty.

`cause_status`: a named cause of a miss is `suspected` (the setting makes it likely); it is
`established` only by a run that removes it and then matches (`attnexp.publish` with the
embeddings comparison's companion run). `setting`: for every row, `paper's` where our number was
made at the paper's own setting, else the same rules' list of how it differs; the summary counts
matches at the paper's setting apart from matches under a stand-in.

The rules read the row alone (paper, dataset, model, tolerance, verdict, setting) and the registries
below. A paper missing from `PAPERS` gets the setting-based rules only (2 and 5) and the role
"unregistered".
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.claims import CLAIM_COLUMNS, EMPTY_WHEN_MISSING, SETTING_COLUMNS, read_claims
from attnexp.markdown import to_markdown
from attnexp.papers import PRETRAINED_VECTORS, Protocol, RegistryView
from attnexp.papers.descriptor import Finding
from attnexp.verdicts import FDR

__all__ = [
    "SCORECARD_COLUMNS",
    "Protocol",
    "PAPERS",
    "STAND_IN_VECTORS",
    "TOLERANCE_BASES",
    "DEVIATION_KINDS",
    "outcome",
    "tolerance_basis",
    "cause",
    "same_data_stand_ins",
    "scorecard",
    "summary",
    "breakdown",
    "scorecard_markdown",
    "read_scorecard",
    "write_scorecard",
    "readme_status",
    "update_readme",
    "FINDINGS",
    "is_finding",
    "findings_tally",
    "findings_line",
]

SCORECARD_COLUMNS = CLAIM_COLUMNS + ("location", "statement", "tolerance_basis", "cause", "cause_status", "setting")
PAPERS_SETTING = "paper's"  # the `setting` of a row made at the paper's own setting
MATCHED, MISSED, INCONCLUSIVE, NOT_COMPARED = "matched", "missed", "inconclusive", "not compared"
START, END = "<!-- scorecard:start -->", "<!-- scorecard:end -->"


# pretrained vectors that stand in for the papers' files (config `embeddings.source`), in words
STAND_IN_VECTORS = {"glove6b50": "GloVe 6B 50-d for the paper's 300-d pretrained vectors"}
# the claims' `paper` value -> what its numbers were made with (each paper's `anchors`, `attnexp.papers`)
PAPERS: Mapping[str, Protocol] = RegistryView(
    lambda papers: {citation: protocol for paper in papers.values() for citation, protocol in paper.anchors.items()}
)

# (paper or None for any, table, quantity prefix) -> why the tolerance is what it is: each paper's own,
# then those of the tables every paper shares; the first entry that fits a row is its basis
SHARED_TOLERANCE_BASES = {
    (
        None,
        "test performance",
        "",
    ): "claims.performance_tolerance: J&W's own test- and dev-selected BiLSTMs differ by up to 0.026 in a binary-task test metric (their repository, commits 675b0dc and 425a89a)",
}
# (paper, table, quantity prefix) of every registered finding (`Paper.findings`): what tells a finding
# claim from a number pooled over seeds, which has no single seed either
FINDINGS: Mapping[tuple[str, str, str], Finding] = RegistryView(
    lambda papers: {(paper.citation, f.table, f.prefix): f for paper in papers.values() for f in paper.findings}
)
# (paper, claims' table value) -> where in the paper its published numbers are (`Paper.locations`)
LOCATIONS: Mapping[tuple[str, str], str] = RegistryView(
    lambda papers: {
        (paper.citation, table): where for paper in papers.values() for table, where in paper.locations.items()
    }
)
# a model whose test performance is below this share of the paper's does not learn the task: its other
# claims are not comparable (SNLI trained on its dev pairs reaches 0.59 of accuracy where J&W report 0.78)
COMPETENCE_FLOOR = 0.8
PERFORMANCE_TABLE = "test performance"
TOLERANCE_BASES: Mapping[tuple[str | None, str, str], str] = RegistryView(
    lambda papers: (
        {
            (paper.citation, table, prefix): basis
            for paper in papers.values()
            for table, prefix, basis in paper.tolerance_bases
        }
        | SHARED_TOLERANCE_BASES
    )
)

# a D-… id's kind when it names one of the causes above (docs/decisions.md); any other id is a protocol deviation
DEVIATION_KINDS = {
    "D-EMB": "embeddings",
    "D-SEL": "checkpoint selection",
    "D-DATA": "data stand-in",
    "D-IMDB": "data stand-in",
    "D-SS-IMDB": "data stand-in",
    "D-SS-YAHOO": "data stand-in",
    "D-SS-BUDGET": "budget cut",
}


def outcome(verdict: str) -> str:
    if verdict in ("match", "holds"):
        return MATCHED
    if verdict in ("differs", "does not hold"):
        return MISSED
    if verdict == "inconclusive":
        return INCONCLUSIVE
    return NOT_COMPARED


def registered_finding(row) -> Finding | None:
    """The registered finding (`Paper.findings`) a claim row tests, if any."""
    for (paper, table, prefix), found in FINDINGS.items():
        if row["paper"] == paper and row["table"] == table and str(row["quantity"]).startswith(prefix):
            return found
    return None


def location(row) -> str:
    """Where the paper says what the row compares: its finding's location, else its table's
    (`Paper.locations`), else the row's `table` value itself."""
    found = registered_finding(row)
    return found.location if found else LOCATIONS.get((row["paper"], row["table"]), str(row["table"]))


def statement(row) -> str:
    """What the paper says, in our words: the finding's statement, else the published value of the quantity."""
    found = registered_finding(row)
    if found:
        return found.statement + (f" (exceptions the paper names: {found.exceptions})" if found.exceptions else "")
    if _missing(row["published"]):
        return str(row["quantity"])
    return f"{row['quantity']} = {row['published']:g} in the paper"


def incompetent(claims: pd.DataFrame, floor: float = COMPETENCE_FLOOR) -> dict[tuple[str, str], str]:
    """(dataset, model) -> why the model does not learn the task: a test-performance row whose seed
    mean is below `floor` of the paper's value."""
    rows = claims[(claims["table"] == PERFORMANCE_TABLE) & claims["published"].notna() & claims["ours"].notna()]
    failing = {}
    for r in rows.itertuples():
        if float(r.ours) < floor * float(r.published):
            failing.setdefault(
                (r.dataset, r.model),
                f"the model does not learn the task ({r.quantity} {float(r.ours):.3f}, below {floor:g} of the paper's "
                f"{float(r.published):.3f})",
            )
    return failing


def _not_learning(row, failing: dict[tuple[str, str], str]) -> str | None:
    """Why a row's model (each model of a "a vs b" row) does not learn the task; None if it does."""
    if row["table"] == PERFORMANCE_TABLE:
        return None
    for model in str(row["model"]).split(" vs "):
        if (row["dataset"], model) in failing:
            return failing[(row["dataset"], model)]
    return None


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def tolerance_basis(row) -> str:
    if _missing(row["tolerance"]):
        if row["verdict"] == "reference only":
            return "none: reference only"
        if row["verdict"].startswith("not public"):
            return "none: no published value"
        if row["verdict"].startswith("not in the paper"):
            return "none: not in the paper"
        return "qualitative"
    for (paper, table, prefix), basis in TOLERANCE_BASES.items():
        if paper in (None, row["paper"]) and row["table"] == table and str(row["quantity"]).startswith(prefix):
            return basis
    return f"unregistered: no entry for ({row['paper']!r}, {row['table']!r}) in its paper's tolerance_bases (attnexp.papers)"


def _named(deviations: str) -> list[str]:
    """The `deviations` column's D-… ids, each named by its kind."""
    ids = [d.strip() for d in deviations.split(",") if d.strip()]
    return [f"{DEVIATION_KINDS.get(d, 'protocol deviation')} ({d})" for d in dict.fromkeys(ids)]


def _setting(row) -> dict[str, str]:
    return {column: "" if _missing(row.get(column)) else str(row[column]) for column in SETTING_COLUMNS}


def same_data_stand_ins(config: dict) -> frozenset[str]:
    """The stand-in files of `config` that repackage the canonical data without changing a split
    (`substitute.splits_affected: []`, e.g. a deterministic repack of the same archive)."""
    files = set()
    for dataset in (config.get("datasets") or {}).values():
        for source in dataset.get("sources") or []:
            substitute = source.get("substitute") or {}
            if substitute and not substitute.get("splits_affected"):
                files |= {f["file"] for f in substitute.get("files", [])}
    return frozenset(files)


def cause(row, same_data: frozenset[str] = frozenset()) -> str:
    """The named cause of a missed or not-comparable row (module docstring); empty otherwise."""
    verdict, setting = row["verdict"], _setting(row)
    if verdict.startswith("not comparable"):
        return "; ".join(_named(setting["deviations"])) or verdict.split(":", 1)[-1].strip()
    if outcome(verdict) != MISSED:
        return ""
    return "; ".join(setting_differences(row, same_data)) or "unexplained"


def paper_setting(row, same_data: frozenset[str] = frozenset()) -> str:
    """`paper's` where the row's number was made at the paper's own setting, else how it differs
    (the cause rules, read for any row): what a match under a stand-in is a match under."""
    return "; ".join(setting_differences(row, same_data)) or PAPERS_SETTING


def setting_differences(row, same_data: frozenset[str] = frozenset()) -> list[str]:
    """How the row's setting differs from the paper's: rules 1-5 of the module docstring, in order."""
    setting = _setting(row)
    protocol, causes = PAPERS.get(row["paper"]), []
    if (
        protocol
        and protocol.models
        and not all(re.fullmatch(protocol.models, m) for m in str(row["model"]).split(" vs "))
    ):
        causes.append(f"model outside the paper ({row['model']})")
    changing = [f.strip() for f in setting["stand_ins"].split(",") if f.strip() not in ("none", "", *same_data)]
    if changing:
        causes.append(f"data stand-in ({row['dataset']}: {', '.join(changing)})")
    if setting["stands_for"]:
        causes.append(f"data stand-in (our {row['dataset']} for the paper's {setting['stands_for']})")
    ours = setting["embeddings"]
    own = (protocol.own_embeddings or {}).get(row["dataset"]) if protocol else None
    if protocol and protocol.embeddings and ours and ours not in protocol.embeddings and ours != own:
        word2vec_for_pretrained = ours.startswith("word2vec") and protocol.embeddings == PRETRAINED_VECTORS
        if word2vec_for_pretrained:
            causes.append("embeddings (D-EMB)")
        elif ours in STAND_IN_VECTORS and protocol.embeddings == PRETRAINED_VECTORS:
            causes.append(f"embeddings ({STAND_IN_VECTORS[ours]}, D-EMB)")
        else:
            causes.append(f"embeddings ({ours}; the paper: {protocol.embeddings_label})")
    if (
        protocol
        and protocol.select_on
        and _missing(row["tolerance"])
        and (setting["select_on"] or protocol.select_on) != protocol.select_on
    ):
        causes.append("checkpoint selection (D-SEL)")
    causes += _named(setting["deviations"])
    return list(dict.fromkeys(causes))


def scorecard(claims: pd.DataFrame, same_data: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The claims table -> the scorecard (same rows, same order, the columns of `SCORECARD_COLUMNS`
    added). A row on a model that does not learn the task (`incompetent`) becomes `not comparable`."""
    table = claims.reset_index(drop=True).copy()
    failing = incompetent(table)
    why = [_not_learning(r, failing) for r in table.to_dict("records")]
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


def _papers(card: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(card["paper"]))  # in the claims table's order


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """One row per paper: claims, matched, missed (and of those unexplained), inconclusive, not compared."""
    card = _with_outcome(card)
    rows = []
    for paper in _papers(card):
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
    order = {paper: i for i, paper in enumerate(_papers(card))}
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
    for paper in _papers(found):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnexp.scorecard",
        description="Make the scorecard from a claims table (--csv/--md), or rewrite a README's status block from a scorecard (--readme).",
    )
    parser.add_argument(
        "table", help="results/tables/claims.csv (with --csv/--md) or results/tables/scorecard.csv (with --readme)"
    )
    parser.add_argument("--csv", help="write the scorecard CSV here")
    parser.add_argument("--md", help="write the scorecard Markdown here")
    parser.add_argument("--readme", help="rewrite the text between the scorecard markers of this file")
    parser.add_argument(
        "--source", help="how the README names the run the scorecard comes from (Markdown; default: the table's path)"
    )
    args = parser.parse_args(argv)
    try:
        if args.readme:
            changed = update_readme(args.readme, read_scorecard(args.table), args.source or f"`{args.table}`")
            print(f"{args.readme}: {'updated' if changed else 'already up to date'}")
        elif args.csv and args.md:
            card = write_scorecard(args.table, args.csv, args.md)
            print(f"{len(card)} claims -> {args.csv}, {args.md}")
        else:
            parser.error("give --readme README.md, or both --csv and --md")
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
