"""The Markdown every table is written in (`to_markdown`), and that Markdown rendered as a standalone
HTML page for the report (`markdown_html`). Torch- and pandas-free at import: a report page is rendered
by a job of its own, which pandas' import (~0.5 s) would make several times slower."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["to_markdown", "markdown_html"]


NO_ROWS = "*No rows in this run.*"


def to_markdown(table: pd.DataFrame, drop: tuple[str, ...] = ()) -> str:
    """A GitHub Markdown table (pandas' own needs the optional `tabulate` package); a table without
    rows is the line `NO_ROWS`, as a header alone reads as a broken table."""
    import pandas as pd

    table = table.drop(columns=list(drop))
    if table.empty:
        return NO_ROWS + "\n"

    def cell(value) -> str:
        return "–" if pd.isna(value) else str(value).replace("|", "\\|")

    lines = [
        "| " + " | ".join(str(c).replace("|", "\\|") for c in table.columns) + " |",
        "|" + "---|" * len(table.columns),
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r'<a href="\2">\1</a>'),
]
_STYLE = (
    "body{font-family:system-ui,sans-serif;font-size:14px;margin:1em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em;width:max-content}"
    # A wide table (the scorecard's every claim) scrolls sideways rather than squeezing a column to
    # one character; long prose cells wrap at a readable width.
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;"
    "max-width:30em}"
    "th{background:#f2f2f2;position:sticky;top:0}tr:nth-child(even) td{background:#fafafa}"
    "code{background:#f2f2f2;padding:0 3px}"
)


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row; `\\|` is a literal bar inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


def markdown_html(markdown: str, title: str) -> str:
    """A standalone HTML page of the Markdown the tables are written in (`to_markdown` tables,
    `#` headings, paragraphs, list items, `<details>` blocks, inline code, bold and links), so that
    the report shows a table instead of offering a file to download."""
    out, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header, rows = _cells(line), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append(
                "<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in header) + "</tr></thead><tbody>"
            )
            out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows]
            out.append("</tbody></table>")
            continue
        heading = re.match(r"(#{1,6}) (.*)", line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.strip() in ("<details>", "</details>") or re.fullmatch(r"\s*<summary>.*</summary>\s*", line):
            out.append(line.strip())  # the pages' own collapsible blocks
        elif line.startswith("- "):
            out.append(f"<ul><li>{_inline(line[2:])}</li></ul>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>\n" + "\n".join(out) + "\n</body></html>\n"
    )
