"""`planted_{dataset}`: a real binary dataset whose label is made to depend on planted tokens at
recorded positions (after Zhou et al. 2022), so explanations of models trained on real
text can be scored against a known right answer, as on `synthetic`.

Per instance, with the dataset's `split_seed` (one random stream per split):
1. label reassignment y' ~ Categorical(`lr_probs`[y]); the default [[.5, .5], [.5, .5]] leaves the
   original text no information about y';
2. manipulation m ~ Categorical(`im_probs`[y']) (default: the identity, class c always gets M_c);
3. `article`: M_c replaces every article {a, an, the} with the class token T_c (T_0 = "the",
   T_1 = "a"); documents without an article are removed; `marker`: M_1 inserts `marker` at 1–3
   random positions, M_0 changes nothing.
The record keeps `rationale` = the positions of the replaced or inserted tokens (G; empty for a
marker-free class-0 document, which the ground-truth metrics skip) and `original_label` = y.
"""

from __future__ import annotations

import numpy as np

from attnexp.data.documents import SPLITS, Document, read_records

__all__ = ["ARTICLES", "CLASS_TOKENS", "MANIPULATIONS", "plant", "read"]

ARTICLES = frozenset({"a", "an", "the"})
CLASS_TOKENS = ("the", "a")  # T_0, T_1
MANIPULATIONS = ("article", "marker")


def _with_inserted(
    doc: Document, positions: list[int], token: str
) -> tuple[list[str], list[tuple[int, int]], list[int]]:
    """Insert `token` before each of `positions` (ascending, in 0..n, may repeat) -> the tokens, the
    sentence spans moved to match (a token inserted at a sentence start joins that sentence; at the
    end, the last one), and where the inserted tokens are."""
    n = len(doc.tokens)
    before = lambda t: sum(p < t for p in positions)  # noqa: E731 - insertions landing before original index t
    tokens, placed = [], []
    for t in range(n + 1):
        for _ in range(positions.count(t)):
            placed.append(len(tokens))
            tokens.append(token)
        if t < n:
            tokens.append(doc.tokens[t])
    spans = [(a + before(a), len(tokens) if b == n else b + before(b)) for a, b in doc.sentences]
    return tokens, spans, placed


def plant(doc: Document, rng: np.random.Generator, settings: dict) -> Document | None:
    """One document -> its planted version (None: removed, an article document without an article)."""
    y = int(doc.label)
    label = int(rng.choice(2, p=settings["lr_probs"][y]))
    manipulation = int(rng.choice(2, p=settings["im_probs"][label]))
    extra = {**doc.extra, "original_label": y}
    if settings["manipulation"] == "article":
        rationale = [i for i, token in enumerate(doc.tokens) if token in ARTICLES]
        if not rationale:
            return None
        tokens = [CLASS_TOKENS[manipulation] if token in ARTICLES else token for token in doc.tokens]
        return Document(doc.id, tokens, label, doc.sentences, extra={**extra, "rationale": rationale})
    if manipulation == 0:
        return Document(doc.id, list(doc.tokens), label, doc.sentences, extra={**extra, "rationale": []})
    count = int(rng.integers(1, 4))
    positions = sorted(int(p) for p in rng.integers(0, len(doc.tokens) + 1, size=count))
    tokens, spans, placed = _with_inserted(doc, positions, settings["marker"])
    return Document(doc.id, tokens, label, spans, extra={**extra, "rationale": placed})


def read(files, cfg) -> dict[str, list[Document]]:
    """The base dataset's preprocessed splits (`results/data/{base}/{split}.jsonl`) -> planted splits."""
    settings = cfg["planted"]
    if settings["manipulation"] not in MANIPULATIONS:
        raise ValueError(
            f"datasets.{cfg['name']}.planted.manipulation: expected one of {MANIPULATIONS}, got {settings['manipulation']!r}"
        )
    splits = {}
    for index, split in enumerate(SPLITS):
        rng = np.random.default_rng([cfg["split_seed"], index])
        planted = []
        for record in read_records(files.find(f"{settings['base']}/{split}.jsonl")):
            if str(record["label"]) not in ("0", "1"):
                raise ValueError(
                    f"datasets.{cfg['name']}: base {settings['base']!r} instance {record['id']!r} has label {record['label']!r}; planting needs a binary 0/1 dataset"
                )
            doc = Document(
                record["id"], record["tokens"], int(record["label"]), [tuple(s) for s in record["sentences"]]
            )
            kept = plant(doc, rng, settings)
            if kept is not None:
                planted.append(kept)
        splits[split] = planted
    return splits
