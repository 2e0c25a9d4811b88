"""ERASER comprehensiveness and sufficiency (DeYoung et al. 2020) of token rankings, per instance,
ranking and bin (`eraser`).

A ranking orders an instance's n real tokens, most important first (ties: the lower position). For a
bin b of `BINS`, r_b is its top k_b = max(1, ⌈b·n⌉) positions, j the class predicted on the full
input x, and p_j(·) that class's probability:

    comprehensiveness_b(x) = p_j(x) − p_j(x \\ r_b)     (erase r_b: higher = the ranking found what matters)
    sufficiency_b(x)       = p_j(x) − p_j(r_b)          (keep only r_b: lower = r_b alone suffices)

AOPC is the mean over the |B| bins (the official scorer's 1/|B|, no k = 0 term). Instances with n < 2
are left out. `Random` is the mean over `RANDOM_RANKINGS` random rankings of each instance.

Every variant of every instance, ranking and bin (and the unerased input, so p_j(x) comes from the
same forward passes) goes through `attnexp.explain.perturb.variant_probabilities` in one call: a few
large forward passes per model, never one per variant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from torch import nn

from attnexp.explain.perturb import variant_probabilities
from attnexp.models.inputs import Example
from attnexp.papers.faithfulness import RANDOM
from attnexp.papers.faithfulness.bounds import bin_size, token_masks, unit_counts
from attnexp.papers.faithfulness.rankings import top_positions

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)  # DeYoung et al. 2020, the official scorer's bins


def _variants(scores: list[np.ndarray], bins: tuple[float, ...]):
    """Per instance with n >= 2 units: for each bin the comprehensiveness mask (erase r_b) and the
    sufficiency mask (erase all but r_b) over its units. Yields (instance, bin, k, erase_comp, erase_suff)."""
    for i, s in enumerate(scores):
        n = len(s)
        if n < 2:
            continue
        for b in bins:
            k = bin_size(b, n)
            top = np.zeros(n, dtype=bool)
            top[top_positions(s, k)] = True
            yield i, b, k, top, ~top


def eraser(
    model: nn.Module,
    examples: list[Example],
    rankings: dict[str, list[np.ndarray]],
    *,
    random: list[list[np.ndarray]] | None = None,
    bins: tuple[float, ...] = BINS,
    op: str = "delete",
    max_tokens: int = 20_000,
    units: list[list[np.ndarray]] | None = None,
    unit: str = "tokens",
) -> pd.DataFrame:
    """Per instance, ranking and bin: k, comprehensiveness and sufficiency (tidy, one row each).

    rankings: name -> per instance (n,) scores over its units, higher = more important; random: per
    instance the random score vectors whose mean is the `random` ranking (`random_rankings`); units:
    per instance the token positions of each unit (`attended_units`; None: every token a unit), named
    `unit` in the table. The model is in eval mode; `op` is how a token is erased (D-LOO-OP,
    `attnexp.explain.perturb`)."""
    sizes = unit_counts(examples, units)
    if len(sizes) != len(examples):
        raise ValueError(f"units for {len(sizes)} instances, {len(examples)} instances given")
    for name, scores in rankings.items():
        bad = next((e.id for e, s, n in zip(examples, scores, sizes) if len(s) != n), None)
        if len(scores) != len(examples) or bad is not None:
            raise ValueError(
                f"ranking {name!r}: scores for {len(scores)} instances ({bad!r} has the wrong length) for {len(examples)} instances"
            )
    draws = {f"{RANDOM}#{d}": [r[d] for r in random] for d in range(len(random[0]))} if random else {}
    # first the unerased inputs, so p_j(x) comes from the same forward passes as its variants
    owners = list(range(len(examples)))
    erase = [np.zeros(len(e.tokens), dtype=bool) for e in examples]
    keys: list[tuple] = []
    for name, scores in {**rankings, **draws}.items():
        for i, b, k, comp, suff in _variants(scores, bins):
            owners += [i, i]
            erase += token_masks([comp, suff], units[i] if units is not None else None, len(examples[i].tokens))
            keys += [(name, i, b, k, "comprehensiveness"), (name, i, b, k, "sufficiency")]
    probs = variant_probabilities(model, examples, np.array(owners), erase, op, max_tokens)  # (V, C)
    full = probs[: len(examples)]
    predicted = full.argmax(axis=1)  # j: the class predicted on the full input
    rows = {}
    for key, p in zip(keys, probs[len(examples) :]):
        name, i, b, k, metric = key
        row = rows.setdefault((name, i, b), {"ranking": name, "id": examples[i].id, "bin": b, "k": k, "n": sizes[i]})
        row[metric] = float(full[i, predicted[i]] - p[predicted[i]])
    frame = pd.DataFrame(
        list(rows.values()), columns=["ranking", "id", "bin", "k", "n", "comprehensiveness", "sufficiency"]
    )
    if draws:  # Random: the mean over the draws, per instance and bin
        is_draw = frame["ranking"].str.startswith(f"{RANDOM}#")
        mean = (
            frame[is_draw]
            .groupby(["id", "bin"], sort=False, as_index=False)
            .agg(
                k=("k", "first"),
                n=("n", "first"),
                comprehensiveness=("comprehensiveness", "mean"),
                sufficiency=("sufficiency", "mean"),
            )
        )
        frame = pd.concat([frame[~is_draw], mean.assign(ranking=RANDOM)[frame.columns]], ignore_index=True)
    return frame.assign(unit=unit)
