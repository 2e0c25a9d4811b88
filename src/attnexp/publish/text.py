"""Text: a report caption as Markdown (`caption`), a table page's headings demoted, its empty tables
marked and its long tables folded, numbers, durations and counts in words, and the summary, misses
and uncompared claims of a part of the scorecard."""

from __future__ import annotations

import re

import pandas as pd

from attnexp.markdown import NO_ROWS
from attnexp.publish.record import REPO
from attnexp.scorecard import MISSED, NOT_COMPARED, breakdown, outcome, summary

CAPTIONS = REPO / "report"


def caption(name: str, wildcards: dict | None = None) -> str:
    """A report caption (reStructuredText) as one Markdown paragraph, its `{{ snakemake.wildcards.x }}`
    filled in."""
    path = CAPTIONS / f"{name}.rst"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    text = re.sub(
        r"\{\{\s*snakemake\.wildcards\.(\w+)\s*\}\}", lambda m: str((wildcards or {}).get(m.group(1), m.group(1))), text
    )
    text = re.sub(r"``(.+?)``", r"`\1`", text, flags=re.S)
    text = text.replace("\\|", "|").replace("\\*", "*")
    return " ".join(text.split())


def demoted(markdown: str, levels: int = 2) -> tuple[str, str]:
    """A table page's title and its body with every heading `levels` deeper."""
    lines = markdown.rstrip("\n").split("\n")
    title = ""
    if lines and lines[0].startswith("# "):
        title, lines = lines[0][2:].strip(), lines[1:]
    body = [("#" * levels + line) if re.match(r"#+ ", line) else line for line in lines]
    return title, "\n".join(body).strip("\n")


def empty_tables_marked(text: str) -> str:
    """A table page's body with each table that has no rows (a header alone, as older runs wrote
    them) replaced by `NO_ROWS`."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        end = i
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        out += [NO_ROWS] if end - i <= 2 else lines[i:end]
        i = end
    return "\n".join(out)


def folded(text: str, rows: int = 40) -> str:
    """A table page's body with everything from its first table on folded away (`<details>`) when
    its tables have more than `rows` rows in all."""
    lines = text.split("\n")
    table_lines = [i for i, line in enumerate(lines) if line.startswith("|")]
    tables = sum(1 for i in table_lines if i == 0 or not lines[i - 1].startswith("|"))
    total = len(table_lines) - 2 * tables  # less each table's header and separator
    if total <= rows:
        return text
    start = table_lines[0]
    head = "\n".join(lines[:start]).rstrip("\n")
    return (
        (head + "\n\n" if head else "")
        + f"<details>\n<summary>{total} rows</summary>\n\n"
        + "\n".join(lines[start:]).strip("\n")
        + "\n\n</details>"
    )


def shown_number(value):
    """A number as a table shows it: 3 decimals, a missing one empty, a string as it is."""
    return value if isinstance(value, str) else ("" if pd.isna(value) else f"{value:.3f}")


def duration(seconds: float) -> str:
    """Seconds in words: "1 h 2 min 3 s", "2 min 3 s", "3 s"."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes} min {secs} s" if hours else (f"{minutes} min {secs} s" if minutes else f"{secs} s")


def counted(n: int, noun: str) -> str:
    """ "1 table", "3 tables"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _with_outcome(card: pd.DataFrame) -> pd.DataFrame:
    return card.assign(outcome=card["verdict"].map(outcome), cause=card["cause"].fillna(""))


def misses_table(card: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The missed rows, `unexplained` first (otherwise in the scorecard's order)."""
    missed = _with_outcome(card)
    missed = missed[missed["outcome"] == MISSED]
    missed = missed.assign(_first=(missed["cause"] != "unexplained").astype(int)).sort_values("_first", kind="stable")
    shown = missed[columns].copy()
    for column in ("ours", "published", "tolerance"):
        if column in shown:
            shown[column] = shown[column].map(shown_number)
    return shown


def summary_line(part: pd.DataFrame) -> str:
    s = summary(part).iloc[0]
    return (
        f"**{s.claims} claims**: {s.matched} matched, {s.missed} missed ({s.unexplained} unexplained), "
        f"{s.not_compared} not compared."
    )


def not_compared_lines(card: pd.DataFrame) -> list[str]:
    detail = breakdown(card)
    return [f"- {r.rows} × {r.reason}" for r in detail[detail["outcome"] == NOT_COMPARED].itertuples()]
