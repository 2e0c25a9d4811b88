"""Readers for SST, IMDB, 20 Newsgroups, AG News, bAbI and SNLI on tiny fixtures written in the real file
formats (attnexp.data.readers.*)."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from attnexp.data.readers import SourceFiles, agnews, babi, imdb, newsgroups, reader_for, snli, sst


def _write(root, relative, text, encoding="utf-8"):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding=encoding)
    return path


def _labels(docs):
    return Counter(d.label for d in docs)


# --------------------------------------------------------------------------------------------------
# SourceFiles and reader_for


def test_source_files_find_and_glob(tmp_path):
    _write(tmp_path, "a/trees/train.txt", "x")
    _write(tmp_path, "a/other/train.txt", "x")
    _write(tmp_path, "b.csv", "x")
    files = SourceFiles([tmp_path / "a", tmp_path / "b.csv"])
    assert files.find("trees/train.txt") == tmp_path / "a/trees/train.txt"
    assert files.find("b.csv") == tmp_path / "b.csv"
    assert files.find("es/train.txt", required=False) is None  # whole path components only
    with pytest.raises(ValueError, match="ambiguous"):
        files.find("train.txt")
    with pytest.raises(FileNotFoundError):
        files.find("missing.txt")
    assert files.glob("other/*.txt") == [tmp_path / "a/other/train.txt"]
    with pytest.raises(FileNotFoundError):
        SourceFiles([tmp_path / "nope"])


def test_reader_for():
    from attnexp.config import BUILT_IN_DATASETS
    from attnexp.data.readers import files

    for name in BUILT_IN_DATASETS:
        assert callable(reader_for(name))
    assert reader_for("sst", {"files": {"train": "mine.csv"}}) is files.read  # a files block wins over the name
    assert reader_for("sst") is sst.read
    assert reader_for("20news") is newsgroups.read_binary
    assert reader_for("20news20") is newsgroups.read_all_groups
    assert reader_for("imdb_ratings") is imdb.read_ratings
    assert reader_for("babi2") is babi.read
    with pytest.raises(KeyError, match="no reader"):
        reader_for("mnist")


# --------------------------------------------------------------------------------------------------
# SST (PTB trees)

SST_TRAIN = (
    "\n".join(
        [
            "(3 (2 It) (4 (2 's) (3 (2 a) (4 (3 lovely) (2 film)))))",
            "(2 (2 Just) (2 okay))",
            "(1 (2 -LRB-) (2 co-writer) (2 -RRB-) (1 (1 fails) (2 .)))",
            "",
            "(0 (0 Awful) (2 !))",
            "(4 (4 Great) (2 stuff))",
        ]
    )
    + "\n"
)
SST_DEV = "(4 (2 It) (4 (2 does) (2 n't) (2 21st)))\n"
SST_TEST = "(1 (2 The) (1 (2 5.50) (1 dollars)))\n(2 (2 meh) (2 .))\n"


@pytest.fixture
def sst_files(tmp_path):
    for split, text in (("train", SST_TRAIN), ("dev", SST_DEV), ("test", SST_TEST)):
        _write(tmp_path, f"trees/{split}.txt", text)
    return SourceFiles([tmp_path])


def test_sst_read(sst_files):
    splits = sst.read(sst_files, {})
    train = splits["train"]
    assert [d.id for d in train] == ["train-00001", "train-00003", "train-00005", "train-00006"]
    assert [d.label for d in train] == [1, 0, 0, 1]
    assert [d.tokens for d in train] == [
        ["It", "s", "a", "lovely", "film"],  # "'s" -> "s"
        ["co", "writer", "fails"],  # -LRB-/-RRB- removed, hyphen and "." stripped
        ["Awful"],
        ["Great", "stuff"],
    ]
    assert [d.sentences for d in train] == [[(0, 5)], [(0, 3)], [(0, 1)], [(0, 2)]]
    assert [d.tokens for d in splits["dev"]] == [["It", "does", "n", "t", "21st"]]
    assert [(d.tokens, d.label) for d in splits["test"]] == [(["The", "5", "50", "dollars"], 0)]


def test_sst_parse_tree_line():
    assert sst.parse_tree_line("(0 (1 So) (0 (0 bad) (2 ...)))", "x") == (0, ["So", "bad"])
    with pytest.raises(ValueError, match=r"f\.txt:7"):
        sst.parse_tree_line("not a tree", "f.txt:7")


def test_sst_malformed_line_names_file_and_line(tmp_path):
    _write(tmp_path, "trees/train.txt", "(3 (3 good))\nbroken line\n")
    _write(tmp_path, "trees/dev.txt", "")
    _write(tmp_path, "trees/test.txt", "")
    with pytest.raises(ValueError, match=r"train\.txt:2"):
        sst.read(SourceFiles([tmp_path]), {})


# --------------------------------------------------------------------------------------------------
# IMDB (aclImdb)

IMDB_CFG = {"max_word_tokens": 5, "dev_fraction": 0.5, "test_fraction": 0.5, "split_seed": 1378}


@pytest.fixture
def imdb_root(tmp_path):
    reviews = {
        "train/pos/0_9.txt": "Great movie!<br /><br />Loved it.",  # 4 word tokens
        "train/pos/2_8.txt": "Fine film.",
        "train/pos/10_10.txt": "one two three four five",  # 5 word tokens: not < 5
        "train/pos/3_7.txt": "Wow !!! ... ( really ) -- ok ?!",  # 3 word tokens, many others
        "train/neg/1_1.txt": "Bad.",
        "train/neg/4_2.txt": "Terrible, awful!!",
        "train/neg/5_3.txt": "So so so bad",
        "train/neg/6_4.txt": "a b c d e f",
        "test/pos/0_10.txt": "Good.",
        "test/pos/1_7.txt": "Nice one.",
        "test/neg/0_1.txt": "Poor.",
        "test/neg/1_4.txt": "Weak plot.",
        "test/neg/2_2.txt": "This is far too long indeed",
    }
    for name, text in reviews.items():
        _write(tmp_path, f"aclImdb/{name}", text)
    return tmp_path


def test_imdb_binary_read(imdb_root):
    splits = imdb.read(SourceFiles([imdb_root]), IMDB_CFG)
    train_dev = splits["train"] + splits["dev"]
    # short train reviews: pos 0, 2, 3 (10 has 5 words); neg 1, 4, 5 (6 has 6 words)
    assert sorted(d.id for d in train_dev) == sorted(
        ["train/pos/0", "train/pos/2", "train/pos/3", "train/neg/1", "train/neg/4", "train/neg/5"]
    )
    # dev = round(0.5 * 3) = 2 per label
    assert _labels(splits["dev"]) == {0: 2, 1: 2}
    assert _labels(splits["train"]) == {0: 1, 1: 1}
    # test = 50 % of the short test reviews: pos {0, 1} -> 1, neg {0, 1} -> 1 (2 is too long)
    assert _labels(splits["test"]) == {0: 1, 1: 1}
    assert all(d.id.split("/")[-1] in {"0", "1"} for d in splits["test"])
    great = next(d for d in train_dev if d.id == "train/pos/0")
    assert great.tokens == ["Great", "movie", "!", "Loved", "it", "."]  # <br /> gone
    assert great.sentences == [(0, 3), (3, 6)]
    assert great.label == 1


def test_imdb_binary_read_is_deterministic(imdb_root):
    a = imdb.read(SourceFiles([imdb_root]), IMDB_CFG)
    b = imdb.read(SourceFiles([imdb_root]), IMDB_CFG)
    assert {s: [d.id for d in a[s]] for s in a} == {s: [d.id for d in b[s]] for s in b}


def test_imdb_word_count_counts_only_tokens_with_a_letter_or_digit():
    assert imdb._word_count(["Wow", "!!!", "...", "(", "really", ")", "--", "ok", "?", "!", "5"]) == 4
    assert imdb._word_count([]) == 0


def test_imdb_reviews_in_numeric_id_order(imdb_root):
    reviews = imdb._reviews(SourceFiles([imdb_root]), "train")
    assert [r[0] for r in reviews] == [
        "train/neg/1",
        "train/neg/4",
        "train/neg/5",
        "train/neg/6",
        "train/pos/0",
        "train/pos/2",
        "train/pos/3",
        "train/pos/10",
    ]
    assert [r[2] for r in reviews[:4]] == [1, 2, 3, 4]


def test_imdb_ratings_label_mapping(tmp_path):
    ratings = {"neg": [1, 2, 3, 4], "pos": [7, 8, 9, 10]}
    for split in ("train", "test"):
        for polarity, values in ratings.items():
            for i, rating in enumerate(values):
                _write(tmp_path, f"aclImdb/{split}/{polarity}/{i}_{rating}.txt", f"Review {rating} stars.")
    splits = imdb.read_ratings(SourceFiles([tmp_path]), {"dev_fraction": 0.1, "test_fraction": 0.1, "split_seed": 5})
    docs = [d for s in ("train", "dev", "test") for d in splits[s]]
    assert len(docs) == 16
    by_rating = {d.tokens[1]: d.label for d in docs}  # "Review <r> stars ."
    assert by_rating == {"1": 0, "2": 1, "3": 2, "4": 3, "7": 4, "8": 5, "9": 6, "10": 7}
    assert all(d.tokens == ["Review", d.tokens[1], "stars", "."] for d in docs)


def test_imdb_ratings_split_sizes(tmp_path):
    for i in range(10):
        _write(tmp_path, f"aclImdb/train/neg/{i}_1.txt", "Bad.")
    _write(tmp_path, "aclImdb/test/neg/0_2.txt", "Meh.")
    for split in ("train", "test"):
        _write(tmp_path, f"aclImdb/{split}/pos/0_8.txt", "Good.")
    splits = imdb.read_ratings(SourceFiles([tmp_path]), {"dev_fraction": 0.1, "test_fraction": 0.1, "split_seed": 5})
    # class 0 has 10 reviews: test round(1.0) = 1, then dev round(9 * 0.1 / 0.9) = 1, train 8
    assert sum(d.label == 0 for d in splits["test"]) == 1
    assert sum(d.label == 0 for d in splits["dev"]) == 1
    assert sum(d.label == 0 for d in splits["train"]) == 8


def test_imdb_missing_split_folder_and_bad_file_name(tmp_path):
    _write(tmp_path, "aclImdb/train/pos/0_9.txt", "Good.")
    with pytest.raises(FileNotFoundError, match="aclImdb/train/neg"):
        imdb.read(SourceFiles([tmp_path]), IMDB_CFG)
    _write(tmp_path, "aclImdb/train/neg/review.txt", "Bad.")
    with pytest.raises(ValueError, match="<id>_<rating>"):
        imdb.read(SourceFiles([tmp_path]), IMDB_CFG)


# --------------------------------------------------------------------------------------------------
# 20 Newsgroups

POST = (
    "From: joe@y.com (Joe)\n"
    "Subject: Re: game\n"
    "Lines: 9\n"
    "\n"
    "In article <123@x.com>, joe@y.com writes:\n"
    "> The Jays will win.\n"
    "| also quoted\n"
    "I think the Red Sox win.\n"
    "Good game.\n"
    "\n"
    "--\n"
    "Joe Fan, Boston\n"
)


def test_newsgroups_clean_post_like_scikit_learn():
    after_header = newsgroups.strip_header(POST)
    assert after_header.startswith("In article <123@x.com>")
    after_footer = newsgroups.strip_footer(after_header)
    assert after_footer == (
        "In article <123@x.com>, joe@y.com writes:\n> The Jays will win.\n| also quoted\n"
        "I think the Red Sox win.\nGood game.\n"
    )
    assert newsgroups.strip_quoting(after_footer) == "I think the Red Sox win.\nGood game.\n"
    assert newsgroups.clean_post(POST.encode("latin-1")) == "I think the Red Sox win.\nGood game.\n"


def test_newsgroups_helpers_edge_cases():
    assert newsgroups.strip_header("only: headers\nno: body\n") == ""
    # scikit-learn's footer rule cuts at the last blank or dashes line, signature or not
    assert newsgroups.strip_footer("Para one.\n\nPara two.") == "Para one."
    assert newsgroups.strip_footer("no footer here\nat all") == "no footer here\nat all"
    assert newsgroups.strip_footer("\n--\nsig only") == "\n--\nsig only"  # the cut would be at line 0: kept
    quoting = "he said: yes\nJohn wrote: x\nhe writes in x\nkeep me\n  > indented kept\nQuoted from y"
    assert newsgroups.strip_quoting(quoting) == "keep me\n  > indented kept"
    assert newsgroups.clean_post(b"H: x\n\ncaf\xe9 ol\xe9") == "caf\u00e9 ol\u00e9"  # latin-1


def _post(body, n=0):
    return f"From: u{n}@x.org\nSubject: s\n\n{body}\n"


@pytest.fixture
def news_root(tmp_path):
    for split, start in (("train", 100), ("test", 200)):
        for group in ("rec.sport.baseball", "rec.sport.hockey", "sci.space"):
            for i in range(5):
                _write(tmp_path, f"20news-bydate-{split}/{group}/{start + i}", _post(f"Post {i} about {group}.", i))
        # empty after cleaning: dropped
        _write(tmp_path, f"20news-bydate-{split}/rec.sport.hockey/{start + 50}", _post("> only a quote"))
    return tmp_path


def test_newsgroups_read_binary(news_root):
    cfg = {"test_fraction": 0.2, "dev_fraction": 0.2, "split_seed": 13478}
    splits = newsgroups.read_binary(SourceFiles([news_root]), cfg)
    docs = [d for s in splits.values() for d in s]
    # 10 non-empty posts per group (train + test pooled); sci.space and the empty posts dropped
    assert len(docs) == 20
    assert all(d.tokens for d in docs)
    assert not any("space" in d.id for d in docs)
    assert not any(d.id.endswith(("/150", "/250")) for d in docs)
    # test = round(0.2 * 10) = 2 per label; dev = round(0.2 * 8) = 2 per label; train 6
    assert _labels(splits["test"]) == {0: 2, 1: 2}
    assert _labels(splits["dev"]) == {0: 2, 1: 2}
    assert _labels(splits["train"]) == {0: 6, 1: 6}
    assert all(d.label == (0 if "/rec.sport.baseball/" in d.id else 1) for d in docs)
    sample = next(d for d in docs if d.id == "train/rec.sport.hockey/103")
    assert sample.tokens == ["Post", "3", "about", "rec.sport.hockey", "."]


def test_newsgroups_posts_sorted_by_group_then_numeric_id(tmp_path):
    for name in ("9", "10", "100"):
        _write(tmp_path, f"20news-bydate-train/b.group/{name}", _post("x"))
    _write(tmp_path, "20news-bydate-train/a.group/50", _post("y"))
    posts = newsgroups._posts(SourceFiles([tmp_path]), "train")
    assert [p[0] for p in posts] == ["train/a.group/50", "train/b.group/9", "train/b.group/10", "train/b.group/100"]


def test_newsgroups_read_all_groups(tmp_path):
    for split in ("train", "test"):
        for group in ("talk.z", "alt.a", "comp.m"):
            for i in range(4):
                _write(tmp_path, f"20news-bydate-{split}/{group}/{i + 1}", _post(f"Text {i}"))
    splits = newsgroups.read_all_groups(SourceFiles([tmp_path]), {"dev_fraction": 0.5, "split_seed": 5})
    label_of = {"alt.a": 0, "comp.m": 1, "talk.z": 2}
    for docs in splits.values():
        assert all(d.label == label_of[d.id.split("/")[1]] for d in docs)
    assert _labels(splits["dev"]) == {0: 2, 1: 2, 2: 2}
    assert _labels(splits["train"]) == {0: 2, 1: 2, 2: 2}
    assert len(splits["test"]) == 12 and all(d.id.startswith("test/") for d in splits["test"])


def test_newsgroups_missing_split(tmp_path):
    _write(tmp_path, "20news-bydate-train/alt.a/1", _post("x"))
    with pytest.raises(FileNotFoundError, match="20news-bydate-test"):
        newsgroups.read_all_groups(SourceFiles([tmp_path]), {"dev_fraction": 0.5, "split_seed": 5})


# --------------------------------------------------------------------------------------------------
# AG News


def _agnews_csv(root, name, rows):
    path = root / name
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return path


def _agnews_rows(n_per_class, prefix):
    return [
        (str(c), f"{prefix} title {c}-{i}", f"{prefix} text {c} {i}.") for i in range(n_per_class) for c in (1, 2, 3, 4)
    ]


def test_agnews_read(tmp_path):
    _agnews_csv(tmp_path, "train.csv", _agnews_rows(10, "Train"))
    _agnews_csv(tmp_path, "test.csv", _agnews_rows(2, "Test"))
    splits = agnews.read(SourceFiles([tmp_path]), {"dev_fraction": 0.2, "split_seed": 16377})
    # classes 1 (World) -> 0 and 3 (Business) -> 1 only; dev = round(0.2 * 10) = 2 per label
    assert _labels(splits["train"]) == {0: 8, 1: 8}
    assert _labels(splits["dev"]) == {0: 2, 1: 2}
    assert [(d.id, d.label) for d in splits["test"]] == [
        ("test-000001", 0),
        ("test-000003", 1),
        ("test-000005", 0),
        ("test-000007", 1),
    ]
    # text = the description column only
    assert splits["test"][0].tokens == ["Test", "text", "1", "0", "."]
    assert splits["test"][1].tokens == ["Test", "text", "3", "0", "."]


def test_agnews_substitute_train_file(tmp_path):
    _agnews_csv(tmp_path, "train.first581rows.csv", _agnews_rows(5, "Sub"))
    _agnews_csv(tmp_path, "test.csv", _agnews_rows(1, "Test"))
    splits = agnews.read(SourceFiles([tmp_path]), {"dev_fraction": 0.2, "split_seed": 16377})
    assert _labels(splits["train"] + splits["dev"]) == {0: 5, 1: 5}
    assert all(d.tokens[0] == "Sub" for d in splits["train"] + splits["dev"])


def test_agnews_wrong_column_count(tmp_path):
    path = tmp_path / "test.csv"
    path.write_text('"1","t","d"\n"3","only two"\n', encoding="utf-8")
    _agnews_csv(tmp_path, "train.csv", _agnews_rows(5, "Train"))
    with pytest.raises(ValueError, match=r"test\.csv:2: expected 3 columns"):
        agnews.read(SourceFiles([tmp_path]), {"dev_fraction": 0.2, "split_seed": 16377})


# --------------------------------------------------------------------------------------------------
# bAbI

BABI = (
    "1 Mary moved to the bathroom.\n"
    "2 John went to the hallway.\n"
    "3 Where is Mary? \tbathroom\t1\n"
    "4 Daniel went back to the hallway.\n"
    "5 Sandra moved to the garden.\n"
    "6 Where is Daniel? \thallway\t4\n"
    "\n"
    "1 John moved to the kitchen.\n"
    "2 Where is John? \tKitchen\t1\n"
)


def test_babi_parse_task_file(tmp_path):
    path = _write(tmp_path, "qa1_single-supporting-fact_train.txt", BABI)
    docs = babi.parse_task_file(path, "train")
    assert [d.id for d in docs] == ["train-000003", "train-000006", "train-000009"]
    first, second, third = docs
    assert first.tokens == ["Mary", "moved", "to", "the", "bathroom", ".", "John", "went", "to", "the", "hallway"]
    assert first.sentences == [(0, 5), (6, 11)]
    assert first.question == ["Where", "is", "Mary", "?"]
    assert first.label == "bathroom"
    # questions are not statements: the second passage has the four statements so far
    assert second.tokens == first.tokens + [
        ".",
        "Daniel",
        "went",
        "back",
        "to",
        "the",
        "hallway",
        ".",
        "Sandra",
        "moved",
        "to",
        "the",
        "garden",
    ]
    assert second.sentences == [(0, 5), (6, 11), (12, 18), (19, 24)]
    assert second.label == "hallway"
    # a line with id 1 starts a new story; the answer is lower-cased
    assert third.tokens == ["John", "moved", "to", "the", "kitchen"]
    assert third.sentences == [(0, 5)]
    assert third.label == "kitchen"
    assert third.question == ["Where", "is", "John", "?"]


def test_babi_read(tmp_path):
    stories = "".join(f"1 Mary went to room{i}.\n2 Where is Mary? \troom{i}\t1\n" for i in range(10))
    _write(tmp_path, "en-10k/qa2_two-supporting-facts_train.txt", stories)
    _write(tmp_path, "en-10k/qa2_two-supporting-facts_test.txt", BABI)
    splits = babi.read(SourceFiles([tmp_path]), {"name": "babi2", "dev_fraction": 0.3, "split_seed": 16377})
    assert len(splits["dev"]) == 3 and len(splits["train"]) == 7  # not stratified: round(0.3 * 10)
    assert [d.label for d in splits["test"]] == ["bathroom", "hallway", "kitchen"]
    assert sorted(d.label for d in splits["train"] + splits["dev"]) == sorted(f"room{i}" for i in range(10))
    # J&W's Table 2 models: trained on every training question; the same dev questions report
    whole = babi.read(
        SourceFiles([tmp_path]), {"name": "babi2", "dev_fraction": 0.3, "split_seed": 16377, "train_includes_dev": True}
    )
    assert [d.id for d in whole["dev"]] == [d.id for d in splits["dev"]]
    assert [d.id for d in whole["train"]] == sorted(d.id for d in splits["train"] + splits["dev"])


@pytest.mark.parametrize(
    "text, where",
    [
        ("1 Mary moved.\nx Where is Mary?\tMary\t1\n", r":2: expected '<id> <text>'"),
        ("1 Mary moved.\n2 Where is Mary?\tMary\n", r":2: expected 'question\?<TAB>answer<TAB>support'"),
    ],
)
def test_babi_malformed_line(tmp_path, text, where):
    path = _write(tmp_path, "qa1_single-supporting-fact_train.txt", text)
    with pytest.raises(ValueError, match=where):
        babi.parse_task_file(path, "train")


# --------------------------------------------------------------------------------------------------
# SNLI


def _snli_line(gold, premise, hypothesis):
    return json.dumps({"gold_label": gold, "sentence1": premise, "sentence2": hypothesis, "pairID": "x"}) + "\n"


SNLI_PAIRS = [
    ("neutral", "Two women are embracing.", "The sisters are hugging."),
    ("-", "A man sleeps.", "Nobody sleeps."),
    ("entailment", "A dog runs.", "An animal moves."),
    ("contradiction", "A cat sits.", "A cat runs."),
]


def test_snli_full_splits(tmp_path):
    for split in ("train", "dev", "test"):
        _write(tmp_path, f"snli_1.0/snli_1.0_{split}.jsonl", "".join(_snli_line(*p) for p in SNLI_PAIRS) + "\n")
    splits = snli.read(SourceFiles([tmp_path]), {"substitute_dev_fraction": 0.15, "split_seed": 16377})
    for split in ("train", "dev", "test"):
        docs = splits[split]
        assert [d.id for d in docs] == [f"{split}-000001", f"{split}-000003", f"{split}-000004"]
        assert [d.label for d in docs] == [2, 1, 0]  # neutral, entailment, contradiction; "-" dropped
    first = splits["train"][0]
    assert first.tokens == ["Two", "women", "are", "embracing", "."]
    assert first.question == ["The", "sisters", "are", "hugging", "."]
    assert first.sentences == [(0, 5)]


def test_snli_label_ids_sorted_by_name():
    assert snli.LABELS == {"contradiction": 0, "entailment": 1, "neutral": 2}


def test_snli_without_a_training_file_carves_train_and_dev_from_dev(tmp_path):
    dev_lines = "".join(
        _snli_line(gold, f"Premise {i}.", f"Hypothesis {i}.")
        for i in range(20)
        for gold in ("entailment", "neutral", "contradiction", "-")
    )
    _write(tmp_path, "snli_1.0_dev.jsonl", dev_lines)
    _write(tmp_path, "snli_1.0_test.jsonl", "".join(_snli_line(*p) for p in SNLI_PAIRS))
    splits = snli.read(SourceFiles([tmp_path]), {"substitute_dev_fraction": 0.15, "split_seed": 16377})
    # 20 per class from the dev file; dev = round(0.15 * 20) = 3 per class, the rest is train
    assert _labels(splits["dev"]) == {0: 3, 1: 3, 2: 3}
    assert _labels(splits["train"]) == {0: 17, 1: 17, 2: 17}
    assert all(d.id.startswith("dev-") for d in splits["train"] + splits["dev"])
    assert not {d.id for d in splits["train"]} & {d.id for d in splits["dev"]}
    assert [d.label for d in splits["test"]] == [2, 1, 0] and all(d.id.startswith("test-") for d in splits["test"])


def test_snli_unknown_label_and_bad_record(tmp_path):
    path = _write(tmp_path, "a.jsonl", _snli_line("entailment", "A.", "B.") + _snli_line("maybe", "A.", "B."))
    with pytest.raises(ValueError, match=r"a\.jsonl:2: unknown gold_label 'maybe'"):
        snli._pairs(path, "dev")
    path = _write(tmp_path, "b.jsonl", json.dumps({"gold_label": "neutral", "sentence1": "A."}) + "\n")
    with pytest.raises(ValueError, match=r"b\.jsonl:1: expected a JSON record"):
        snli._pairs(path, "dev")
    path = _write(tmp_path, "c.jsonl", "not json\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:1"):
        snli._pairs(path, "dev")
