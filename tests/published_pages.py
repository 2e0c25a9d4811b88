"""Reading a published page (`python -m attnexp.publish`) as a reader does: its Markdown tables."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from attnexp.claims import CLAIM_COLUMNS


def markdown_table(page: Path | str, header_start: str) -> pd.DataFrame:
    """The first Markdown table of `page` (a file, or Markdown text) whose header starts with
    `header_start`, as text cells."""
    text = page.read_text(encoding="utf-8") if isinstance(page, Path) else page
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header_start} |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return pd.DataFrame(rows[2:], columns=rows[0])


def section(page: Path, heading: str) -> str:
    """The text under `heading` (a whole heading line, e.g. "### Results on SST") up to the next heading of
    the same or a higher level."""
    level = heading.split(" ", 1)[0]
    text = page.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    ends = [i for i in (text.find(f"\n{'#' * n} ") for n in range(1, len(level) + 1)) if i >= 0]
    return text[: min(ends)] if ends else text


def quoted_claims(text: str, claims: pd.DataFrame) -> list[tuple[str, str]]:
    """Every "0.738 ± 0.014" (a claim's mean ± sd over the seeds, 3 decimals) that `text` quotes, each
    asserted to be one of `claims`' rows; returns them."""
    quoted = re.findall(r"([+−-]?\d+\.\d{3}) ± (\d+\.\d{3})", text)
    published = {(f"{r.ours:.3f}", f"{r.sd:.3f}") for r in claims.itertuples() if pd.notna(r.sd)}
    for mean, sd in quoted:
        assert (mean.replace("−", "-").lstrip("+"), sd) in published, (mean, sd)
    return quoted


# the claim columns of pages published before the interval rule (D-VERDICT): the contract's first 19;
# a page published since carries the whole contract, then `location` and `statement`
EARLIER_CLAIM_COLUMNS = CLAIM_COLUMNS[: CLAIM_COLUMNS.index("deviations") + 1]


def published_claim_columns(columns) -> bool:
    """Whether a published claims table has the columns of the contract it was published under."""
    return list(columns) in (list(EARLIER_CLAIM_COLUMNS), [*CLAIM_COLUMNS, "location", "statement"])
