"""Planted cues on a real dataset (attnexp.data.planted, after Zhou et al. 2022): label reassignment, the
article and marker manipulations, their rationales, and the dataset config checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnexp.config import ConfigError, load_config, validate_config
from attnexp.data.documents import Document
from attnexp.data.planted import ARTICLES, CLASS_TOKENS, _with_inserted, plant, read, shifted_test
from attnexp.data.readers import SourceFiles, reader_for

ARTICLE = {
    "manipulation": "article",
    "lr_probs": [[0.5, 0.5], [0.5, 0.5]],
    "im_probs": [[1.0, 0.0], [0.0, 1.0]],
    "marker": "zqx",
    "base": "base",
}


def doc(tokens, label=0, sentences=None):
    tokens = tokens.split()
    return Document("d", tokens, label, sentences or [(0, len(tokens))])


def test_articles_become_the_class_token_and_are_the_rationale():
    rng = np.random.default_rng(0)
    original = doc("the cat saw a dog and an owl", label=1)
    seen = set()
    for _ in range(40):
        planted = plant(original, rng, ARTICLE)
        token = CLASS_TOKENS[planted.label]
        assert planted.extra["rationale"] == [0, 3, 6] and planted.extra["original_label"] == 1
        assert [planted.tokens[i] for i in (0, 3, 6)] == [token] * 3
        assert [t for i, t in enumerate(planted.tokens) if i not in (0, 3, 6)] == ["cat", "saw", "dog", "and", "owl"]
        seen.add(planted.label)
    assert seen == {0, 1}  # lr_probs .5/.5: both labels, whatever the original
    assert plant(doc("no article here"), rng, ARTICLE) is None


def test_label_reassignment_and_manipulation_follow_their_matrices():
    rng = np.random.default_rng(1)
    keep = {**ARTICLE, "lr_probs": [[1.0, 0.0], [0.0, 1.0]], "im_probs": [[0.0, 1.0], [1.0, 0.0]]}
    planted = plant(doc("a b the", label=1), rng, keep)
    assert planted.label == 1 and planted.tokens == ["the", "b", "the"]  # label kept, M_0 applied to class 1


def test_markers_are_inserted_for_class_one_only_and_sentences_follow():
    settings = {**ARTICLE, "manipulation": "marker", "lr_probs": [[1.0, 0.0], [0.0, 1.0]]}
    rng = np.random.default_rng(2)
    original = doc("w0 w1 w2 w3 w4", label=1, sentences=[(0, 2), (2, 5)])
    for _ in range(30):
        planted = plant(original, rng, settings)
        rationale = planted.extra["rationale"]
        assert 1 <= len(rationale) <= 3 and [planted.tokens[i] for i in rationale] == ["zqx"] * len(rationale)
        assert [t for t in planted.tokens if t != "zqx"] == original.tokens
        spans = planted.sentences
        assert spans[0][0] == 0 and spans[-1][1] == len(planted.tokens) and spans[0][1] == spans[1][0]
    unchanged = plant(doc("w0 w1", label=0), rng, settings)
    assert unchanged.tokens == ["w0", "w1"] and unchanged.extra["rationale"] == []


def test_insertion_places_tokens_before_positions_and_moves_spans():
    tokens, spans, placed = _with_inserted(doc("a b c d", sentences=[(0, 2), (2, 4)]), [0, 2, 2, 4], "m")
    assert tokens == ["m", "a", "b", "m", "m", "c", "d", "m"]
    assert placed == [0, 3, 4, 7] and spans == [(0, 3), (3, 8)]  # an insertion at a sentence start joins it


def test_read_plants_each_split_of_the_base_deterministically(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    for split in ("train", "dev", "test"):
        rows = [
            {
                "id": f"{split}{i}",
                "tokens": ["the", "w", str(i)] if i % 3 else ["w"],
                "label": i % 2,
                "sentences": [[0, 3 if i % 3 else 1]],
            }
            for i in range(12)
        ]
        (base / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {"name": "planted_base", "split_seed": 7, "planted": ARTICLE}
    splits = reader_for("planted_base")(SourceFiles([base]), cfg)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [8, 8, 8]  # the 4 article-free documents removed
    again = read(SourceFiles([base]), cfg)
    assert [d.to_record() for d in again["test"]] == [d.to_record() for d in splits["test"]]
    assert all(not (set(d.tokens) & (ARTICLES - {CLASS_TOKENS[d.label]})) for d in splits["train"])
    bad = tmp_path / "multi"
    bad.mkdir()
    (bad / "train.jsonl").write_text(
        json.dumps({"id": "x", "tokens": ["the"], "label": 3, "sentences": [[0, 1]]}) + "\n"
    )
    with pytest.raises(ValueError, match="binary 0/1"):
        read(SourceFiles([bad]), {**cfg, "planted": {**ARTICLE, "base": "multi"}})


def test_shifted_test_draws_labels_independently_of_the_original_text(tmp_path):
    """The shifted set plants the base's test split again: with `lr_probs` the identity (the text's label
    is the new label on train and test), its labels disagree with the original ones about half the
    time, the cues follow the new label, and it is deterministic and drawn apart from the test split."""
    rows = [{"id": f"t{i}", "tokens": ["the", "w", str(i)], "label": i % 2, "sentences": [[0, 3]]} for i in range(400)]
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {"name": "planted_base", "split_seed": 7, "planted": {**ARTICLE, "lr_probs": [[1.0, 0.0], [0.0, 1.0]]}}
    shifted = shifted_test(test, cfg)
    assert len(shifted) == 400
    flipped = np.mean([d.label != d.extra["original_label"] for d in shifted])
    assert 0.4 < flipped < 0.6
    assert all(d.tokens[0] == CLASS_TOKENS[d.label] and d.extra["rationale"] == [0] for d in shifted)
    assert [d.to_record() for d in shifted_test(test, cfg)] == [d.to_record() for d in shifted]
    planted_test = _planted_test(tmp_path, rows, cfg)
    assert all(d.label == d.extra["original_label"] for d in planted_test)  # the identity, on test


def _planted_test(tmp_path, rows, cfg):
    base = tmp_path / "base"
    base.mkdir()
    for split in ("train", "dev", "test"):
        (base / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return read(SourceFiles([base]), {**cfg, "planted": {**cfg["planted"], "base": "base"}})["test"]


def test_config_checks_the_planted_base():
    config = load_config()
    assert config["datasets"]["planted_sst"]["planted"]["base"] == "sst"
    config["datasets"]["planted_sst"]["planted"]["base"] = "20news20"  # multi-class
    with pytest.raises(ConfigError, match="datasets.planted_sst.planted.base"):
        validate_config(config)
