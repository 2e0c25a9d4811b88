"""A preprocessed dataset's split files read back (attnexp.data.splits): the class labels in the
training split's order, read without parsing whole records, and a split's ids and class indices."""

from __future__ import annotations

import pytest
from tiny_tasks import write_dataset

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.data.splits import _read_labels, label_classes, read_classes, split_labels


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data"))


def test_label_classes_sorts_numbers_numerically():
    records = [{"label": x} for x in ["10", "2", "b", "-1", "a", "2"]]
    assert label_classes(records) == ["-1", "2", "10", "a", "b"]
    assert label_classes([{"label": 1}, {"label": 0}]) == [0, 1]


def test_split_labels_are_ids_and_class_indices_in_file_order(tmp_path):
    data = write_dataset(tmp_path / "named", relabel=lambda label: "pos" if label else "neg")
    for split in ("train", "dev", "test"):
        records = io.read_jsonl(data.path(split))
        ids, labels = split_labels(data, split)
        assert ids == [r["id"] for r in records]
        assert labels.tolist() == [{"neg": 0, "pos": 1}[r["label"]] for r in records]
        assert labels.dtype.kind == "i" and set(labels.tolist()) == {0, 1}
    assert read_classes(data) == ["neg", "pos"]
    # the class order is the training split's: a test split relabelled to a class unseen in training fails
    records = io.read_jsonl(data.test)
    io.write_jsonl(data.test, [records[0] | {"label": "other"}, *records[1:]])
    with pytest.raises(KeyError):
        split_labels(data, "test")


@pytest.mark.parametrize(
    "line",
    [
        '{"id":"a","tokens":["x","y"],"label":1,"sentences":[[0,2]]}',
        '{"id":"a","tokens":["x"],"label":"pos"}',
        '{"label":0,"id":"a","tokens":[]}',
        '{"id":"a","tokens":["{","\\"label\\":7"],"label":2}',  # a brace and a quoted key inside tokens
        '{"id":"a","meta":{"label":9},"label":3}',  # a nested key of the same name first
        '{"id": "a", "tokens": ["x"], "label": 4}',  # whitespace after the colon
        '{"id":"a\\"label\\":5","label":[1, 2]}',
        '{"id":"a","tokens":["x"],"label":null}',
    ],
)
def test_read_classes_reads_each_label_as_a_full_parse_would(tmp_path, line):
    (tmp_path / "train.jsonl").write_text(line + "\n" + line + "\n", encoding="utf-8")
    assert _read_labels(tmp_path / "train.jsonl") == [r["label"] for r in io.read_jsonl(tmp_path / "train.jsonl")]


def test_read_classes_of_a_real_training_split_and_its_errors(data, tmp_path):
    assert read_classes(data) == label_classes(io.read_jsonl(data.train))
    (tmp_path / "train.jsonl").write_text('{"id":"a","label":1}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"train.jsonl:2: not a JSON object per line"):
        read_classes(DataFiles(train=tmp_path / "train.jsonl"))
