"""The generated `synthetic` task (attnexp.data.synthetic), with the generator
block of the real config.yaml."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from attnexp.data.synthetic import generate, read

CONFIG = Path(__file__).resolve().parents[2] / "config.yaml"


@pytest.fixture(scope="module")
def g():
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["datasets"]["synthetic"]["generator"]


@pytest.fixture(scope="module")
def splits(g):
    return generate(g, 2024)


def test_config_generator_block_is_the_spec(g):
    assert g == {
        "background_types": 2000,
        "zipf_exponent": 1.1,
        "min_length": 8,
        "max_length": 40,
        "max_cues": 3,
        "cue_types": 10,
        "distractor_prob": 0.3,
        "min_sentence": 5,
        "max_sentence": 12,
        "sizes": {"train": 4000, "dev": 500, "test": 500},
    }


def test_sizes_and_ids(splits):
    assert list(splits) == ["train", "dev", "test"]
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [4000, 500, 500]
    assert splits["train"][0].id == "train-00000"
    assert splits["test"][499].id == "test-00499"
    assert len({d.id for s in splits.values() for d in s}) == 5000


def _records(split_docs):
    return [d.to_record() for d in split_docs]


def test_deterministic_for_a_seed(g, splits):
    again = generate(g, 2024)
    for split in splits:
        assert _records(again[split]) == _records(splits[split])


def test_different_seed_gives_different_data(g, splits):
    other = generate(g, 2025)
    for split in splits:
        assert _records(other[split]) != _records(splits[split])


def test_each_split_has_its_own_stream(g):
    # seed + offset per split: train of seed s+1 is the dev stream of seed s (so sizes are independent)
    a, b = generate(g, 10), generate({**g, "sizes": {"train": 500, "dev": 500, "test": 500}}, 9)
    assert [d.tokens for d in a["train"][:500]] == [d.tokens for d in b["dev"]]


def test_read_uses_generator_and_split_seed(g):
    small = {**g, "sizes": {"train": 3, "dev": 2, "test": 1}}
    out = read(None, {"generator": small, "split_seed": 5})
    assert [d.to_record() for d in out["train"]] == [d.to_record() for d in generate(small, 5)["train"]]


def _cues(tokens, prefix):
    return [i for i, t in enumerate(tokens) if t.startswith(prefix)]


def test_every_instance_is_consistent(g, splits):
    cue_names = {f"{p}{i}" for p in ("pos", "neg") for i in range(g["cue_types"])}
    for docs in splits.values():
        for d in docs:
            pos, neg = _cues(d.tokens, "pos"), _cues(d.tokens, "neg")
            assert d.label in (0, 1)
            own, other = (pos, neg) if d.label == 1 else (neg, pos)
            # the label is the class with more cues
            assert len(own) > len(other)
            rationale, distractors = d.extra["rationale"], d.extra["distractors"]
            assert rationale == own and distractors == other
            assert rationale == sorted(rationale) and distractors == sorted(distractors)
            assert len(distractors) < len(rationale)
            assert 1 <= len(rationale) <= g["max_cues"]
            assert all(d.tokens[i] in cue_names for i in rationale + distractors)
            background = [t for t in d.tokens if t not in cue_names]
            assert len(background) == len(d.tokens) - len(rationale) - len(distractors)
            assert g["min_length"] <= len(background) <= g["max_length"]
            assert all(t[0] == "w" and len(t) == 5 and 0 <= int(t[1:]) < g["background_types"] for t in background)


def test_sentence_spans_tile_the_instance(g, splits):
    for docs in splits.values():
        for d in docs:
            spans = d.sentences
            assert spans[0][0] == 0 and spans[-1][1] == len(d.tokens)
            assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
            lengths = [b - a for a, b in spans]
            assert all(1 <= n <= g["max_sentence"] for n in lengths)
            assert all(n >= g["min_sentence"] for n in lengths[:-1])  # only the last may be cut short


def test_labels_roughly_balanced(splits):
    share = np.mean([d.label for d in splits["train"]])
    assert 0.4 <= share <= 0.6


def test_distractor_share_and_cue_counts(g, splits):
    train = splits["train"]
    with_distractors = np.mean([bool(d.extra["distractors"]) for d in train])
    # P(distractors) = 0.3 * P(k_y >= 2) = 0.3 * 2/3 = 0.2
    assert 0.15 <= with_distractors <= 0.25
    k_y = np.bincount([len(d.extra["rationale"]) for d in train], minlength=4)[1:]
    assert k_y.sum() == 4000 and all(1100 <= k <= 1570 for k in k_y)  # Uniform{1..3}: ~1,333 each


def test_background_is_zipfian(splits):
    from collections import Counter

    counts = Counter(t for d in splits["train"] for t in d.tokens if t.startswith("w"))
    # Zipf(1.1) over 2,000 types: w0000 is the most frequent type, about twice as frequent as w0001
    assert counts.most_common(1)[0][0] == "w0000"
    assert 1.8 <= counts["w0000"] / counts["w0001"] <= 2.5


def test_the_shifted_test_set_holds_cues_of_both_classes_in_every_instance(g, splits):
    from attnexp.data.synthetic import shifted_test

    shifted = shifted_test(g, 2024)
    assert len(shifted) == g["sizes"]["test"] and shifted[0].id == "shifted-00000"
    for doc in shifted:
        own, other = ("pos", "neg") if doc.label == 1 else ("neg", "pos")
        assert all(doc.tokens[p].startswith(own) for p in doc.extra["rationale"])
        assert all(doc.tokens[p].startswith(other) for p in doc.extra["distractors"])
        assert len(doc.extra["rationale"]) > len(doc.extra["distractors"]) >= 1  # both present, the label's more
    assert 0.4 < np.mean([d.label for d in shifted]) < 0.6
    # the plain test split mostly has one class's cues: presence alone decides it there
    assert np.mean([not d.extra["distractors"] for d in splits["test"]]) > 0.7
    assert [d.to_record() for d in shifted_test(g, 2024)] == [d.to_record() for d in shifted]  # deterministic
    with pytest.raises(ValueError, match="max_cues >= 2"):
        shifted_test({**g, "max_cues": 1}, 2024)
    with pytest.raises(ValueError, match="binary task"):
        shifted_test({**g, "question": True}, 2024)
