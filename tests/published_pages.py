"""Reading a published page (`python -m attnexp.publish`) as a reader does: its Markdown tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def markdown_table(page: Path, header_start: str) -> pd.DataFrame:
    """The first Markdown table of `page` whose header starts with `header_start`, as text cells."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header_start} |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return pd.DataFrame(rows[2:], columns=rows[0])
