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

The package, lowest first: `rules` (the rules for one row: its outcome, tolerance basis, cause and
setting, and the registries they read), `card` (the scorecard table, its summaries, CSV and Markdown),
`status` (the README's status block), `cli` (`python -m attnexp.scorecard`).
"""

from __future__ import annotations

from attnexp.papers import Protocol
from attnexp.scorecard.card import (
    SCORECARD_COLUMNS,
    breakdown,
    read_scorecard,
    scorecard,
    scorecard_markdown,
    summary,
    write_scorecard,
)
from attnexp.scorecard.cli import main
from attnexp.scorecard.rules import (
    COMPETENCE_FLOOR,
    DEVIATION_KINDS,
    FINDINGS,
    INCONCLUSIVE,
    MATCHED,
    MISSED,
    NOT_COMPARED,
    PAPERS,
    STAND_IN_VECTORS,
    TOLERANCE_BASES,
    cause,
    outcome,
    same_data_stand_ins,
    tolerance_basis,
)
from attnexp.scorecard.status import END, START, findings_line, findings_tally, is_finding, readme_status, update_readme

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
    "COMPETENCE_FLOOR",
    "MATCHED",
    "MISSED",
    "INCONCLUSIVE",
    "NOT_COMPARED",
    "START",
    "END",
    "main",
]
