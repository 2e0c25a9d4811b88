"""Word vectors for a dataset's vocabulary: the paper's pretrained file, or word2vec trained here.

D-EMB: fastText `wiki.simple.vec` and GloVe 840B are used when their (checksummed) file is available;
otherwise, and for the datasets whose paper trained its own vectors (MIMIC, Serrano & Smith), word2vec
is trained on the dataset's training text only (never test), with the protocol's settings.
Rows follow `vocab.txt`: `<PAD>` is zero; words without a vector get zero next to pretrained vectors
(J&W) and N(0, 1) next to word2vec (J&W's MIMIC convention), drawn from a seeded generator.
"""

from __future__ import annotations

import io as _io
import zipfile
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

__all__ = ["plan_embeddings", "read_pretrained", "train_word2vec", "embedding_matrix", "build_embeddings"]


def plan_embeddings(dataset: dict, embeddings: dict, mirror: str | None, resources: str = "resources/embeddings") -> dict | None:
    """Which vectors a dataset gets (D-EMB), decided when the workflow is planned so that the DAG holds
    a vector download only when pretrained vectors are used. None = random initialisation.

    `dataset` is the dataset's config block, `embeddings` the `embeddings` config block."""
    from attnexp.data.download import find_in_mirror

    def word2vec(source: str, settings: dict, why: str) -> dict:
        return dict(kind="word2vec", source=source, dim=settings["dim"], word2vec=settings, why=why)

    if dataset["vectors"] == "random":
        return None
    if dataset["vectors"] == "word2vec":
        return word2vec("word2vec", embeddings["word2vec"][dataset["protocol"]], "the paper trains word2vec on this dataset")
    vector_file = embeddings["vectors"][dataset["vectors"]]["file"]
    present = Path(resources, vector_file).exists() or bool(mirror and find_in_mirror(mirror, vector_file))
    choice = embeddings["source"]
    if choice == "pretrained" or (choice == "auto" and present):
        return dict(kind="pretrained", source=dataset["vectors"], dim=300, path=f"{resources}/{vector_file}", why=f"embeddings.source={choice}")
    why = (
        "embeddings.source=word2vec_local (D-EMB)"
        if choice == "word2vec_local"
        else f"embeddings.source=auto; {vector_file} not in {resources} or the mirror (D-EMB)"
    )
    return word2vec("word2vec_local", embeddings["word2vec"]["jain_wallace"], why)


def _vector_lines(path: Path) -> Iterator[str]:
    """Text lines of a .vec/.txt vector file, or of the single .txt member of a zip (GloVe)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if m.endswith((".txt", ".vec"))]
            if len(members) != 1:
                raise ValueError(f"{path}: expected one .txt/.vec member with vectors, found {members}")
            with archive.open(members[0]) as raw:
                yield from _io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            yield from f


def read_pretrained(path: str | Path, vocab: list[str], dim: int) -> dict[str, np.ndarray]:
    """Vectors of the vocabulary words found in a word2vec-text file (fastText has a `count dim`
    header line, GloVe none). Only vocabulary words are kept, so GloVe 840B fits in memory. Lookup is
    exact on our lower-cased vocabulary; the first occurrence wins (GloVe 840B repeats a few words)."""
    wanted = set(vocab)
    found: dict[str, np.ndarray] = {}
    for line_no, line in enumerate(_vector_lines(Path(path)), 1):
        word, _, rest = line.rstrip().partition(" ")
        if line_no == 1 and len(rest.split()) == 1:
            continue  # fastText header: "<count> <dim>"
        if word in wanted and word not in found:  # exact match, as J&W look words up
            values = rest.split(" ")
            if len(values) != dim:
                raise ValueError(f"{path}:{line_no}: expected {dim} values for {word!r}, got {len(values)}")
            found[word] = np.asarray(values, dtype=np.float32)
    return found


def train_word2vec(sentences: Iterable[list[str]], settings: dict, seed: int) -> dict[str, np.ndarray]:
    """word2vec with one worker: gensim is deterministic for a seed only single-threaded."""
    from gensim.models import Word2Vec

    model = Word2Vec(
        sentences=list(sentences),
        vector_size=settings["dim"],
        window=settings["window"],
        min_count=settings["min_count"],
        sg=int(settings["sg"]),
        epochs=settings["epochs"],
        seed=seed,
        workers=1,
    )
    return {word: model.wv[word].astype(np.float32) for word in model.wv.index_to_key}


def embedding_matrix(vocab: list[str], vectors: dict[str, np.ndarray], dim: int, missing: str, seed: int):
    """(matrix (V, dim) float32, number of vocabulary words that had a vector). Row 0 (`<PAD>`) is zero.
    `missing`: "zero" or "normal" for words without a vector."""
    if missing not in {"zero", "normal"}:
        raise ValueError(f"missing must be 'zero' or 'normal', got {missing!r}")
    rng = np.random.default_rng(seed)
    matrix = np.zeros((len(vocab), dim), dtype=np.float32)
    covered = 0
    for row, word in enumerate(vocab):
        if row == 0:
            continue
        if word in vectors:
            matrix[row] = vectors[word]
            covered += 1
        elif missing == "normal":
            matrix[row] = rng.standard_normal(dim).astype(np.float32)
    return matrix, covered


def build_embeddings(vocab_path, corpus_paths, out_vectors, out_meta, plan: dict, seed: int, log=print) -> dict:
    """Write the (V, dim) float32 matrix as .npy and a JSON record of what produced it."""
    from attnexp import io
    from attnexp.data.download import file_digest

    vocab = Path(vocab_path).read_text(encoding="utf-8").split("\n")[:-1]
    dim = plan["dim"]
    if plan["kind"] == "pretrained":
        vectors = read_pretrained(plan["path"], vocab, dim)
        missing, provenance = "zero", {"file": Path(plan["path"]).name, "sha256": file_digest(plan["path"])}
    else:
        sentences = (
            record["tokens"][a:b]
            for path in corpus_paths
            for record in io.read_jsonl(path)
            for a, b in record["sentences"]
        )
        vectors = train_word2vec(sentences, plan["word2vec"], seed)
        missing, provenance = "normal", {"word2vec": plan["word2vec"], "corpus": [Path(p).name for p in corpus_paths]}
    matrix, covered = embedding_matrix(vocab, vectors, dim, missing, seed)
    with io.atomic_path(out_vectors) as tmp:
        np.save(tmp, matrix, allow_pickle=False)
    meta = {
        "source": plan["source"],
        "why": plan["why"],
        "dim": dim,
        "vocab_size": len(vocab),
        "words_with_vector": covered,
        "missing_words": "zero" if missing == "zero" else "N(0, 1)",
        "seed": seed,
        **provenance,
    }
    io.write_json(out_meta, meta)
    log(f"{covered}/{len(vocab) - 1} vocabulary words have a vector ({plan['source']}: {plan['why']})")
    return meta
