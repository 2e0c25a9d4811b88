"""MIMIC-III Diabetes and Anemia (Jain & Wallace §4.2; their notebooks `preprocess/MIMIC/*.ipynb`).

Bring-your-own, credentialed files (D-DATA): `NOTEEVENTS.csv` and `DIAGNOSES_ICD.csv` (MIMIC-III v1.4
columns, with header; `.csv.gz` also read), and for Diabetes the CAML top-50 lists
`{train,dev,test}_50_hadm_ids.csv` (one HADM_ID per line).

- Text: notes with CATEGORY "Discharge summary" and an empty ISERROR, concatenated per
  (SUBJECT_ID, HADM_ID): reports first, then addenda, each group by CHARTDATE (as the J&W notebook
  sorts), ROW_ID breaking ties so the order is total. Parts are joined by a blank line.
- Cleaning (J&W `cleaner_mimic`): de-identification spans `[** ... **]` -> `<DE>`; a run of one
  repeated non-alphanumeric character (spaces between allowed) -> that character once.
- ICD-9 codes are dotted as CAML does (after 3 characters, after 4 for E codes); admissions without
  any code are dropped (the notebooks inner-join notes with codes).
- Diabetes: label 1 iff any code starts with 250.00; admissions and splits = the CAML lists.
- Anemia: admissions with exactly one of 285.1 (acute posthemorrhagic, label 1) and 285.2x (chronic
  disease, label 0); stratified test = `test_fraction` (seed `test_seed`), then dev = `dev_fraction`
  of train (seed `split_seed`). J&W use 0.2 / 12939 and 0.15 / 13448; the values come from the config.

Config keys read: Diabetes none; Anemia test_fraction, test_seed, dev_fraction, split_seed.
Documents are in (SUBJECT_ID, HADM_ID) order (the notebooks' groupby order); ids = str(HADM_ID).
"""

from __future__ import annotations

import csv
import gzip
import re
from collections import defaultdict

from attnexp.data.documents import Document, split_off

NOTE_COLUMNS = tuple(
    "ROW_ID SUBJECT_ID HADM_ID CHARTDATE CHARTTIME STORETIME CATEGORY DESCRIPTION CGID ISERROR TEXT".split()
)
DIAGNOSIS_COLUMNS = tuple("ROW_ID SUBJECT_ID HADM_ID SEQ_NUM ICD9_CODE".split())

_DEID = re.compile(r"\[\*\*.*?\*\*\]", re.DOTALL)  # J&W match after collapsing newlines, so across lines too
_REPEATED_PUNCT = re.compile(r"([^A-Za-z0-9\s])(?:\s*\1)+")
# The tokenizer splits "<DE>" into "<", "DE", ">", so the span becomes a plain placeholder word that
# it keeps whole; the placeholder token is mapped back to "<DE>" after tokenising.
_DE_PLACEHOLDER = "xxde"
DE_TOKEN = "<DE>"


def _cfg(cfg: dict, key: str):
    if key not in cfg:
        raise KeyError(f"MIMIC dataset config lacks the key {key!r} (no default: it sets the split)")
    return cfg[key]


def _find(files, name):
    return files.find(name, required=False) or files.find(name + ".gz")


def _open(path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _records(path, columns):
    """Dicts of the CSV's records, checking the header and every record's column count."""
    csv.field_size_limit(2**31 - 1)  # discharge summaries exceed the csv module's 128 kB field limit
    with _open(path) as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or any(c not in header for c in columns):
            raise ValueError(f"{path}: expected a header with the columns {', '.join(columns)}; got {header}")
        for row in reader:
            if len(row) != len(header):
                raise ValueError(
                    f"{path}:{reader.line_num}: expected {len(header)} columns ({', '.join(header)}), got {len(row)}"
                )
            yield dict(zip(header, row))


def _dotted(code: str) -> str:
    """CAML's ICD-9 diagnosis format: a dot after 3 characters, after 4 for E codes."""
    split_at = 4 if code.startswith("E") else 3
    return code[:split_at] + "." + code[split_at:] if len(code) > split_at else code


def _admission_codes(files) -> dict[tuple[int, int], list[str]]:
    codes = defaultdict(list)
    for r in _records(_find(files, "DIAGNOSES_ICD.csv"), DIAGNOSIS_COLUMNS):
        if r["HADM_ID"] and r["ICD9_CODE"]:  # the notebooks drop rows with a missing value
            codes[int(r["SUBJECT_ID"]), int(r["HADM_ID"])].append(_dotted(r["ICD9_CODE"].strip()))
    return codes


def _discharge_texts(files, hadm_ids: set[int]) -> dict[int, str]:
    """HADM_ID -> the admission's concatenated discharge summaries, for the wanted admissions only
    (NOTEEVENTS is ~4 GB; only these texts are kept in memory)."""
    notes = defaultdict(list)
    for r in _records(_find(files, "NOTEEVENTS.csv"), NOTE_COLUMNS):
        if r["CATEGORY"] == "Discharge summary" and not r["ISERROR"] and r["HADM_ID"] and int(r["HADM_ID"]) in hadm_ids:
            order = (r["DESCRIPTION"] != "Report", r["CHARTDATE"], int(r["ROW_ID"]))
            notes[int(r["HADM_ID"])].append((order, r["TEXT"].strip()))
    return {hadm: "\n\n".join(text for _, text in sorted(parts)) for hadm, parts in notes.items()}


def _document(hadm_id: int, text: str, label: int) -> Document:
    text = _DEID.sub(f" {_DE_PLACEHOLDER} ", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    doc = Document.from_text(str(hadm_id), text, label)
    doc.tokens = [DE_TOKEN if t == _DE_PLACEHOLDER else t for t in doc.tokens]
    return doc


def _documents(files, labels: dict[tuple[int, int], int]) -> list[Document]:
    """Documents for the labelled admissions that have a discharge summary, in (SUBJECT_ID, HADM_ID) order."""
    texts = _discharge_texts(files, {hadm for _, hadm in labels})
    return [_document(hadm, texts[hadm], label) for (_, hadm), label in sorted(labels.items()) if hadm in texts]


def _hadm_list(files, split) -> list[int]:
    path = _find(files, f"{split}_50_hadm_ids.csv")
    with _open(path) as f:
        lines = [line.strip() for line in f]
    bad = [(n, line) for n, line in enumerate(lines, 1) if line and not line.isdigit()]
    if bad:
        raise ValueError(f"{path}:{bad[0][0]}: expected one HADM_ID (an integer) per line, got {bad[0][1]!r}")
    return [int(line) for line in lines if line]


def read_diabetes(files, cfg):
    splits = {split: set(_hadm_list(files, split)) for split in ("train", "dev", "test")}
    wanted = set().union(*splits.values())
    if len(wanted) != sum(map(len, splits.values())):
        raise ValueError("the CAML HADM-ID lists overlap: an admission is listed in more than one split")
    labels = {
        key: int(any(code.startswith("250.00") for code in codes))
        for key, codes in _admission_codes(files).items()
        if key[1] in wanted
    }
    docs = _documents(files, labels)
    # The notebook asserts that every listed admission has codes and a discharge summary.
    missing = wanted - {int(d.id) for d in docs}
    if missing:
        examples = sorted(missing)[:5]
        raise ValueError(f"{len(missing)} CAML-listed admissions lack a discharge summary or ICD-9 codes: {examples}")
    return {split: [d for d in docs if int(d.id) in ids] for split, ids in splits.items()}


def read_anemia(files, cfg):
    test_fraction, test_seed = _cfg(cfg, "test_fraction"), _cfg(cfg, "test_seed")
    dev_fraction, dev_seed = _cfg(cfg, "dev_fraction"), _cfg(cfg, "split_seed")
    labels = {}
    for key, codes in _admission_codes(files).items():
        acute = any(code.startswith("285.1") for code in codes)
        chronic = any(code.startswith("285.2") for code in codes)
        if acute != chronic:  # exactly one of the two kinds
            labels[key] = int(acute)
    docs = _documents(files, labels)
    rest, test = split_off(docs, test_fraction, test_seed, stratify=True)
    train, dev = split_off(rest, dev_fraction, dev_seed, stratify=True)
    return {"train": train, "dev": dev, "test": test}
