"""A user's own dataset, read from files named by its config block (`datasets.<name>.files`).

One table per split: CSV, TSV, JSONL or Parquet (the format from the file's suffix unless `format`
names it). `dev` and `test` are optional: a missing one is split off the training table, stratified
by label, with `split_seed` (`test_seed` for the test split when given), `test_fraction` first, then
`dev_fraction`, as the built-in protocols split (`attnexp.data.documents.split_off`).

- Text: the `text` column, tokenised as every dataset (`attnexp.data.tokenize`); `second_text` (an NLI
  hypothesis or a question) becomes the instance's question.
- Labels: any values, compared as strings. Classes are numbered in the order of `labels` when given,
  else in sorted order of the training labels (numbers numerically); for a binary task the second class
  is the positive one. Each record keeps its original value as `label_name`, and stats.json lists the
  class names in index order. Every class must occur in the training split.
- Rationales (`rationale`, optional): per row, the marked words of the text, as `[start, end)` spans
  over its whitespace-separated words (`[[3, 5], [9, 10]]`) or a 0/1 mask with one entry per word
  (`0 0 0 1 1 0` or a JSON list). An empty cell means no rationale for that row. The words are mapped
  onto the row's tokens, so `rationale` in the split files holds token positions, as for the
  generated and planted datasets, and the dataset joins the ground-truth table.
- Ids: the `id` column when given (unique over the dataset), else `<split>-<row number>`.

Every problem is a `FileDatasetError` naming the file, the line (or row) and what was expected, raised
before anything is written.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from attnexp.data.documents import SPLITS, Document, split_off
from attnexp.data.tokenize import tokens_per_word

__all__ = ["FORMATS", "FileDatasetError", "table_format", "read"]

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}


class FileDatasetError(ValueError):
    """A user's dataset file does not hold what its config block says it holds."""


def table_format(path: str | Path, given: str | None = None) -> str:
    """The format of a split table: `given`, else from the file's suffix (`.gz` not supported)."""
    if given:
        return given
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise FileDatasetError(
            f"{path}: cannot tell the table format from the suffix {suffix!r}; expected one of {', '.join(FORMATS)} (or set `format`)"
        )
    return FORMATS[suffix]


def _rows(path: Path, fmt: str, columns: list[str]):
    """(where, row) for every row of a table, `where` naming the file and line (Parquet: row), after
    checking that the table has every column in `columns`."""
    if fmt in ("csv", "tsv"):
        csv.field_size_limit(2**31 - 1)
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.reader(f, delimiter="," if fmt == "csv" else "\t")
            header = next(reader, None)
            if header is None:
                raise FileDatasetError(
                    f"{path}: the file is empty; expected a header line naming the columns {', '.join(columns)}"
                )
            _check_columns(path, header, columns)
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise FileDatasetError(
                        f"{path}:{reader.line_num}: expected {len(header)} fields ({', '.join(header)}), got {len(row)}"
                    )
                yield f"{path}:{reader.line_num}", dict(zip(header, row))
    elif fmt == "jsonl":
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise FileDatasetError(f"{path}:{line_no}: expected one JSON object per line ({err.msg})") from None
                if not isinstance(row, dict):
                    raise FileDatasetError(f"{path}:{line_no}: expected a JSON object, got {type(row).__name__}")
                _check_columns(f"{path}:{line_no}", list(row), columns)
                yield f"{path}:{line_no}", row
    elif fmt == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise FileDatasetError(
                f"{path}: reading Parquet needs pyarrow (pip install -r requirements.txt installs it)"
            ) from None
        try:
            table = pq.read_table(path)
        except Exception as err:  # pyarrow's errors have no common base beyond this
            raise FileDatasetError(f"{path}: not a readable Parquet file ({err})") from None
        _check_columns(path, table.column_names, columns)
        for index, row in enumerate(table.select(columns).to_pylist(), 1):
            yield f"{path} row {index}", row
    else:
        raise FileDatasetError(
            f"{path}: unknown table format {fmt!r}; expected one of {', '.join(sorted(set(FORMATS.values())))}"
        )


def _check_columns(where, have: list[str], columns: list[str]) -> None:
    missing = [c for c in columns if c not in have]
    if missing:
        raise FileDatasetError(
            f"{where}: no column {', '.join(repr(c) for c in missing)}; the file has {', '.join(repr(c) for c in have)}"
        )


def _text(row: dict, column: str, where: str) -> str:
    value = row[column]
    if value is None:
        raise FileDatasetError(f"{where}: the column {column!r} is empty; expected a text")
    if not isinstance(value, str):
        raise FileDatasetError(f"{where}: the column {column!r} holds {value!r}; expected a text")
    return value


def _label(row: dict, column: str, where: str) -> str:
    value = row[column]
    if value is None or value == "" or isinstance(value, (dict, list)):
        raise FileDatasetError(f"{where}: the label column {column!r} holds {value!r}; expected a label value")
    return str(value).lower() if isinstance(value, bool) else str(value)


def _rationale(value, text: str, where: str, column: str) -> list[int] | None:
    """The token positions of the words a row's rationale marks; None for an empty cell."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    per_word = tokens_per_word(text)
    n_words = len(per_word)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = value.split()
            if not all(v in ("0", "1") for v in value):
                raise FileDatasetError(
                    f"{where}: the rationale column {column!r} holds neither JSON spans nor a 0/1 mask"
                ) from None
            value = [int(v) for v in value]
    expected = f"[start, end) spans over its {n_words} words or a 0/1 mask of {n_words} entries"
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):  # spans
        words: set[int] = set()
        for span in value:
            if (
                len(span) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in span)
                or not 0 <= span[0] < span[1] <= n_words
            ):
                raise FileDatasetError(f"{where}: the rationale span {span} does not fit the text; expected {expected}")
            words.update(range(span[0], span[1]))
    elif isinstance(value, list) and all(v in (0, 1) and not isinstance(v, float) for v in value):  # mask
        if len(value) != n_words:
            raise FileDatasetError(f"{where}: the rationale mask has {len(value)} entries; expected {expected}")
        words = {i for i, v in enumerate(value) if v == 1}
    else:
        raise FileDatasetError(f"{where}: the rationale column {column!r} holds {value!r}; expected {expected}")
    starts = [0]
    for n in per_word:
        starts.append(starts[-1] + n)
    return [t for w in sorted(words) for t in range(starts[w], starts[w + 1])]


def _read_table(path: Path, split: str, files: dict) -> list[Document]:
    columns = [
        c
        for c in (files.get("id"), files["text"], files["label"], files.get("second_text"), files.get("rationale"))
        if c
    ]
    docs = []
    for index, (where, row) in enumerate(_rows(path, table_format(path, files.get("format")), columns), 1):
        text = _text(row, files["text"], where)
        question = _text(row, files["second_text"], where) if files.get("second_text") else None
        label = _label(row, files["label"], where)
        doc_id = str(row[files["id"]]) if files.get("id") else f"{split}-{index:06d}"
        doc = Document.from_text(doc_id, text, label, question=question)
        if not doc.tokens:
            raise FileDatasetError(
                f"{where}: the text column {files['text']!r} tokenises to no tokens; every instance needs at least one"
            )
        if question is not None and not doc.question:
            raise FileDatasetError(
                f"{where}: the column {files['second_text']!r} tokenises to no tokens; every instance needs at least one"
            )
        if files.get("rationale"):
            # an empty cell: no rationale for the row (the ground-truth table skips it)
            doc.extra["rationale"] = _rationale(row[files["rationale"]], text, where, files["rationale"]) or []
        doc.extra["where"] = where  # for the checks below; dropped before the splits are returned
        docs.append(doc)
    if not docs:
        raise FileDatasetError(f"{path}: the {split} table has no rows")
    return docs


def _class_order(train: list[Document], given: list | None, task: str, where: str) -> list[str]:
    seen = Counter(d.label for d in train)
    if given is not None:
        names = [str(v).lower() if isinstance(v, bool) else str(v) for v in given]
        unlisted = sorted(set(seen) - set(names))
        if unlisted:
            first = next(d for d in train if d.label in unlisted)
            raise FileDatasetError(
                f"{first.extra['where']}: the label {first.label!r} is not among `labels` ({', '.join(names)})"
            )
        absent = [n for n in names if n not in seen]
        if absent:
            raise FileDatasetError(
                f"{where}: the class {absent[0]!r} of `labels` has no training instance; every class needs some"
            )
    else:
        names = sorted(seen, key=lambda x: (0, int(x), "") if x.lstrip("-").isdigit() else (1, 0, x))
    if task == "binary" and len(names) > 2:  # the rarest label is the likely typo: name its first row
        rarest = min(names, key=lambda name: (seen[name], names.index(name)))
        first = next(d for d in train if d.label == rarest)
        counts = ", ".join(f"{name} {seen[name]}" for name in names)
        raise FileDatasetError(
            f"{first.extra['where']}: the label {rarest!r} makes a class too many: a binary task needs 2, the training split has {len(names)} ({counts} rows)"
        )
    if task == "binary" and len(names) != 2:
        raise FileDatasetError(
            f"{where}: a binary task needs 2 classes, the training split has {len(names)} ({', '.join(names)})"
        )
    if len(names) < 2:
        raise FileDatasetError(
            f"{where}: the training split has one class ({', '.join(names)}); a classifier needs at least 2"
        )
    return names


def read(files_unused, cfg: dict) -> dict[str, list[Document]]:
    """The splits of a dataset whose config has a `files` block (the paths are its job's inputs)."""
    files = cfg["files"]
    tables = {split: _read_table(Path(files[split]), split, files) for split in SPLITS if files.get(split)}
    train = tables["train"]
    if "test" not in tables:
        train, tables["test"] = split_off(train, cfg["test_fraction"], cfg.get("test_seed", cfg["split_seed"]))
    if "dev" not in tables:
        train, tables["dev"] = split_off(train, cfg["dev_fraction"], cfg["split_seed"])
    tables["train"] = train
    for split in SPLITS:
        if not tables[split]:
            raise FileDatasetError(
                f"{files['train']}: the {split} split is empty after splitting it off the training table; give more rows or a larger fraction"
            )
    names = _class_order(train, files.get("labels"), cfg["task"], str(files["train"]))
    index = {name: i for i, name in enumerate(names)}
    ids: dict[str, str] = {}
    for split in SPLITS:
        for doc in tables[split]:
            where = doc.extra.pop("where")
            if doc.label not in index:
                raise FileDatasetError(
                    f"{where}: the label {doc.label!r} does not occur in the training split ({', '.join(names)})"
                )
            if doc.id in ids:
                raise FileDatasetError(
                    f"{where}: the id {doc.id!r} was already used at {ids[doc.id]}; ids must be unique"
                )
            ids[doc.id] = where
            doc.extra["label_name"] = doc.label
            doc.label = index[doc.label]
    return tables
