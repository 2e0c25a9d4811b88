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

The shifted test set (`shifted_test`): the base's test split planted again, from a stream of its own,
with the label drawn independently of the original one (`lr_probs` uniform) and the manipulations as
configured. Where `lr_probs` lets the original text predict the new label, the text is a distractor
that agrees with the label on train and test; here it no longer does, so a model that learnt the
text's sentiment rather than the cues falls towards what the cues alone give. With the default uniform
`lr_probs` the shifted set has the test set's distribution (a fresh draw of it).
"""

from __future__ import annotations

import numpy as np

from attnexp.data.documents import SPLITS, Document, read_records

__all__ = ["ARTICLES", "CLASS_TOKENS", "MANIPULATIONS", "plant", "read", "shifted_test"]

ARTICLES = frozenset({"a", "an", "the"})
CLASS_TOKENS = ("the", "a")  # T_0, T_1
MANIPULATIONS = ("article", "marker")
SHIFTED_STREAM = len(SPLITS)  # the shifted test set's random stream, after those of the splits
UNIFORM = [[0.5, 0.5], [0.5, 0.5]]


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


def _planted_split(path, rng: np.random.Generator, settings: dict, name: str) -> list[Document]:
    """One preprocessed split of the base (`path`) -> its planted documents."""
    planted = []
    for record in read_records(path):
        if str(record["label"]) not in ("0", "1"):
            raise ValueError(
                f"datasets.{name}: base {settings['base']!r} instance {record['id']!r} has label {record['label']!r}; planting needs a binary 0/1 dataset"
            )
        doc = Document(record["id"], record["tokens"], int(record["label"]), [tuple(s) for s in record["sentences"]])
        kept = plant(doc, rng, settings)
        if kept is not None:
            planted.append(kept)
    return planted


def _checked(cfg) -> dict:
    settings = cfg["planted"]
    if settings["manipulation"] not in MANIPULATIONS:
        raise ValueError(
            f"datasets.{cfg['name']}.planted.manipulation: expected one of {MANIPULATIONS}, got {settings['manipulation']!r}"
        )
    return settings


def read(files, cfg) -> dict[str, list[Document]]:
    """The base dataset's preprocessed splits (`results/data/{base}/{split}.jsonl`) -> planted splits."""
    settings = _checked(cfg)
    return {
        split: _planted_split(
            files.find(f"{settings['base']}/{split}.jsonl"),
            np.random.default_rng([cfg["split_seed"], index]),
            settings,
            cfg["name"],
        )
        for index, split in enumerate(SPLITS)
    }


def shifted_test(base_test, cfg) -> list[Document]:
    """The shifted test set (module docstring) from the base's preprocessed test split `base_test`."""
    settings = {**_checked(cfg), "lr_probs": UNIFORM}
    return _planted_split(base_test, np.random.default_rng([cfg["split_seed"], SHIFTED_STREAM]), settings, cfg["name"])
