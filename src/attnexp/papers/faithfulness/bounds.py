"""The range of AOPC an instance allows: the lowest and highest AOPC-comprehensiveness and
AOPC-sufficiency that any ordering of its units reaches (Edin et al. 2025, *Normalized AOPC*), so that
a ranking's AOPC can be read on the instance's own scale, (AOPC − min) / (max − min) in [0, 1].

AOPC depends on an ordering only through its top-k_b sets, one per bin, nested (`bin_size`): with
f(S) = p_j(x) − p_j(x \\ S) (comprehensiveness) or p_j(x) − p_j(S alone) (sufficiency), an ordering's
AOPC is (1/|B|) Σ_b f(S_b) over a chain S_1 ⊆ S_2 ⊆ … of those sizes. The bounds are the extreme chains:

- `exact`, for instances of at most `exact_max_units` units: every subset of each bin's size is scored
  and a dynamic programme over the nested sizes finds the best and worst chain (Σ_b C(n, k_b) variants
  per kind: 614 for n = 10 with the default bins);
- `beam`, for longer instances: Edin et al.'s beam search, one unit added per step, `beam_width` sets
  kept per step and search (by the chain's value so far, plus f of the set itself at the sizes that are
  no bin's). Its bounds are orderings that exist, so the true range is at least as wide; where a
  ranking's own AOPC falls outside them (`widen`), they are widened to it.

Every step of every search of every instance is one batched `variant_probabilities` call, and a set's
f is computed once for all the searches that reach it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from itertools import combinations

import numpy as np
import pandas as pd
from torch import nn

from attnexp.explain.perturb import variant_probabilities
from attnexp.models.inputs import Example

__all__ = [
    "BOUND_COLUMNS",
    "bin_size",
    "unit_counts",
    "boundable",
    "token_masks",
    "levels",
    "aopc_bounds",
    "widen",
]

# per instance: the lowest and highest AOPC of each kind, and how they were found (exact | beam)
BOUND_COLUMNS = ("comprehensiveness_min", "comprehensiveness_max", "sufficiency_min", "sufficiency_max", "bounds")
KINDS = ("comprehensiveness", "sufficiency")


def bin_size(fraction: float, n: int) -> int:
    """k_b = max(1, ⌈b·n⌉) in exact decimal arithmetic (a configured bin of 0.07 and n = 100: floats
    give ⌈7.000000000000001⌉ = 8)."""
    return max(1, math.ceil(Decimal(str(fraction)) * n))


def token_masks(unit_masks: list[np.ndarray], units: list[np.ndarray] | None, n_tokens: int) -> list[np.ndarray]:
    """Masks over an instance's units -> masks over its tokens (a unit's mask covers its tokens)."""
    if units is None:
        return unit_masks
    owner = np.empty(n_tokens, dtype=np.int64)
    for u, positions in enumerate(units):
        owner[positions] = u
    return [mask[owner] for mask in unit_masks]


def levels(n: int, bins: tuple[float, ...]) -> list[tuple[int, int]]:
    """The distinct top-k sizes of an instance of n units over the bins, ascending, each with how many
    bins share it: [(k, count)]."""
    sizes = [bin_size(b, n) for b in bins]
    return [(k, sizes.count(k)) for k in sorted(set(sizes))]


class _Scores:
    """f(S) of each (instance, kind, set) of a group of instances, computed on demand in batches and kept
    for the group's searches (a new group starts a new cache: the sets of a long instance's beam search
    number tens of thousands)."""

    def __init__(self, model, examples, units, op, max_tokens, indices):
        self.model, self.examples, self.units, self.op, self.max_tokens = model, examples, units, op, max_tokens
        self.known: dict[tuple[int, str, frozenset], float] = {}
        # p(x) of the group's instances, from the same kind of forward passes as their variants
        unerased = [np.zeros(len(examples[i].tokens), dtype=bool) for i in indices]
        full = variant_probabilities(model, examples, np.asarray(indices), unerased, op, max_tokens)
        self.full = dict(zip(indices, full))

    def _mask(self, i: int, chosen: frozenset, kind: str) -> np.ndarray:
        """The token mask erasing the set (comprehensiveness) or everything else (sufficiency)."""
        n_units = len(self.units[i]) if self.units is not None else len(self.examples[i].tokens)
        in_set = np.zeros(n_units, dtype=bool)
        in_set[list(chosen)] = True
        erase = in_set if kind == "comprehensiveness" else ~in_set
        units = self.units[i] if self.units is not None else None
        return token_masks([erase], units, len(self.examples[i].tokens))[0]

    def compute(self, wanted: list[tuple[int, str, frozenset]]) -> None:
        """Score every wanted (instance, kind, set) not known yet, in one batched call."""
        new = list(dict.fromkeys(w for w in wanted if w not in self.known))
        if not new:
            return
        owners = np.array([i for i, _, _ in new])
        masks = [self._mask(i, chosen, kind) for i, kind, chosen in new]
        probs = variant_probabilities(self.model, self.examples, owners, masks, self.op, self.max_tokens)
        for (i, kind, chosen), p in zip(new, probs):
            j = int(self.full[i].argmax())
            self.known[(i, kind, chosen)] = float(self.full[i][j] - p[j])

    def __getitem__(self, key) -> float:
        return self.known[key]


def _exact(scores: _Scores, i: int, n: int, chain: list[tuple[int, int]], kind: str) -> tuple[float, float]:
    """The lowest and highest Σ_b f(S_b) over every nested chain of an instance, by dynamic programming."""
    sets = {k: [frozenset(c) for c in combinations(range(n), k)] for k, _ in chain}
    scores.compute([(i, kind, s) for k, _ in chain for s in sets[k]])
    low = high = None
    for level, (k, count) in enumerate(chain):
        new_low, new_high = {}, {}
        for s in sets[k]:
            own = count * scores[(i, kind, s)]
            if level == 0:
                new_low[s] = new_high[s] = own
                continue
            below = [frozenset(c) for c in combinations(sorted(s), chain[level - 1][0])]
            new_low[s] = own + min(low[b] for b in below)
            new_high[s] = own + max(high[b] for b in below)
        low, high = new_low, new_high
    return min(low.values()), max(high.values())


def _beam(scores: _Scores, searches: list[tuple[int, int, list, str]], width: int) -> dict:
    """Beam searches, all advanced together one unit per step: searches [(instance, n, chain, kind)] ->
    {(instance, kind): (lowest, highest) chain value found}."""
    beams = {(i, kind, sense): {frozenset(): 0.0} for i, _, _, kind in searches for sense in (-1, 1)}
    info = {(i, kind): (n, dict(chain)) for i, n, chain, kind in searches}
    top = {key: max(info[key][1]) for key in info}
    step = 0
    while any(step < top[(i, kind)] for i, kind, _ in beams):
        step += 1
        candidates = {}
        for (i, kind, sense), beam in beams.items():
            n, counts = info[(i, kind)]
            if step > top[(i, kind)]:
                continue
            grown = {}
            for chosen, value in beam.items():
                for u in range(n):
                    if u not in chosen:
                        s = chosen | {u}
                        if s not in grown or sense * value > sense * grown[s]:
                            grown[s] = value  # the best chain value reaching s so far
            candidates[(i, kind, sense)] = grown
        scores.compute([(i, kind, s) for (i, kind, _), grown in candidates.items() for s in grown])
        for (i, kind, sense), grown in candidates.items():
            counts = info[(i, kind)][1]
            count = counts.get(step, 0)
            valued = {s: value + count * scores[(i, kind, s)] for s, value in grown.items()}
            # at a size that is no bin's, rank by the set's own f as well (a look-ahead), keep the chain value
            rank = {s: valued[s] + (0 if count else scores[(i, kind, s)]) for s in valued}
            kept = sorted(valued, key=lambda s: (-sense * rank[s], sorted(s)))[:width]
            beams[(i, kind, sense)] = {s: valued[s] for s in kept}
    found = {}
    for (i, kind, sense), beam in beams.items():
        best = (max if sense > 0 else min)(beam.values())
        low, high = found.get((i, kind), (math.nan, math.nan))
        found[(i, kind)] = (best, high) if sense < 0 else (low, best)
    return found


def unit_counts(examples: list[Example], units: list[list[np.ndarray]] | None) -> list[int]:
    """How many units each instance's orderings order: its units where given, else its tokens."""
    return [len(u) for u in units] if units is not None else [len(e.tokens) for e in examples]


def boundable(sizes: list[int], beam_max_units: int | None) -> list[int]:
    """The indices of the instances (of `sizes` units, `unit_counts`) that get bounds: at least 2 units
    (one unit has one ordering) and at most `beam_max_units` (None: no limit)."""
    limit = math.inf if beam_max_units is None else beam_max_units
    return [i for i, n in enumerate(sizes) if 2 <= n <= limit]


def aopc_bounds(
    model: nn.Module,
    examples: list[Example],
    bins: tuple[float, ...],
    *,
    op: str = "delete",
    max_tokens: int = 20_000,
    units: list[list[np.ndarray]] | None = None,
    exact_max_units: int = 10,
    beam_width: int = 50,
    chosen: np.ndarray | None = None,
    beam_max_units: int | None = None,
    group: int = 32,
) -> pd.DataFrame:
    """Per instance (n >= 2 units; `chosen`: the indices to bound, by default all): the lowest and highest
    AOPC-comprehensiveness and AOPC-sufficiency of any ordering of its units (`BOUND_COLUMNS`), exact up to
    `exact_max_units` units, by beam search above, up to `beam_max_units` (None: no limit; longer instances
    get no row: a beam search costs about width × n forward passes per unit added). `group` instances are
    searched together: their variants share forward passes, and the memory of the searches grows with it.
    -> a frame with `id` and the bound columns."""
    sizes = unit_counts(examples, units)
    eligible = set(boundable(sizes, beam_max_units))
    indices = [i for i in (range(len(examples)) if chosen is None else chosen) if i in eligible]
    bounds: dict[tuple[int, str], tuple[float, float]] = {}
    for start in range(0, len(indices), group):  # a group's searches advance together, its cache then goes
        members = indices[start : start + group]
        scores = _Scores(model, examples, units, op, max_tokens, members)
        searches = []
        for i in members:
            chain = levels(sizes[i], bins)
            for kind in KINDS:
                if sizes[i] <= exact_max_units:
                    bounds[(i, kind)] = _exact(scores, i, sizes[i], chain, kind)
                else:
                    searches.append((i, sizes[i], chain, kind))
        if searches:
            bounds |= _beam(scores, searches, beam_width)
    rows = []
    for i in indices:
        row = {"id": examples[i].id, "bounds": "exact" if sizes[i] <= exact_max_units else "beam"}
        for kind in KINDS:
            low, high = bounds[(i, kind)]
            row[f"{kind}_min"], row[f"{kind}_max"] = low / len(bins), high / len(bins)
        rows.append(row)
    return pd.DataFrame(rows, columns=["id", *BOUND_COLUMNS])


def widen(bounds: pd.DataFrame, per_instance: pd.DataFrame) -> pd.DataFrame:
    """Bounds widened to every ranking's own per-instance AOPC (`per_instance`: id, comprehensiveness,
    sufficiency, one row per ranking and instance): a beam search can miss an ordering a ranking found.
    Exact bounds contain them already, up to rounding."""
    observed = per_instance.groupby("id", sort=False).agg(
        comprehensiveness_lo=("comprehensiveness", "min"),
        comprehensiveness_hi=("comprehensiveness", "max"),
        sufficiency_lo=("sufficiency", "min"),
        sufficiency_hi=("sufficiency", "max"),
    )
    out = bounds.set_index("id").join(observed, how="left")
    for kind in KINDS:
        out[f"{kind}_min"] = np.fmin(out[f"{kind}_min"], out[f"{kind}_lo"])
        out[f"{kind}_max"] = np.fmax(out[f"{kind}_max"], out[f"{kind}_hi"])
    return out[list(BOUND_COLUMNS)].reset_index()
