"""The rule-based tokenizer, sentence splitter and normalisation (attnexp.data.tokenize), on hand cases,
plus one mirror test that reproduces Jain & Wallace's own `sst_dataset.csv` from the SST trees."""

from __future__ import annotations

import csv
import os
import zipfile
from pathlib import Path

import pytest

from attnexp.data.tokenize import (
    DIGIT_TOKEN,
    normalise,
    segment_sentences,
    split_sentences,
    tokenize,
    tokenize_document,
)

# --------------------------------------------------------------------------------------------------
# tokenize


@pytest.mark.parametrize(
    "text, expected",
    [
        # clitics, as spaCy splits them
        ("don't", ["do", "n't"]),
        ("can't", ["ca", "n't"]),
        ("Shouldn't", ["Should", "n't"]),
        ("DON'T", ["DO", "N'T"]),
        ("it's", ["it", "'s"]),
        ("it’s", ["it", "’s"]),
        ("I'm", ["I", "'m"]),
        ("they're", ["they", "'re"]),
        ("we'll", ["we", "'ll"]),
        ("you've", ["you", "'ve"]),
        ("he'd", ["he", "'d"]),
        ("'s", ["'s"]),
        ("n't", ["n't"]),
        # spaCy special cases
        ("gonna", ["gon", "na"]),
        ("Gotta", ["Got", "ta"]),
        ("cannot", ["can", "not"]),
        # infixes between letters
        ("co-writer", ["co", "-", "writer"]),
        ("rock--roll", ["rock", "--", "roll"]),
        ("and/or", ["and", "/", "or"]),
        ("3-D", ["3", "-", "D"]),
        ("ends.Next", ["ends", ".", "Next"]),
        # number ranges are not split
        ("1-2", ["1-2"]),
        # number + unit split, ordinals and decades whole
        ("28k", ["28", "k"]),
        ("10km", ["10", "km"]),
        ("100mph", ["100", "mph"]),
        ("21st", ["21st"]),
        ("1990s", ["1990s"]),
        # URLs, e-mails and numbers whole
        ("http://example.com/a.b?x=1", ["http://example.com/a.b?x=1"]),
        ("www.foo.org", ["www.foo.org"]),
        ("john.doe@mail.com", ["john.doe@mail.com"]),
        ("5.50", ["5.50"]),
        ("1,000", ["1,000"]),
        ("12:30", ["12:30"]),
        ("-5", ["-5"]),
        ("+3.2", ["+3.2"]),
        # abbreviations and initials keep their period
        ("Mr.", ["Mr."]),
        ("U.S.", ["U.S."]),
        ("e.g.", ["e.g."]),
        ("J.", ["J."]),
        # prefix / suffix punctuation, peeled repeatedly
        ("end.", ["end", "."]),
        ("5.50.", ["5.50", "."]),
        ("$5.50", ["$", "5.50"]),
        ("(5.50)", ["(", "5.50", ")"]),
        ("50%", ["50", "%"]),
        ("#1", ["#", "1"]),
        ("wow!!", ["wow", "!", "!"]),
        ("word...", ["word", "..."]),
        ("...and", ["...", "and"]),
        ("(Mr.", ["(", "Mr."]),
        ('"(Hello),"', ['"', "(", "Hello", ")", ",", '"']),
        ("'quoted'", ["'", "quoted", "'"]),
        ('Hello!"', ["Hello", "!", '"']),
        ("...", ["..."]),
        ('"', ['"']),
    ],
)
def test_tokenize_single_chunks(text, expected):
    assert tokenize(text) == expected


def test_tokenize_sentence_keeps_case_and_splits_on_whitespace():
    text = "Mr. Smith can't pay $5.50 for the co-writer's \"21st-century\" 1990s film, gonna cost 28k."
    assert tokenize(text) == [
        "Mr.",
        "Smith",
        "ca",
        "n't",
        "pay",
        "$",
        "5.50",
        "for",
        "the",
        "co",
        "-",
        "writer",
        "'s",
        '"',
        "21st",
        "-",
        "century",
        '"',
        "1990s",
        "film",
        ",",
        "gon",
        "na",
        "cost",
        "28",
        "k",
        ".",
    ]


def test_tokenize_empty_and_whitespace():
    assert tokenize("") == []
    assert tokenize(" \t\n ") == []
    assert tokenize("a\tb\nc") == ["a", "b", "c"]


def test_tokenize_url_and_email_at_sentence_end_split_off_the_period():
    assert tokenize("Visit http://a.com.") == ["Visit", "http://a.com", "."]
    assert tokenize("Mail a@b.com.") == ["Mail", "a@b.com", "."]
    assert tokenize("(http://a.com)") == ["(", "http://a.com", ")"]
    assert tokenize("www.a.com,") == ["www.a.com", ","]


def test_tokenize_sentence_final_no_splits_the_period():
    assert tokenize("The answer is no.") == ["The", "answer", "is", "no", "."]


# --------------------------------------------------------------------------------------------------
# sentences


def test_split_sentences_basic():
    tokens = tokenize("Hello world. This is it.")
    assert tokens == ["Hello", "world", ".", "This", "is", "it", "."]
    assert split_sentences(tokens) == [(0, 3), (3, 7)]


def test_split_sentences_closing_quote_stays_with_sentence():
    tokens = tokenize('He said "Stop." Then left.')
    assert tokens == ["He", "said", '"', "Stop", ".", '"', "Then", "left", "."]
    assert split_sentences(tokens) == [(0, 6), (6, 9)]


def test_split_sentences_lower_case_continuation_not_split():
    tokens = tokenize("It was fine. and then more. really? yes.")
    assert len(tokens) == 12
    assert split_sentences(tokens) == [(0, 12)]


def test_split_sentences_digit_and_quote_starts_split():
    assert split_sentences(tokenize("I saw 3 cats. 2 dogs.")) == [(0, 5), (5, 8)]
    assert split_sentences(tokenize("Fine. (Yes) he said.")) == [(0, 2), (2, 8)]


def test_split_sentences_straight_opening_quote_starts_next_sentence():
    # A bare straight quote is ambiguous; tokenize_document knows it was peeled off the front.
    tokens, spans = tokenize_document('Fine. "Yes," he said. He said "no." Then left.')
    assert tokens[:9] == ["Fine", ".", '"', "Yes", ",", '"', "he", "said", "."]
    assert spans == [(0, 2), (2, 9), (9, 15), (15, 18)]  # the closing quote of "no." stays with it


def test_split_sentences_runs_of_end_marks():
    tokens = tokenize("Wow?! Yes... Done")
    assert tokens == ["Wow", "?", "!", "Yes", "...", "Done"]
    assert split_sentences(tokens) == [(0, 3), (3, 5), (5, 6)]


def test_split_sentences_abbreviation_is_not_an_end():
    tokens = tokenize("Mr. Smith arrived. He sat.")
    assert split_sentences(tokens) == [(0, 4), (4, 7)]


def test_split_sentences_no_end_mark_and_empty():
    assert split_sentences(["no", "end", "mark"]) == [(0, 3)]
    assert split_sentences([]) == []


def test_tokenize_document_blank_line_is_hard_boundary():
    tokens, spans = tokenize_document("Oh.\n\nnew para. still same\n \nlast one")
    assert tokens == ["Oh", ".", "new", "para", ".", "still", "same", "last", "one"]
    # "new para. still same" is one sentence (lower-case continuation); blank lines always split,
    # including one that holds only spaces
    assert spans == [(0, 2), (2, 7), (7, 9)]


def test_tokenize_document_single_newline_is_not_a_boundary():
    tokens, spans = tokenize_document("one line\ncontinues here")
    assert tokens == ["one", "line", "continues", "here"]
    assert spans == [(0, 4)]


def test_tokenize_document_spans_tile_tokens():
    text = "First one. Second one!\n\nThird (really). Fourth?\n\n\nFifth"
    tokens, spans = tokenize_document(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(tokens)
    assert all(a < b for a, b in spans)
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    assert len(spans) == 5


# --------------------------------------------------------------------------------------------------
# normalise


@pytest.mark.parametrize(
    "token, expected",
    [
        ("Hello", "hello"),
        ("ABC", "abc"),
        ("Straße", "straße"),
        ("1990s", DIGIT_TOKEN),
        ("5.50", DIGIT_TOKEN),
        ("abc3", DIGIT_TOKEN),
        ("28", DIGIT_TOKEN),
        ("qqq", "qqq"),
        ("<DE>", "<DE>"),
        ("<UNK>", "<UNK>"),
        ("<b>", "<b>"),
        ("n't", "n't"),
        (".", "."),
    ],
)
def test_normalise(token, expected):
    assert normalise(token) == expected


def test_digit_token_is_qqq():
    assert DIGIT_TOKEN == "qqq"


# --------------------------------------------------------------------------------------------------
# Jain & Wallace's own SST file, reproduced from the PTB trees (needs the offline mirror)

MIRROR = Path(os.environ.get("ATTNEXP_MIRROR", Path(__file__).resolve().parents[3] / "shared" / "datasets"))


@pytest.mark.mirror
def test_sst_reproduces_jain_wallace_csv(tmp_path):
    archive = MIRROR / "sst" / "trainDevTestTrees_PTB.zip"
    reference = MIRROR / "sst" / "jain_wallace_2019" / "sst_dataset.csv"
    if not archive.is_file() or not reference.is_file():
        pytest.skip(f"dataset mirror not found at {MIRROR}")
    from attnexp.data.readers import SourceFiles, sst

    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path)
    splits = sst.read(SourceFiles([tmp_path]), {})
    ours = [
        (" ".join(t.lower() for t in doc.tokens), str(doc.label), split)
        for split in ("train", "dev", "test")
        for doc in splits[split]
    ]
    with open(reference, encoding="utf-8", newline="") as f:
        theirs = [(r["text"], r["label"], r["exp_split"]) for r in csv.DictReader(f)]

    assert len(theirs) == 9613
    assert len(ours) == len(theirs)
    assert [(label, split) for _, label, split in ours] == [(label, split) for _, label, split in theirs]
    same_text = sum(a[0] == b[0] for a, b in zip(ours, theirs))
    assert same_text >= 9610, f"only {same_text} of {len(theirs)} texts match"


def test_segment_sentences_cuts_only_the_long_ones_into_fixed_lengths():
    # text without punctuation: one sentence of 12 tokens -> segments of 5, 5 and 2
    tokens, spans = tokenize_document("the plot was dull and the cast was bland and the end")
    assert spans == [(0, 12)] and segment_sentences(spans, 5) == [(0, 5), (5, 10), (10, 12)]
    assert segment_sentences([(0, 3), (3, 9), (9, 10)], 3) == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert segment_sentences([(0, 4)], 4) == [(0, 4)] and segment_sentences([], 4) == []
    with pytest.raises(ValueError, match="at least 1 token"):
        segment_sentences([(0, 4)], 0)
