"""`synthetic`: a generated task with planted cue tokens, so every explanation can be scored against a
known right answer (the project's own task, in the spirit of Zhou et al. 2022). Deterministic given its seed; no download.

- Background: 2,000 types `w0000`..`w1999` with Zipf(1.1) frequencies; n ~ Uniform{8..40} tokens.
- Label y ~ Bernoulli(0.5); k_y ~ Uniform{1..3} cues of class y (`pos0..9` for 1, `neg0..9` for 0) at
  distinct random positions; with probability 0.3 also 1 <= k_o < k_y cues of the other class
  (distractors). The label is the class with more cues, so the task needs counting, not presence.
- Pseudo-sentences of 5-12 tokens, so hierarchical models run on it too.
- Per instance: `rationale` = positions of the class-y cues, `distractors` = the other-class cues.
- The shifted test set (`shifted_test`): the same generator, but every instance carries cues of both
  classes (k_y ~ Uniform{2..max_cues}, 1 <= k_o < k_y), so which classes' cues occur says nothing about
  the label and only counting them does. A model that learnt the shortcut "a cue of class c occurs"
  (exact on the 80 % of training instances without distractors) falls towards chance there.
- `question: true` (the `synthetic_qa` dataset, for the QA/NLI model family): the same passages, a
  one-token question `ask-pos` / `ask-neg` and the answer `yes` iff a cue of the asked class occurs,
  so the answer needs both the question and the passage. `rationale` = the asked class's cues.
"""

from __future__ import annotations

import numpy as np

from attnexp.data.documents import Document

__all__ = ["generate", "shifted_test", "read"]

SHIFTED_STREAM = 3  # the seed offset of the shifted test set (train, dev and test use 0, 1, 2)


def _background_distribution(n_types: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n_types + 1) ** exponent
    return weights / weights.sum()


def _instance(
    rng: np.random.RandomState, index: int, split: str, g: dict, background_p: np.ndarray, shifted: bool = False
) -> Document:
    n = rng.randint(g["min_length"], g["max_length"] + 1)
    y = int(rng.rand() < 0.5)
    if shifted:  # both classes' cues in every instance: only their counts tell the label
        k_y = rng.randint(2, g["max_cues"] + 1)
        k_o = rng.randint(1, k_y)
    else:
        k_y = rng.randint(1, g["max_cues"] + 1)
        k_o = rng.randint(1, k_y) if k_y > 1 and rng.rand() < g["distractor_prob"] else 0
    length = n + k_y + k_o
    cue_positions = rng.choice(length, size=k_y + k_o, replace=False)
    rationale, distractors = sorted(cue_positions[:k_y].tolist()), sorted(cue_positions[k_y:].tolist())
    own, other = ("pos", "neg") if y == 1 else ("neg", "pos")
    tokens = [f"w{i:04d}" for i in rng.choice(len(background_p), size=length, p=background_p)]
    for position in rationale:
        tokens[position] = f"{own}{rng.randint(g['cue_types'])}"
    for position in distractors:
        tokens[position] = f"{other}{rng.randint(g['cue_types'])}"
    sentences, start = [], 0
    while start < length:
        end = min(length, start + rng.randint(g["min_sentence"], g["max_sentence"] + 1))
        sentences.append((start, end))
        start = end
    question, label = None, y
    if g.get("question"):  # drawn last, so the passages equal those of the plain task
        asked = int(rng.rand() < 0.5)
        question = [f"ask-{'pos' if asked else 'neg'}"]
        if asked != y:
            rationale, distractors = distractors, rationale
        label = "yes" if rationale else "no"
    return Document(
        id=f"{split}-{index:05d}",
        tokens=tokens,
        label=label,
        sentences=sentences,
        question=question,
        extra={"rationale": rationale, "distractors": distractors},
    )


def generate(g: dict, seed: int) -> dict[str, list[Document]]:
    """Every split, from one seeded stream per split (so changing a size leaves the others intact)."""
    background_p = _background_distribution(g["background_types"], g["zipf_exponent"])
    splits = {}
    for offset, split in enumerate(("train", "dev", "test")):
        rng = np.random.RandomState(seed + offset)
        splits[split] = [_instance(rng, i, split, g, background_p) for i in range(g["sizes"][split])]
    return splits


def shifted_test(g: dict, seed: int) -> list[Document]:
    """The shifted test set: `sizes.test` instances with cues of both classes in each (module
    docstring), ids `shifted-00000`.., from a seeded stream of their own."""
    if g.get("question"):
        raise ValueError("the shifted test set is defined for the binary task, not `question: true`")
    if g["max_cues"] < 2:
        raise ValueError(
            f"the shifted test set needs generator.max_cues >= 2 (cues of both classes), got {g['max_cues']}"
        )
    background_p = _background_distribution(g["background_types"], g["zipf_exponent"])
    rng = np.random.RandomState(seed + SHIFTED_STREAM)
    return [_instance(rng, i, "shifted", g, background_p, shifted=True) for i in range(g["sizes"]["test"])]


def read(files, cfg):
    return generate(cfg["generator"], cfg["split_seed"])
