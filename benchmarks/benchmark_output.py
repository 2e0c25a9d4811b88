"""What every benchmark does with its Markdown table: print it, and write it to the file `--out` names
(none: printed only). Imported by the benchmarks, which run with this folder on the import path."""

from __future__ import annotations

from pathlib import Path


def emit(lines: list[str], out: str | Path | None) -> None:
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
