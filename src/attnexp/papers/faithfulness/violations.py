"""The violation test per instance and explainer (`violations`), from each unit's removal change
(`removal_changes`).

The violation test (Liu et al. 2022) asks whether an explanation's signs are right: unit t with a
signed attribution a_t claims to support the predicted class j (a_t > 0) or to oppose it (a_t < 0),
and removing t alone moves the prediction by Δ_t = p_j(x) − p_j(x \\ t). The unit violates when the two
disagree, sign(a_t) ≠ sign(Δ_t); an instance's violation ratio is the share of its units with a_t ≠ 0
that violate (a zero attribution claims nothing). Attention and rollout are non-negative, so they claim
that every unit supports the prediction; gradient (input × gradient), IG, attention × gradient and
attention attribution carry their own signs; Random is the mean over `RANDOM_RANKINGS` draws of N(0, 1)
attributions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from torch import nn

from attnexp.explain.perturb import variant_probabilities
from attnexp.models.inputs import Example
from attnexp.papers.faithfulness import RANDOM
from attnexp.papers.faithfulness.bounds import token_masks, unit_counts
from attnexp.papers.faithfulness.rankings import RANDOM_RANKINGS


def violation_ratio(attribution: np.ndarray, change: np.ndarray) -> tuple[int, int]:
    """-> (units whose attribution's sign disagrees with the sign of their removal's output change,
    units with a non-zero attribution): Liu et al.'s violation count and its denominator."""
    attribution, change = np.asarray(attribution, dtype=np.float64), np.asarray(change, dtype=np.float64)
    claimed = attribution != 0
    return int((np.sign(attribution[claimed]) != np.sign(change[claimed])).sum()), int(claimed.sum())


def removal_changes(
    model: nn.Module,
    examples: list[Example],
    op: str = "delete",
    max_tokens: int = 20_000,
    units: list[list[np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """Per instance, Δ_t = p_j(x) − p_j(x minus unit t) for each of its units (j: the class predicted on
    x), every single-unit removal and the unerased inputs in one `variant_probabilities` call; an
    instance of one unit gets an empty vector (removing its only unit leaves nothing to encode)."""
    sizes = unit_counts(examples, units)
    scored = [i for i, n in enumerate(sizes) if n >= 2]
    owners = list(range(len(examples))) + [i for i in scored for _ in range(sizes[i])]
    erase = [np.zeros(len(e.tokens), dtype=bool) for e in examples]
    for i in scored:
        single = list(np.eye(sizes[i], dtype=bool))
        erase += token_masks(single, units[i] if units is not None else None, len(examples[i].tokens))
    probs = variant_probabilities(model, examples, np.array(owners), erase, op, max_tokens)  # (V, C)
    full = probs[: len(examples)]
    predicted = full.argmax(axis=1)
    changes = [np.zeros(0, dtype=probs.dtype) for _ in examples]
    starts = np.cumsum([len(examples)] + [sizes[i] for i in scored])
    for i, a, b in zip(scored, starts[:-1], starts[1:]):
        changes[i] = full[i, predicted[i]] - probs[a:b, predicted[i]]
    return changes


def violations(
    examples: list[Example],
    attributions: dict[str, list[np.ndarray]],
    changes: list[np.ndarray],
    seed: int,
    random_draws: int = RANDOM_RANKINGS,
    unit: str = "tokens",
) -> pd.DataFrame:
    """Per instance (n >= 2 units) and explainer: the violation test's counts and ratio (tidy: explainer,
    id, n, violations, claimed, violation_ratio, unit). attributions: name -> per instance (n,) signed
    scores over its units (`SIGNED`); changes: per instance each unit's removal Δ (`removal_changes`; empty:
    not scored); Random: the mean over `random_draws` N(0, 1) draws, seeded per instance."""
    for name, scores in attributions.items():
        if len(scores) != len(examples) or any(len(s) != len(c) for s, c in zip(scores, changes) if len(c)):
            raise ValueError(f"attribution {name!r}: its vectors do not cover the {len(examples)} instances' units")
    rows = []
    for i, change in enumerate(changes):
        if not len(change):
            continue
        counted = {name: [violation_ratio(scores[i], change)] for name, scores in attributions.items()}
        if random_draws:
            draws = [np.random.default_rng([seed, i, d]).standard_normal(len(change)) for d in range(random_draws)]
            counted[RANDOM] = [violation_ratio(draw, change) for draw in draws]
        for name, counts in counted.items():
            ratios = [v / c for v, c in counts if c]
            rows.append(
                {
                    "explainer": name,
                    "id": examples[i].id,
                    "n": len(change),
                    "violations": float(np.mean([v for v, _ in counts])),
                    "claimed": float(np.mean([c for _, c in counts])),
                    "violation_ratio": float(np.mean(ratios)) if ratios else float("nan"),
                }
            )
    return violations_frame(rows).assign(unit=unit)


def violations_frame(rows: list[dict] = ()) -> pd.DataFrame:
    """The violation test's per-instance table (no rows: a model whose rankings carry no attention)."""
    columns = ["explainer", "id", "n", "violations", "claimed", "violation_ratio", "unit"]
    return pd.DataFrame(list(rows), columns=columns)
