"""One statistical rule for every finding: a 95 % interval over seeds and test instances, and a
three-valued verdict read from it.

A finding is a statistic per trained model (a share of instances, a mean τ, a difference of F1)
compared with a threshold on the finding's side (`above` or `below`). Its evidence is one value per
seed, or, where the per-instance values are known, a `Sample`: columns of per-instance values whose
means make the seed's statistic (a share is the mean of a 0/1 column; an F1 the ratio of the means
of true-positive, false-positive and false-negative indicators).

**The interval** is a two-stage (hierarchical) percentile bootstrap: each draw resamples the seeds
with replacement, then the test instances within each drawn seed (a seed known only as one value
keeps it), and averages the seeds' statistics. 95 % of the draws lie in [low, high]. With 3 seeds,
one draw in 27 takes the same seed three times, so the interval spans at least the range of the
seeds: a finding never rests on one seed.

**The verdict**: `holds` when the whole interval lies on the finding's side of the threshold,
`does not hold` when it lies wholly on the other side, `inconclusive` otherwise.

**Multiple findings**: each finding's two-sided bootstrap p-value against its threshold (`p_value`)
is adjusted across all findings by Benjamini-Hochberg (`scipy.stats.false_discovery_control`,
`q_values`); a finding is decided at a false discovery rate of 5 % when its q-value is at most 0.05.

**Threshold sensitivity**: where the paper states no threshold, ours is a named parameter; the
verdict is recomputed at half and at double its value, and a verdict that changes in that range is
marked threshold-sensitive.

Draws come from a fixed seed, so a rerun gives the same interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "HOLDS",
    "DOES_NOT_HOLD",
    "INCONCLUSIVE",
    "CONFIDENCE",
    "RESAMPLES",
    "FDR",
    "Sample",
    "Estimate",
    "estimate",
    "verdict",
    "p_value",
    "q_values",
    "share",
]

HOLDS, DOES_NOT_HOLD, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
CONFIDENCE = 0.95
RESAMPLES = 2000
FDR = 0.05  # the false discovery rate at which `q_values` decide a finding
_SEED = 20190  # the bootstrap's own seed: a rerun draws the same resamples
_CELLS = 4_000_000  # resampled instance indices held at once (memory bound of one chunk)


@dataclass(frozen=True)
class Sample:
    """One seed's per-instance evidence. `columns`: equal-length arrays, one entry per test instance,
    resampled together (the same instances); `statistic`: the seed's statistic from the columns'
    means, vectorised (each mean an array of draws)."""

    columns: Mapping[str, np.ndarray]
    statistic: Callable[[Mapping[str, np.ndarray]], np.ndarray]

    def __post_init__(self):
        lengths = {len(np.asarray(c)) for c in self.columns.values()}
        if len(lengths) != 1 or 0 in lengths:
            raise ValueError(f"a Sample needs non-empty columns of one length, got lengths {sorted(lengths)}")

    @property
    def size(self) -> int:
        return len(next(iter(self.columns.values())))

    @property
    def value(self) -> float:
        means = {name: np.asarray([np.mean(np.asarray(c, dtype=float))]) for name, c in self.columns.items()}
        return float(np.asarray(self.statistic(means))[0])

    def draws(self, resamples: int, rng: np.random.Generator) -> np.ndarray:
        """The statistic on `resamples` bootstrap resamples of the instances."""
        columns = {name: np.asarray(c, dtype=float) for name, c in self.columns.items()}
        n = self.size
        chunk = max(1, _CELLS // n)
        means = {name: np.empty(resamples) for name in columns}
        for start in range(0, resamples, chunk):
            rows = rng.integers(0, n, size=(min(chunk, resamples - start), n))
            for name, column in columns.items():
                means[name][start : start + len(rows)] = column[rows].mean(axis=1)
        return np.asarray(self.statistic(means), dtype=float)


def share(indicator) -> Sample:
    """The share of instances where `indicator` is true, as a Sample."""
    return Sample({"x": np.asarray(indicator, dtype=float)}, lambda m: m["x"])


Evidence = float | Sample


@dataclass(frozen=True)
class Estimate:
    """A finding's statistic over its seeds: `value` (the mean of the seeds' statistics), the
    interval [`low`, `high`], the bootstrap `draws` it came from, and how many seeds and (in total)
    instances it rests on (`instances` 0: the seeds are known as single values only)."""

    value: float
    low: float
    high: float
    draws: np.ndarray
    seeds: int
    instances: int


def _value(evidence: Evidence) -> float:
    return evidence.value if isinstance(evidence, Sample) else float(evidence)


def estimate(per_seed: Sequence[Evidence], resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> Estimate:
    """The two-stage bootstrap interval of the mean over seeds (module docstring)."""
    if not per_seed:
        raise ValueError("an estimate needs at least one seed")
    rng = np.random.default_rng(_SEED)
    within = np.stack(
        [e.draws(resamples, rng) if isinstance(e, Sample) else np.full(resamples, float(e)) for e in per_seed]
    )
    picked = rng.integers(0, len(per_seed), size=(resamples, len(per_seed)))
    draws = within[picked, np.arange(resamples)[:, None]].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    value = float(np.mean([_value(e) for e in per_seed]))
    instances = sum(e.size for e in per_seed if isinstance(e, Sample))
    return Estimate(value, float(low), float(high), draws, len(per_seed), instances)


def verdict(low: float, high: float, threshold: float, side: str) -> str:
    """`holds` / `does not hold` / `inconclusive` of an interval against a threshold; `side`: where
    the finding puts the statistic, "above" (strictly) or "below" (strictly)."""
    if side not in ("above", "below"):
        raise ValueError(f"side must be 'above' or 'below', got {side!r}")
    if side == "above":
        return HOLDS if low > threshold else DOES_NOT_HOLD if high <= threshold else INCONCLUSIVE
    return HOLDS if high < threshold else DOES_NOT_HOLD if low >= threshold else INCONCLUSIVE


def p_value(draws: np.ndarray, threshold: float) -> float:
    """Two-sided bootstrap p-value of the statistic against the threshold: twice the smaller share of
    draws on either side of it (with the usual +1 correction), at most 1."""
    n = len(draws)
    below = (1 + np.count_nonzero(draws <= threshold)) / (n + 1)
    above = (1 + np.count_nonzero(draws >= threshold)) / (n + 1)
    return float(min(1.0, 2 * min(below, above)))


def q_values(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (`scipy.stats.false_discovery_control`); empty in, empty out."""
    p = np.asarray(p_values, dtype=float)
    return stats.false_discovery_control(p, method="bh") if len(p) else p
