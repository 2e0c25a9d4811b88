"""A dataset from the user's own files (`datasets.<name>.files`, attnexp.data.readers.files): every
table format, label mapping, split-off, rationales, and each bad input as one named error that
writes nothing; the config checks that run before any job."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
import yaml

from attnexp.config import ConfigError, validate_config
from attnexp.data.documents import read_records
from attnexp.data.example_reviews import write_example
from attnexp.data.preprocess import build_dataset
from attnexp.data.readers import SourceFiles
from attnexp.data.readers.files import FileDatasetError, read

ROOT = Path(__file__).resolve().parents[2]

ROWS = [  # (text, label, rationale over whitespace words)
    ("A great film, truly.", "good", "[[1, 2]]"),
    ("Dull and slow.", "bad", "[[0, 1]]"),
    ("I loved it!", "good", "0 1 0"),
    ("Boring plot, weak cast.", "bad", ""),
    ("Wonderful acting.", "good", "[[0, 1]]"),
    ("Awful.", "bad", "[[0, 1]]"),
]


def _write(path: Path, rows, header=("Text Col", "Gold Label", "Why")):
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(dict(zip(header, r))) + "\n" for r in rows), encoding="utf-8")
    elif path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({h: [r[i] for r in rows] for i, h in enumerate(header)}), path)
    else:
        with open(path, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter="\t" if path.suffix == ".tsv" else ",", lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
    return str(path)


def _cfg(tmp_path, suffix=".csv", rows=ROWS, test_rows=ROWS, **files):
    block = {
        "train": _write(tmp_path / f"train{suffix}", rows),
        "test": _write(tmp_path / f"test{suffix}", test_rows),
        "dev": None,
        "format": None,
        "text": "Text Col",
        "label": "Gold Label",
        "labels": None,
        "second_text": None,
        "rationale": "Why",
        "id": None,
    } | files
    return {"files": block, "task": "binary", "split_seed": 3, "dev_fraction": 0.34}


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_every_table_format_reads_the_same_instances(tmp_path, suffix):
    splits = read(None, _cfg(tmp_path, suffix))
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [4, 2, 6]
    first = splits["test"][0]
    assert first.tokens == ["A", "great", "film", ",", "truly", "."]
    assert (first.label, first.extra["label_name"], first.id) == (1, "good", "test-000001")
    assert [first.tokens[i] for i in first.extra["rationale"]] == ["great"]


def test_labels_are_sorted_strings_unless_listed_and_the_names_reach_stats(tmp_path):
    splits = read(None, _cfg(tmp_path))
    assert {d.extra["label_name"]: d.label for d in splits["test"]} == {"bad": 0, "good": 1}
    listed = read(None, _cfg(tmp_path, labels=["good", "bad"]))
    assert {d.extra["label_name"]: d.label for d in listed["test"]} == {"good": 0, "bad": 1}
    cfg = _cfg(tmp_path) | {
        "min_count": 1,
        "count_by": "document",
        "length_filter": None,
        "expected": {},
        "size_tolerance": 0.0,
        "protocol": "jain_wallace",
    }
    stats = build_dataset("mine", cfg, SourceFiles([]), [], tmp_path / "out", missing_bound="none", log=lambda m: None)
    assert stats["classes"] == ["bad", "good"]
    records = read_records(tmp_path / "out" / "test.jsonl")
    assert records[0]["label"] == 1 and records[0]["label_name"] == "good"
    assert records[3]["rationale"] == []  # an empty rationale cell: no rationale for that row


def test_segment_length_gives_unpunctuated_text_several_sentences_and_is_recorded(tmp_path):
    """Text without sentence punctuation is one sentence per document: the build says what that means
    for a HAN and names the key; `segment_length` cuts the sentences into fixed-length segments."""
    rows = [(f"the film was {w} and the plot {w} too", label, "") for w, label in (("great", "good"), ("dull", "bad"))]
    cfg = _cfg(tmp_path, rows=rows * 3, test_rows=rows) | {
        "min_count": 1,
        "count_by": "document",
        "length_filter": None,
        "expected": {},
        "size_tolerance": 0.0,
        "protocol": "jain_wallace",
    }
    said = []
    stats = build_dataset("mine", cfg, SourceFiles([]), [], tmp_path / "plain", missing_bound="none", log=said.append)
    assert [r["sentences"] for r in read_records(tmp_path / "plain" / "test.jsonl")] == [[[0, 9]]] * 2
    assert "segment_length" not in stats
    assert any("nothing to erase" in line and "datasets.mine.segment_length" in line for line in said), said
    said.clear()
    stats = build_dataset(
        "mine",
        cfg | {"segment_length": 4},
        SourceFiles([]),
        [],
        tmp_path / "cut",
        missing_bound="none",
        log=said.append,
    )
    assert [r["sentences"] for r in read_records(tmp_path / "cut" / "test.jsonl")] == [[[0, 4], [4, 8], [8, 9]]] * 2
    assert stats["segment_length"] == 4 and not any("nothing to erase" in line for line in said)


def test_rationale_masks_and_spans_land_on_the_words_tokens(tmp_path):
    splits = read(None, _cfg(tmp_path, rows=[("Great fun, wow!", "good", "1 1 0"), ("Bad.", "bad", "[[0, 1]]")] * 3))
    loved = next(d for d in splits["test"] if d.tokens[0] == "I")
    assert [loved.tokens[i] for i in loved.extra["rationale"]] == ["loved"]
    fun = next(d for s in splits.values() for d in s if d.tokens[0] == "Great")
    assert [fun.tokens[i] for i in fun.extra["rationale"]] == ["Great", "fun", ","]  # "fun," is one word


def test_missing_dev_and_test_are_split_off_deterministically(tmp_path):
    rows = [(f"text number {i} here", "good" if i % 2 else "bad", "") for i in range(40)]
    cfg = _cfg(tmp_path, rows=rows, test=None) | {"test_fraction": 0.25}
    first, second = read(None, copy.deepcopy(cfg)), read(None, copy.deepcopy(cfg))
    assert [len(first[s]) for s in ("train", "dev", "test")] == [20, 10, 10]
    assert {s: [d.id for d in first[s]] for s in first} == {s: [d.id for d in second[s]] for s in second}


def test_an_id_column_and_a_second_text_column(tmp_path):
    header = ("uid", "premise", "hypothesis", "y")
    rows = [(f"p{i}", "A man sleeps.", "Someone rests.", ["yes", "no", "maybe"][i % 3]) for i in range(9)]
    files = {
        "train": _write(tmp_path / "t.csv", rows, header),
        "test": _write(tmp_path / "s.csv", rows[:3], header),
        "dev": _write(tmp_path / "d.csv", rows[3:6], header),
        "format": None,
        "text": "premise",
        "label": "y",
        "labels": None,
        "second_text": "hypothesis",
        "rationale": None,
        "id": "uid",
    }
    with pytest.raises(FileDatasetError, match=r"d\.csv:2: the id 'p3' was already used at .*t\.csv:5"):
        read(None, {"files": files, "task": "nli", "split_seed": 1})
    files["id"] = None
    splits = read(None, {"files": files, "task": "nli", "split_seed": 1})
    assert splits["dev"][0].question == ["Someone", "rests", "."]
    assert [d.label for d in splits["train"][:3]] == [2, 1, 0]  # maybe, no, yes: sorted


BAD_INPUTS = {
    "a missing column": (
        dict(label="Sentiment"),
        None,
        r"train\.csv: no column 'Sentiment'; the file has 'Text Col', 'Gold Label', 'Why'",
    ),
    "an empty split": ({}, [], r"test\.csv: the test table has no rows"),
    "a label seen only in test": (
        {},
        ROWS + [("Meh.", "neutral", "")],
        r"test\.csv:8: the label 'neutral' does not occur in the training split \(bad, good\)",
    ),
    "a text that tokenises to nothing": (
        {},
        ROWS + [("   ", "good", "")],
        r"test\.csv:8: the text column 'Text Col' tokenises to no tokens",
    ),
    "a rationale that does not fit its text": (
        {},
        ROWS + [("Short text.", "good", "[[1, 5]]")],
        r"test\.csv:8: the rationale span \[1, 5\] does not fit the text; expected \[start, end\) spans over its 2 words",
    ),
    "a mask of the wrong length": (
        {},
        ROWS + [("Short text.", "good", "1 0 1")],
        r"test\.csv:8: the rationale mask has 3 entries; expected .* 0/1 mask of 2 entries",
    ),
    "a mistyped label in a binary task": (dict(labels=None), None, None),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_each_bad_input_is_one_named_error_and_nothing_is_written(tmp_path, case):
    files, test_rows, pattern = BAD_INPUTS[case]
    if case == "a mistyped label in a binary task":
        # a mistyped label is a third class: the error names the first row of the rarest one
        cfg = _cfg(tmp_path, rows=ROWS + [("So so.", "mixed", ""), ("Fine.", "goood", ""), ("Fine.", "mixed", "")])
        pattern = (
            r"train\.csv:9: the label 'goood' makes a class too many: a binary task needs 2, the training split has 4 "
            r"\(bad 2, good 2, goood 1, mixed 1 rows\)"
        )
    else:
        cfg = _cfg(tmp_path, test_rows=ROWS if test_rows is None else test_rows, **files)
    cfg |= {
        "min_count": 1,
        "count_by": "document",
        "length_filter": None,
        "expected": {},
        "size_tolerance": 0.0,
        "protocol": "jain_wallace",
    }
    out = tmp_path / "out"
    with pytest.raises(FileDatasetError, match=pattern) as err:
        build_dataset("mine", cfg, SourceFiles([]), [], out, missing_bound="none", log=lambda m: None)
    assert "\n" not in str(err.value)
    assert not out.exists()


def test_malformed_lines_name_file_and_line(tmp_path):
    cfg = _cfg(tmp_path)
    bad_csv = tmp_path / "train.csv"
    bad_csv.write_text('Text Col,Gold Label,Why\nfine,good,\n"broken",good,,extra\n', encoding="utf-8")
    cfg["files"]["train"] = str(bad_csv)
    with pytest.raises(FileDatasetError, match=r"train\.csv:3: expected 3 fields \(Text Col, Gold Label, Why\), got 4"):
        read(None, cfg)
    bad_jsonl = tmp_path / "train.jsonl"
    bad_jsonl.write_text('{"Text Col": "ok", "Gold Label": "good", "Why": ""}\n{"Text Col": "oops"\n', encoding="utf-8")
    cfg["files"]["train"] = str(bad_jsonl)
    with pytest.raises(FileDatasetError, match=r"train\.jsonl:2: expected one JSON object per line"):
        read(None, cfg)


# ------------------------------------------------------------------------------------------------
# Config: checked before any job runs


@pytest.fixture
def config_with_reviews(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_example(tmp_path / "examples" / "reviews", train_rows=20, test_rows=10)
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    preset = yaml.safe_load((ROOT / "presets" / "own_data_example.yaml").read_text(encoding="utf-8"))
    config["datasets"]["reviews"] = preset["datasets"]["reviews"]
    return config


def test_the_worked_example_block_validates_with_defaults_filled(config_with_reviews):
    ds = validate_config(config_with_reviews)["datasets"]["reviews"]
    assert ds["files"]["dev"] is None and ds["files"]["second_text"] is None and ds["files"]["format"] is None


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda ds: ds["files"].update(train="nowhere.csv"),
            "'datasets.reviews.files.train': nowhere.csv is not a file",
        ),
        (lambda ds: ds.pop("dev_fraction"), "'datasets.reviews.dev_fraction': required when files.dev is absent"),
        (lambda ds: ds.update(task="nli"), "'datasets.reviews.files.second_text': task nli reads a second text column"),
        (
            lambda ds: ds.update(protocol="generated"),
            "'datasets.reviews.protocol': a dataset from files follows jain_wallace or serrano_smith",
        ),
        (lambda ds: ds.pop("files"), "'datasets.reviews': no built-in dataset has this name"),
        (lambda ds: ds["files"].update(text=None), "'datasets.reviews.files.text'"),
    ],
)
def test_config_errors_name_the_key(config_with_reviews, change, message):
    change(config_with_reviews["datasets"]["reviews"])
    with pytest.raises(ConfigError, match="invalid configuration") as err:
        validate_config(config_with_reviews)
    assert message in str(err.value)
