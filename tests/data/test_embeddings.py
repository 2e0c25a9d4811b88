"""Embeddings: the D-EMB decision, pretrained-file reading and the matrix, on hand-made cases."""

import numpy as np
import pytest
import yaml

from attnexp.config import validate_config
from attnexp.data.embeddings import embedding_matrix, load_vectors, plan_embeddings, read_pretrained

CONFIG = validate_config(yaml.safe_load(open("config.yaml")))
EMB = {**CONFIG["embeddings"], "source": "auto"}  # the default is the GloVe stand-in (test_embeddings_glove.py)


def test_random_and_paper_word2vec_datasets():
    assert plan_embeddings(CONFIG["datasets"]["babi1"], EMB, None) is None
    plan = plan_embeddings(CONFIG["datasets"]["20news20"], EMB, None)
    assert plan["source"] == "word2vec" and plan["dim"] == 200 and plan["word2vec"]["epochs"] == 30  # S&S §3.2


def test_auto_falls_back_to_word2vec_local_and_says_why(tmp_path):
    plan = plan_embeddings(CONFIG["datasets"]["sst"], EMB, str(tmp_path), resources=str(tmp_path / "res"))
    assert plan["source"] == "word2vec_local" and plan["dim"] == 300 and "wiki.simple.vec" in plan["why"]


def test_auto_uses_pretrained_when_the_file_is_in_the_mirror(tmp_path):
    (tmp_path / "wiki.simple.vec").write_text("1 300\n")
    plan = plan_embeddings(CONFIG["datasets"]["sst"], EMB, str(tmp_path), resources=str(tmp_path / "res"))
    assert plan["kind"] == "pretrained" and plan["source"] == "fasttext_simple"


@pytest.mark.parametrize("choice, kind", [("pretrained", "pretrained"), ("word2vec_local", "word2vec")])
def test_explicit_choices_override_auto(tmp_path, choice, kind):
    plan = plan_embeddings(CONFIG["datasets"]["agnews"], {**EMB, "source": choice}, None, resources=str(tmp_path))
    assert plan["kind"] == kind


def test_read_pretrained_keeps_vocabulary_words_and_skips_the_fasttext_header(tmp_path):
    path = tmp_path / "v.vec"
    path.write_text("3 2\nthe 1 2\ncat 3 4\nthe 9 9\n")
    vectors = read_pretrained(path, ["<PAD>", "the", "dog"], dim=2)
    assert list(vectors) == ["the"] and vectors["the"].tolist() == [1.0, 2.0]  # first occurrence wins
    path.write_text("the 1 2 3\n")
    with pytest.raises(ValueError, match="expected 2 values"):
        read_pretrained(path, ["the"], dim=2)


def test_embedding_matrix_pad_zero_and_missing_words():
    vocab = ["<PAD>", "<UNK>", "the"]
    vectors = {"the": np.ones(2, dtype=np.float32)}
    zero, covered = embedding_matrix(vocab, vectors, 2, "zero", seed=1)
    assert covered == 1 and zero.tolist() == [[0, 0], [0, 0], [1, 1]]
    normal, _ = embedding_matrix(vocab, vectors, 2, "normal", seed=1)
    assert not normal[0].any() and normal[1].any()
    assert np.array_equal(normal, embedding_matrix(vocab, vectors, 2, "normal", seed=1)[0])


def test_vectors_are_checked_against_the_digest_recorded_beside_them(tmp_path):
    import json
    import re

    import pytest

    from attnexp import io

    path = tmp_path / "vectors.npy"
    np.save(path, np.arange(12, dtype=np.float32).reshape(3, 4), allow_pickle=False)
    (tmp_path / "vectors.json").write_text(json.dumps({"vectors_sha256": io.file_digest(path)}))
    assert load_vectors(path).shape == (3, 4)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(path))}: damaged, it does not match the digest vectors.json recorded"
    ):
        load_vectors(path)
    (tmp_path / "vectors.json").write_text(json.dumps({"source": "word2vec"}))
    with pytest.raises(ValueError, match="vectors.json records no digest for it"):
        load_vectors(path)
