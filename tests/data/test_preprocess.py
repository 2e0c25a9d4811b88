"""The shared preprocessing protocol (attnexp.data.preprocess): splits, the D-LEN length filter, the
D-VOCAB vocabulary, stats, the published-size check and build_dataset end to end with a fake reader."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from attnexp.data.documents import DataFiles, Document, read_records, split_off
from attnexp.data.preprocess import (
    SPECIAL_TOKENS,
    SplitSizeError,
    build_dataset,
    build_vocab,
    check_expected_sizes,
    dataset_stats,
    length_filter,
)


def doc(id, tokens, label=0, sentences=None, question=None, **extra):
    if isinstance(tokens, int):
        tokens = [f"t{i}" for i in range(tokens)]
    return Document(
        id=id,
        tokens=list(tokens),
        label=label,
        sentences=sentences if sentences is not None else [(0, len(tokens))],
        question=question,
        extra=extra,
    )


def ids(docs):
    return [d.id for d in docs]


# --------------------------------------------------------------------------------------------------
# Document


def test_document_to_record_field_order_and_values():
    d = doc("x1", ["a", "b", "c"], label=1, sentences=[(0, 2), (2, 3)], question=["q"], rationale=[0], distractors=[2])
    record = d.to_record()
    assert list(record) == ["id", "tokens", "label", "question", "sentences", "rationale", "distractors"]
    assert record == {
        "id": "x1",
        "tokens": ["a", "b", "c"],
        "label": 1,
        "question": ["q"],
        "sentences": [[0, 2], [2, 3]],
        "rationale": [0],
        "distractors": [2],
    }
    without_question = doc("x2", ["a"]).to_record()
    assert list(without_question) == ["id", "tokens", "label", "sentences"]


def test_document_from_text_and_normalised():
    d = Document.from_text("d", "The Cat sat in 2019. It was 5.50 dollars.", 1, question="Who Sat?")
    assert d.tokens == ["The", "Cat", "sat", "in", "2019", ".", "It", "was", "5.50", "dollars", "."]
    assert d.sentences == [(0, 6), (6, 11)]
    assert d.question == ["Who", "Sat", "?"]
    n = d.normalised()
    assert n.tokens == ["the", "cat", "sat", "in", "qqq", ".", "it", "was", "qqq", "dollars", "."]
    assert n.question == ["who", "sat", "?"]
    assert (n.id, n.label, n.sentences) == ("d", 1, d.sentences)
    assert d.tokens[0] == "The"  # the original is not modified


# --------------------------------------------------------------------------------------------------
# split_off


def _labelled(n0, n1):
    return [doc(f"a{i}", 1, label=0) for i in range(n0)] + [doc(f"b{i}", 1, label=1) for i in range(n1)]


def test_split_off_exact_held_out_size_per_label():
    docs = _labelled(10, 7)
    rest, held = split_off(docs, 0.3, seed=1)
    # round(0.3 * 10) = 3, round(0.3 * 7) = round(2.1) = 2
    assert sum(d.label == 0 for d in held) == 3
    assert sum(d.label == 1 for d in held) == 2
    assert len(rest) == 12
    assert sorted(ids(rest) + ids(held)) == sorted(ids(docs))
    assert not set(ids(rest)) & set(ids(held))


def test_split_off_unstratified_size():
    docs = _labelled(10, 7)
    rest, held = split_off(docs, 0.3, seed=1, stratify=False)
    assert len(held) == 5  # round(0.3 * 17) = round(5.1)
    assert len(rest) == 12


def test_split_off_deterministic_and_seed_dependent():
    docs = _labelled(20, 20)
    first = split_off(docs, 0.25, seed=7)
    again = split_off(docs, 0.25, seed=7)
    other = split_off(docs, 0.25, seed=8)
    assert ids(first[1]) == ids(again[1]) and ids(first[0]) == ids(again[0])
    assert ids(first[1]) != ids(other[1])


def test_split_off_preserves_input_order():
    docs = _labelled(15, 15)
    docs = docs[::2] + docs[1::2]  # interleave labels, an order that is not sorted by id
    position = {d.id: i for i, d in enumerate(docs)}
    rest, held = split_off(docs, 0.4, seed=3)
    assert [position[i] for i in ids(rest)] == sorted(position[i] for i in ids(rest))
    assert [position[i] for i in ids(held)] == sorted(position[i] for i in ids(held))


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5])
def test_split_off_fraction_outside_open_interval(fraction):
    with pytest.raises(ValueError, match="fraction"):
        split_off(_labelled(3, 3), fraction, seed=0)


# --------------------------------------------------------------------------------------------------
# length_filter (J&W §4.1.4, D-LEN)

LENGTHS = [1, 2, 3, 3, 5, 5, 4]


def _by_length():
    return [doc(f"d{i}", n) for i, n in enumerate(LENGTHS)]


def _lengths(docs):
    return [len(d.tokens) for d in docs]


def test_length_filter_strict_bounds():
    assert _lengths(length_filter(_by_length(), 3, 5)) == [4]
    assert _lengths(length_filter(_by_length(), 2, 6)) == [3, 3, 5, 5, 4]
    assert _lengths(length_filter(_by_length(), 2, 6, "none")) == [3, 3, 5, 5, 4]


def test_length_filter_split_extreme_drops_every_doc_of_the_max_length():
    # hi missing -> hi = max n = 5: both 5-token documents go
    assert _lengths(length_filter(_by_length(), 2, None, "split_extreme")) == [3, 3, 4]


def test_length_filter_split_extreme_drops_every_doc_of_the_min_length():
    docs = [doc(f"d{i}", n) for i, n in enumerate([2, 2, 3, 9])]
    assert _lengths(length_filter(docs, None, 9, "split_extreme")) == [3]
    # both bounds missing: min (1) and max (5) documents dropped
    assert _lengths(length_filter(_by_length(), None, None, "split_extreme")) == [2, 3, 3, 4]


def test_length_filter_none_keeps_extremes():
    assert _lengths(length_filter(_by_length(), 2, None, "none")) == [3, 3, 5, 5, 4]
    assert _lengths(length_filter(_by_length(), None, None, "none")) == LENGTHS
    assert _lengths(length_filter(_by_length(), None, 4, "none")) == [1, 2, 3, 3]


def test_length_filter_default_mode_is_split_extreme():
    assert _lengths(length_filter(_by_length(), 2, None)) == [3, 3, 4]


def test_length_filter_unknown_mode():
    with pytest.raises(ValueError, match="split_extreme"):
        length_filter(_by_length(), 2, None, "drop")


def test_length_filter_empty():
    assert length_filter([], 2, None) == []


# --------------------------------------------------------------------------------------------------
# build_vocab (D-VOCAB)


def _vocab_train():
    return [
        doc("d1", ["a", "b", "b", "c"]),
        doc("d2", ["b", "c", "d"], question=["a", "e"]),
        doc("d3", ["c", "c", "c", "f"]),
    ]
    # document frequency: a 2 (d1, d2's question), b 2, c 3, d 1, e 1, f 1
    # token count:        a 2, b 3, c 5, d 1, e 1, f 1


def test_build_vocab_special_tokens_first():
    vocab = build_vocab(_vocab_train(), 1)
    assert SPECIAL_TOKENS == ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]
    assert vocab[:4] == ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]


def test_build_vocab_document_frequency():
    assert build_vocab(_vocab_train(), 2, "document")[4:] == ["c", "a", "b"]
    assert build_vocab(_vocab_train(), 3, "document")[4:] == ["c"]
    assert build_vocab(_vocab_train(), 1, "document")[4:] == ["c", "a", "b", "d", "e", "f"]
    assert build_vocab(_vocab_train(), 4, "document")[4:] == []


def test_build_vocab_token_count():
    assert build_vocab(_vocab_train(), 2, "token")[4:] == ["c", "b", "a"]
    assert build_vocab(_vocab_train(), 3, "token")[4:] == ["c", "b"]
    assert build_vocab(_vocab_train(), 5, "token")[4:] == ["c"]


def test_build_vocab_default_counts_documents():
    assert build_vocab(_vocab_train(), 2) == build_vocab(_vocab_train(), 2, "document")


def test_build_vocab_question_tokens_counted():
    train = [doc("d1", ["x"], question=["y"]), doc("d2", ["z"], question=["y"])]
    assert build_vocab(train, 2)[4:] == ["y"]


def test_build_vocab_special_token_in_text_not_duplicated():
    train = [doc("d1", ["<UNK>", "w"]), doc("d2", ["<UNK>", "w"])]
    assert build_vocab(train, 1) == SPECIAL_TOKENS + ["w"]


# --------------------------------------------------------------------------------------------------
# dataset_stats


SOURCES = [
    {"file": "a.tar.gz", "sha256": "0" * 64, "substitute": None, "splits_affected": [], "url": "https://x"},
    {"file": "b.csv", "sha256": "1" * 64, "substitute": "first rows only", "splits_affected": ["train"]},
]


def test_dataset_stats_shape_and_numbers():
    splits = {
        "train": [doc("t1", 1, label=10), doc("t2", 2, label=2), doc("t3", 2, label=0), doc("t4", 4, label=2)],
        "dev": [doc("d1", 3, label=1)],
        "test": [],
    }
    stats = dataset_stats("toy", splits, SPECIAL_TOKENS + ["w"], SOURCES)
    assert stats == {
        "dataset": "toy",
        "splits": {
            "train": {"n": 4, "by_label": {"0": 1, "2": 2, "10": 1}, "mean_length": 2.25},
            "dev": {"n": 1, "by_label": {"1": 1}, "mean_length": 3.0},
            "test": {"n": 0, "by_label": {}, "mean_length": 0.0},
        },
        "vocab_size": 5,
        "sources": [
            {"file": "a.tar.gz", "sha256": "0" * 64, "substitute": None},
            {"file": "b.csv", "sha256": "1" * 64, "substitute": "first rows only"},
        ],
    }
    assert list(stats) == ["dataset", "splits", "vocab_size", "sources"]
    assert list(stats["splits"]) == ["train", "dev", "test"]
    assert list(stats["splits"]["train"]["by_label"]) == ["0", "2", "10"]  # numeric order, not "10" < "2"
    assert all(list(s) == ["file", "sha256", "substitute"] for s in stats["sources"])


def test_dataset_stats_mean_length_rounded_and_string_labels():
    splits = {
        "train": [doc("t1", 1, label="kitchen"), doc("t2", 2, label="bathroom"), doc("t3", 2, label="kitchen")],
        "dev": [],
        "test": [],
    }
    stats = dataset_stats("toy", splits, SPECIAL_TOKENS, [])
    assert stats["splits"]["train"]["mean_length"] == 1.6667  # 5 / 3 to 4 places
    assert list(stats["splits"]["train"]["by_label"]) == ["bathroom", "kitchen"]
    assert stats["splits"]["train"]["by_label"] == {"bathroom": 1, "kitchen": 2}
    assert stats["sources"] == []


# --------------------------------------------------------------------------------------------------
# check_expected_sizes


STATS = {
    "splits": {
        "train": {"n": 190, "by_label": {"0": 100, "1": 90}},
        "dev": {"n": 20, "by_label": {"0": 10, "1": 10}},
        "test": {"n": 50, "by_label": {"0": 50}},
    }
}


def test_check_expected_sizes_within_tolerance():
    check_expected_sizes("toy", STATS, {"train": {"0": 100, "1": 90}}, 0.0)
    check_expected_sizes("toy", STATS, {"train": {"0": 100, "1": 95}}, 0.06)  # |90-95| = 5 <= 5.7
    check_expected_sizes("toy", STATS, {"train": {"all": 190}, "dev": {"all": 20}}, 0.0)
    check_expected_sizes("toy", STATS, {}, 0.0)


def test_check_expected_sizes_outside_tolerance_names_split_label_expected_got():
    with pytest.raises(SplitSizeError) as err:
        check_expected_sizes("toy", STATS, {"train": {"0": 100, "1": 95}}, 0.05)  # 5 > 4.75
    message = str(err.value)
    assert "'toy'" in message
    assert "train label 1: expected 95" in message and "got 90" in message
    assert "label 0" not in message


def test_check_expected_sizes_all_label_and_missing_label():
    with pytest.raises(SplitSizeError, match=r"dev label all: expected 21 .*got 20"):
        check_expected_sizes("toy", STATS, {"dev": {"all": 21}}, 0.0)
    with pytest.raises(SplitSizeError, match=r"test label 1: expected 3 .*got 0"):
        check_expected_sizes("toy", STATS, {"test": {"1": 3}}, 0.0)


def test_check_expected_sizes_lists_every_problem():
    with pytest.raises(SplitSizeError) as err:
        check_expected_sizes("toy", STATS, {"train": {"0": 1}, "test": {"all": 1}}, 0.0)
    assert "train label 0" in str(err.value) and "test label all" in str(err.value)


def test_split_size_error_is_an_assertion_error():
    assert issubclass(SplitSizeError, AssertionError)


# --------------------------------------------------------------------------------------------------
# build_dataset end to end, with a fake reader


def _fake_splits():
    return {
        "train": [
            doc("t1", ["The", "Cat", "sat", "."], 0, rationale=[1]),
            doc("t2", ["A", "cat", "ran", "in", "2019"], 1, sentences=[(0, 3), (3, 5)]),
            doc("t3", ["the", "dog"], 0),  # 2 tokens: not > lo = 2
            doc("t4", ["The", "dog", "sat", "on", "the", "mat", "."], 1),  # the split's max: dropped (D-LEN)
            doc("t5", ["THE", "DOG", "ran", "."], 1),
        ],
        "dev": [
            doc("v1", ["Hello", "World", "!"], 0, question=["Who", "Said", "42"]),
            doc("v2", ["Bye", "now", "2", "times"], 1),  # the split's max: dropped
        ],
        "test": [
            doc("x1", ["Good", "film", "."], 1),
            doc("x2", ["Bad", "film", "!", "Really", "bad", "."], 0),  # max: dropped
            doc("x3", ["OK", "."], 1),  # too short
            doc("x4", ["Fine", "film", "!", "Yes", "."], 1),
        ],
    }


def _cfg(**overrides):
    cfg = {
        "protocol": "jain_wallace",
        "length_filter": {"lo": 2, "hi": None},
        "min_count": 2,
        "count_by": "document",
        "expected": {"train": {"0": 1, "1": 2}, "test": {"all": 2}},
        "size_tolerance": 0.0,
        "split_seed": 0,
    }
    cfg.update(overrides)
    return cfg


@pytest.fixture
def fake_reader(monkeypatch):
    calls = []

    def fake_read(files, cfg):
        calls.append((files, cfg))
        return _fake_splits()

    monkeypatch.setattr("attnexp.data.preprocess.reader_for", lambda name, cfg=None: fake_read)
    return calls


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_build_dataset_end_to_end(tmp_path, fake_reader):
    out = tmp_path / "out"
    messages = []
    stats = build_dataset("toy", _cfg(), "FILES", SOURCES, out, missing_bound="split_extreme", log=messages.append)

    # the reader got the files and the config with the dataset's name
    assert len(fake_reader) == 1
    files, cfg = fake_reader[0]
    assert files == "FILES" and cfg["name"] == "toy" and cfg["min_count"] == 2

    # exactly the five outputs; no temporary files left
    assert sorted(p.name for p in out.iterdir()) == [
        "dev.jsonl",
        "stats.json",
        "test.jsonl",
        "train.jsonl",
        "vocab.txt",
    ]

    train = _read_jsonl(out / "train.jsonl")
    assert train == [
        {"id": "t1", "tokens": ["the", "cat", "sat", "."], "label": 0, "sentences": [[0, 4]], "rationale": [1]},
        {"id": "t2", "tokens": ["a", "cat", "ran", "in", "qqq"], "label": 1, "sentences": [[0, 3], [3, 5]]},
        {"id": "t5", "tokens": ["the", "dog", "ran", "."], "label": 1, "sentences": [[0, 4]]},
    ]
    assert list(train[0]) == ["id", "tokens", "label", "sentences", "rationale"]
    dev = _read_jsonl(out / "dev.jsonl")
    assert dev == [
        {
            "id": "v1",
            "tokens": ["hello", "world", "!"],
            "label": 0,
            "question": ["who", "said", "qqq"],
            "sentences": [[0, 3]],
        }
    ]
    assert list(dev[0]) == ["id", "tokens", "label", "question", "sentences"]
    assert [r["id"] for r in _read_jsonl(out / "test.jsonl")] == ["x1", "x4"]

    # document frequency >= 2 on the kept, normalised training split: ".", cat, ran, the (all 2), A-Z
    assert (out / "vocab.txt").read_text(encoding="utf-8") == "<PAD>\n<UNK>\n<SOS>\n<EOS>\n.\ncat\nran\nthe\n"

    expected_stats = {
        "dataset": "toy",
        "splits": {
            "train": {"n": 3, "by_label": {"0": 1, "1": 2}, "mean_length": 4.3333},
            "dev": {"n": 1, "by_label": {"0": 1}, "mean_length": 3.0},
            "test": {"n": 2, "by_label": {"1": 2}, "mean_length": 4.0},
        },
        "vocab_size": 8,
        "sources": [
            {"file": "a.tar.gz", "sha256": "0" * 64, "substitute": None},
            {"file": "b.csv", "sha256": "1" * 64, "substitute": "first rows only"},
        ],
    }
    assert stats == expected_stats
    written = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    # stats.json also records each file's digest, which every reader checks
    assert written.pop("files") == {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in ("train.jsonl", "dev.jsonl", "test.jsonl", "vocab.txt")
    }
    assert written == expected_stats
    assert "toy/train: 5 read, 3 after the length filter" in messages
    assert "toy/dev: 2 read, 1 after the length filter" in messages
    assert "toy/test: 4 read, 2 after the length filter" in messages


def test_build_dataset_missing_bound_none(tmp_path, fake_reader):
    stats = build_dataset("toy", _cfg(expected={}), None, [], tmp_path, missing_bound="none", log=lambda m: None)
    # only lo = 2 filters: t3 and x3 go, the longest documents stay
    assert [stats["splits"][s]["n"] for s in ("train", "dev", "test")] == [4, 2, 3]


def test_build_dataset_without_length_filter(tmp_path, fake_reader):
    stats = build_dataset(
        "toy",
        _cfg(length_filter=None, expected={}),
        None,
        [],
        tmp_path,
        missing_bound="split_extreme",
        log=lambda m: None,
    )
    assert [stats["splits"][s]["n"] for s in ("train", "dev", "test")] == [5, 2, 4]


def test_build_dataset_size_mismatch_raises_and_writes_nothing(tmp_path, fake_reader):
    out = tmp_path / "out"
    with pytest.raises(SplitSizeError, match="train label 0: expected 99"):
        build_dataset(
            "toy", _cfg(expected={"train": {"0": 99}}), None, [], out, missing_bound="split_extreme", log=lambda m: None
        )
    assert not out.exists() or list(out.iterdir()) == []


def test_build_dataset_substitute_skips_only_affected_splits(tmp_path, fake_reader):
    sources = [{"file": "b.csv", "sha256": "1" * 64, "substitute": "first rows only", "splits_affected": ["train"]}]
    messages = []
    wrong_train = _cfg(expected={"train": {"0": 99}, "test": {"all": 2}})
    build_dataset("toy", wrong_train, None, sources, tmp_path / "a", missing_bound="split_extreme", log=messages.append)
    assert (tmp_path / "a" / "stats.json").is_file()
    assert any("stand-in files change the ['train'] splits" in m for m in messages)

    wrong_test = _cfg(expected={"train": {"0": 99}, "test": {"all": 3}})
    with pytest.raises(SplitSizeError) as err:
        build_dataset(
            "toy", wrong_test, None, sources, tmp_path / "b", missing_bound="split_extreme", log=lambda m: None
        )
    assert "test label all: expected 3" in str(err.value)
    assert "train" not in str(err.value).split("\n", 1)[1]


def test_build_dataset_generated_protocol_keeps_tokens(tmp_path, fake_reader):
    build_dataset(
        "toy",
        _cfg(protocol="generated", length_filter=None, expected={}),
        None,
        [],
        tmp_path,
        missing_bound="split_extreme",
        log=lambda m: None,
    )
    train = _read_jsonl(tmp_path / "train.jsonl")
    assert train[0]["tokens"] == ["The", "Cat", "sat", "."]
    assert train[1]["tokens"] == ["A", "cat", "ran", "in", "2019"]


def test_build_dataset_rejects_wrong_splits(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "attnexp.data.preprocess.reader_for", lambda name, cfg=None: lambda files, cfg: {"train": [], "test": []}
    )
    with pytest.raises(ValueError, match="expected"):
        build_dataset("toy", _cfg(), None, [], tmp_path, missing_bound="split_extreme", log=lambda m: None)


GOOD = {"id": "test-00001", "tokens": ["a", "good", "film"], "label": 1, "sentences": [[0, 3]]}


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({k: v for k, v in GOOD.items() if k != "label"}, "no 'label' (expected id, tokens, label, sentences)"),
        (GOOD | {"tokens": []}, "'tokens' is empty (every instance has at least one token)"),
        (GOOD | {"tokens": "a good film"}, "'tokens' is not a list of strings"),
        (GOOD | {"label": [1]}, "'label' is [1], expected a string or an integer"),
        (GOOD | {"label": True}, "'label' is True, expected a string or an integer"),
        (GOOD | {"id": 7}, "'id' is 7, expected a string"),
        (GOOD | {"sentences": [[0, 4]]}, "'sentences' is not a list of [start, end] token spans within the tokens"),
        (GOOD | {"question": "why"}, "'question' is not a list of strings"),
        ([1, 2], "expected a JSON object, got list"),
    ],
)
def test_a_malformed_split_record_is_one_error_naming_the_file_and_line(tmp_path, record, problem):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_records(path)
    assert str(err.value) == f"{path}:2: {problem}"


def test_well_formed_split_records_are_read_as_written(tmp_path):
    path = tmp_path / "train.jsonl"
    records = [GOOD, GOOD | {"id": "q", "label": "yes", "question": ["is", "it"], "rationale": [0]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert read_records(path) == records


def test_a_split_file_changed_after_it_was_written_is_refused_when_read(tmp_path):
    stats = {"splits": {}}
    (tmp_path / "test.jsonl").write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    (tmp_path / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    with pytest.raises(ValueError, match=r"stats.json records no digest for it \(written by an older attnexp\)"):
        read_records(tmp_path / "test.jsonl")
    digest = hashlib.sha256((tmp_path / "test.jsonl").read_bytes()).hexdigest()
    (tmp_path / "stats.json").write_text(json.dumps(stats | {"files": {"test.jsonl": digest}}), encoding="utf-8")
    assert read_records(tmp_path / "test.jsonl") == [GOOD]
    (tmp_path / "test.jsonl").write_text(
        json.dumps(GOOD | {"label": 0}) + "\n", encoding="utf-8"
    )  # an edit, valid JSON
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(str(tmp_path / 'test.jsonl'))}: damaged, it does not match the digest stats.json recorded",
    ):
        read_records(tmp_path / "test.jsonl")


def test_data_files_are_the_files_a_rule_names_and_no_others():
    named = {
        "train": "results/data/sst/train.jsonl",
        "test": "results/data/sst/test.jsonl",
        "model": "m.pt",
        "stats": "s.json",
    }
    files = DataFiles.of(named)
    assert files == DataFiles(train=Path("results/data/sst/train.jsonl"), test=Path("results/data/sst/test.jsonl"))
    assert files.path("test") == Path(named["test"]) and str(files.train) == named["train"]
    with pytest.raises(
        ValueError, match=r"^this job was given no dev file of its dataset \(its rule names none as the input 'dev'\)$"
    ):
        files.path("dev")
    with pytest.raises(
        ValueError, match=r"'stats' is no file of a preprocessed dataset; expected one of train, dev, test, vocab"
    ):
        files.path("stats")


def test_a_document_reads_back_from_its_record():
    """Document.from_record is to_record's inverse, QA question and per-instance annotations included."""
    plain = Document("d1", ["a", "b"], 1, [(0, 2)])
    annotated = Document(
        "d2", ["a", "b", "c"], "pos", [(0, 1), (1, 3)], question=["why"], extra={"rationale": [[0, 1]]}
    )
    for document in (plain, annotated):
        record = json.loads(json.dumps(document.to_record()))  # as written to and read from a split file
        assert Document.from_record(record).to_record() == record


def test_a_split_changed_after_stats_json_is_named_and_one_only_touched_or_older_is_not(tmp_path):
    import os

    from attnexp import io
    from attnexp.data.documents import changed_since_written

    (tmp_path / "train.jsonl").write_text('{"id": 1}\n')
    (tmp_path / "test.jsonl").write_text('{"id": 2}\n')
    digests = {name: io.file_digest(tmp_path / name) for name in ("train.jsonl", "test.jsonl")}
    (tmp_path / "stats.json").write_text(json.dumps({"files": digests}))
    written = (tmp_path / "stats.json").stat().st_mtime_ns
    assert changed_since_written(tmp_path) == [] and changed_since_written(tmp_path / "absent") == []
    (tmp_path / "train.jsonl").write_text('{"id": 9}\n')  # edited, a fresh timestamp
    os.utime(tmp_path / "train.jsonl", ns=(written + 10**9, written + 10**9))
    os.utime(tmp_path / "test.jsonl", ns=(written + 10**9, written + 10**9))  # touched only
    assert changed_since_written(tmp_path) == [
        f"{tmp_path / 'train.jsonl'}: damaged, it does not match the digest stats.json recorded when it was written; "
        "delete the folder and rerun"
    ]
    os.utime(tmp_path / "train.jsonl", ns=(written - 10**9, written - 10**9))  # older: the job's own check catches it
    assert changed_since_written(tmp_path) == []
