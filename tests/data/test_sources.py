"""Which files a dataset reads (attnexp.data.sources): canonical or a mirror's labelled stand-ins."""

from __future__ import annotations

import pytest

from attnexp.data.sources import SourceFile, digest_of, input_paths, resolve_sources

SHA_A, SHA_B, SHA_C = "a" * 64, "b" * 64, "c" * 64


def _dataset():
    return {
        "sources": [
            {
                "file": "corpus.tar.gz",
                "url": "https://example.org/corpus.tar.gz",
                "sha256": SHA_A,
                "extract": True,
                "substitute": {
                    "note": "first rows only",
                    "splits_affected": ["train", "dev"],
                    "files": [
                        {"file": "train.part.csv", "sha256": SHA_B},
                        {"file": "test.repack.zip", "md5": "d" * 32, "extract": True},
                    ],
                },
            },
            {"file": "extra.txt", "url": "https://example.org/extra.txt", "sha1": "e" * 40},
        ]
    }


CANONICAL = [
    SourceFile("toy", "corpus.tar.gz", "https://example.org/corpus.tar.gz", ("sha256", SHA_A), True, None),
    SourceFile("toy", "extra.txt", "https://example.org/extra.txt", ("sha1", "e" * 40), False, None),
]


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "mirror"
    root.mkdir()
    return root


def _put(root, relative, data=b"x"):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_canonical_in_mirror_wins(mirror):
    _put(mirror, "toy/corpus.tar.gz")
    _put(mirror, "toy/train.part.csv")
    _put(mirror, "other/test.repack.zip")
    assert resolve_sources("toy", _dataset(), str(mirror), "allow") == CANONICAL


def test_substitutes_used_when_canonical_missing(mirror):
    _put(mirror, "toy/train.part.csv")
    _put(mirror, "deep/er/test.repack.zip")  # looked up recursively
    resolved = resolve_sources("toy", _dataset(), str(mirror), "allow")
    assert resolved == [
        SourceFile("toy", "train.part.csv", None, ("sha256", SHA_B), False, "first rows only", ("train", "dev")),
        SourceFile("toy", "test.repack.zip", None, ("md5", "d" * 32), True, "first rows only", ("train", "dev")),
        CANONICAL[1],  # a source without a substitute is always canonical
    ]
    assert resolved[0].as_record() == {
        "file": "train.part.csv",
        "url": None,
        "digest": ["sha256", SHA_B],
        "extract": False,
        "substitute": "first rows only",
        "splits_affected": ["train", "dev"],
    }


def test_substitutes_forbidden(mirror):
    _put(mirror, "train.part.csv")
    _put(mirror, "test.repack.zip")
    assert resolve_sources("toy", _dataset(), str(mirror), "forbid") == CANONICAL


def test_no_mirror_means_canonical():
    assert resolve_sources("toy", _dataset(), None, "allow") == CANONICAL


def test_some_substitute_files_missing_means_canonical(mirror):
    _put(mirror, "train.part.csv")
    assert resolve_sources("toy", _dataset(), str(mirror), "allow") == CANONICAL


def test_substitute_null_and_no_sources(mirror):
    dataset = _dataset()
    dataset["sources"][0]["substitute"] = None
    assert resolve_sources("toy", dataset, str(mirror), "allow") == CANONICAL
    assert resolve_sources("toy", {"sources": []}, str(mirror), "allow") == []
    assert resolve_sources("toy", {}, str(mirror), "allow") == []


def test_canonical_record():
    assert CANONICAL[0].as_record() == {
        "file": "corpus.tar.gz",
        "url": "https://example.org/corpus.tar.gz",
        "digest": ["sha256", SHA_A],
        "extract": True,
        "substitute": None,
        "splits_affected": [],
    }


def test_digest_of():
    assert digest_of({"sha256": SHA_A, "md5": None}) == ("sha256", SHA_A)
    assert digest_of({"md5": "d" * 32}) == ("md5", "d" * 32)
    assert digest_of({"sha1": "e" * 40}) == ("sha1", "e" * 40)
    assert digest_of({"sha256": None}) == ("sha256", None)
    assert digest_of({}) == ("sha256", None)


def test_input_paths():
    sources = [
        SourceFile("sst", "trees.zip", "https://x/trees.zip", ("sha256", SHA_A), True, None),
        SourceFile("agnews", "train.csv", "https://x/train.csv", ("sha256", SHA_B), False, None),
    ]
    assert input_paths(sources) == ["resources/sst/unpacked/trees.zip", "resources/agnews/train.csv"]
    assert input_paths(sources, root="elsewhere") == ["elsewhere/sst/unpacked/trees.zip", "elsewhere/agnews/train.csv"]
    assert input_paths([]) == []


def test_a_fetched_file_the_config_gives_another_checksum_is_named_and_a_matching_one_passes(tmp_path):
    from attnexp.data.download import record_verified
    from attnexp.data.sources import disagreeing_sources

    (tmp_path / "sst").mkdir()
    (tmp_path / "sst" / "trees.zip").write_bytes(b"the archive")
    record_verified(tmp_path / "sst" / "trees.zip", ("sha256", SHA_A))
    (tmp_path / "sst" / "old.zip").write_bytes(b"fetched before downloads recorded it")
    fetched = SourceFile("sst", "trees.zip", "https://example.org/trees.zip", ("sha256", SHA_A.upper()), True, None)
    missing = SourceFile("sst", "other.zip", "https://example.org/other.zip", ("sha256", SHA_B), True, None)
    unrecorded = SourceFile("sst", "old.zip", "https://example.org/old.zip", ("sha256", SHA_B), True, None)
    assert disagreeing_sources([fetched, missing, unrecorded], tmp_path) == []
    typo = SourceFile("sst", "trees.zip", "https://example.org/trees.zip", ("sha256", SHA_A[:-1] + "b"), True, None)
    assert disagreeing_sources([typo], tmp_path) == [
        f"{tmp_path}/sst/trees.zip was verified against sha256 {SHA_A} when it was fetched, but config key "
        f"datasets.sst.sources now gives sha256 {SHA_A[:-1]}b for trees.zip: correct the config, or delete the file "
        "to fetch it again"
    ]
