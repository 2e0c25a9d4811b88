"""One contract for every comparison with a paper: a tidy table, one row per compared number.

| column | meaning |
|---|---|
| `paper` | e.g. "Jain & Wallace 2019" |
| `table` | the table or figure of the paper (or the code file) the published value comes from |
| `dataset`, `model`, `seed` | our run (`seed` empty for a finding, which rests on several) |
| `seeds` | how many seeds (trained models) our number rests on |
| `quantity` | what is compared, e.g. "mean tau(attention, gradient), class 0" |
| `ours`, `published` | the two numbers (`published` empty for a qualitative claim); a finding's `ours` is the mean over its seeds |
| `sd` | the standard deviation of `ours` across the seeds (empty for one seed) |
| `tolerance` | how close counts as a match (empty: no numeric comparison) |
| `verdict` | `match` / `differs` (numeric), `holds` / `does not hold` / `inconclusive` (qualitative), `not comparable: <why>`, `reference only`, `not public: <why>` (no published value transcribed), `not in the paper: <why>` (the paper reports no such number for this dataset), `undefined` |
| `source` | where the published value comes from (paper, repository commit, reference file) |
| `condition` | what produced ours, in words: the settings below, then whatever else the claim depends on |
| `select_on` | our checkpoint selection (`dev`, `test`; empty: not a trained model's number) |
| `embeddings` | our word vectors (`metrics.json` provenance: `glove6b50`, `word2vec_local`, `random`, …) |
| `stand_ins` | the stand-in files that replaced the dataset's canonical files (`none`: the real data) |
| `stands_for` | the paper's dataset ours stands for, where that is another dataset (S&S's `yahoo` for our `20news20`) |
| `deviations` | the `D-…` ids of docs/decisions.md by which this number's protocol differs from the paper's, comma-separated |

| `low`, `high` | the 95 % interval of `ours` (`attnexp.verdicts`): over seeds and test instances for a finding, over seeds for a pooled number |
| `p_value`, `q_value` | a finding's two-sided bootstrap p-value against its threshold, and the same adjusted across every counted finding of the table (Benjamini-Hochberg) |
| `threshold_sensitive` | a finding whose verdict changes when our threshold (one the paper does not state) is halved or doubled |

The settings columns are the `Setting` of a claim: the scorecard's cause rules read them, never the
condition's words.

A *finding* (`finding`) is a paper's conclusion in words, tested as a statistic per trained model
against a threshold on the finding's side, over every seed of the model: `holds` when the 95 %
interval over seeds and test instances lies on the finding's side, `does not hold` when it lies on
the other, `inconclusive` otherwise (`attnexp.verdicts`); not compared on fewer than `MIN_SEEDS` seeds.

A number a paper's table rule computes per trained model (one row per seed) is pooled over the seeds
of its model by `over_seeds` when the papers' claims are stacked: `ours` becomes the mean, `sd` the
spread, and a numeric claim matches when the mean lies within the tolerance of the published value
(the tolerance comes from the authors' own variability for that kind of quantity, never from our
seeds); the interval over the seeds is printed beside it. A qualitative claim made per seed holds when
it holds on every seed, does not hold when it holds on none, and is inconclusive otherwise.

Each paper's table rule writes `results/claims/<name>.csv` with `write_claims` (one row per seed);
`concatenate` stacks them and pools them over the seeds into `results/tables/claims.csv` (the
scorecard reads that).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from attnexp import io, verdicts
from attnexp.markdown import to_markdown
from attnexp.verdicts import Evidence

__all__ = [
    "CLAIM_COLUMNS",
    "SETTING_COLUMNS",
    "EMPTY_WHEN_MISSING",
    "MIN_SEEDS",
    "Setting",
    "run_setting",
    "claim",
    "MAJORITY",
    "share_span",
    "finding",
    "numeric_verdict",
    "over_seeds",
    "claims_frame",
    "write_claims",
    "read_claims",
    "concatenate",
    "with_q_values",
    "claims_markdown",
]

SETTING_COLUMNS = ("select_on", "embeddings", "stand_ins", "stands_for", "deviations")
CLAIM_COLUMNS = (
    (
        "paper",
        "table",
        "dataset",
        "model",
        "seed",
        "seeds",
        "quantity",
        "ours",
        "sd",
        "published",
        "tolerance",
        "verdict",
        "source",
        "condition",
    )
    + SETTING_COLUMNS
    + ("low", "high", "p_value", "q_value", "threshold_sensitive")
)
# the columns whose empty cell is a missing value (the others keep "" as text)
EMPTY_WHEN_MISSING = (
    "ours",
    "sd",
    "published",
    "tolerance",
    "seed",
    "low",
    "high",
    "p_value",
    "q_value",
    "threshold_sensitive",
)
MIN_SEEDS = 3  # a finding rests on at least this many seeds of each model it concerns


@dataclass(frozen=True)
class Setting:
    """What produced our number, as the scorecard's cause rules read it (the module's table)."""

    select_on: str = ""
    embeddings: str = ""
    stand_ins: str = ""
    stands_for: str = ""
    deviations: tuple[str, ...] = ()

    def words(self) -> str:
        """The run's part of the condition: "select_on=dev; embeddings=word2vec; stand-ins=none"."""
        parts = (("select_on", self.select_on), ("embeddings", self.embeddings), ("stand-ins", self.stand_ins))
        return "; ".join(f"{key}={value}" for key, value in parts if value)

    def deviating(self, *ids: str | None) -> Setting:
        """The same setting with the given `D-…` ids added (None: skipped)."""
        added = tuple(i for i in ids if i and i not in self.deviations)
        return replace(self, deviations=self.deviations + added)


def run_setting(trained: dict) -> Setting:
    """The setting of a trained model from its metrics.json: selection, vectors and stand-in files."""
    provenance = trained.get("provenance", {})
    return Setting(trained["select_on"], provenance.get("embeddings", "random"), provenance.get("substitutes", "none"))


def numeric_verdict(ours: float, published: float, tolerance: float | None, not_comparable: str | None = None) -> str:
    """`not comparable: <why>` when the settings differ (e.g. checkpoint selection), `reference only`
    without a tolerance, `undefined` when either number is missing, else `match` / `differs`."""
    if not_comparable:
        return f"not comparable: {not_comparable}"
    if tolerance is None:
        return "reference only"
    if ours is None or published is None or math.isnan(ours) or math.isnan(published):
        return "undefined"
    return "match" if abs(ours - published) <= tolerance + 1e-12 else "differs"


def claim(
    paper: str,
    table: str,
    dataset: str,
    model: str,
    seed: int,
    quantity: str,
    *,
    ours,
    published=None,
    tolerance=None,
    verdict: str | None = None,
    source: str = "",
    condition: str = "",
    setting: Setting = Setting(),
) -> dict:
    """One row; the verdict is computed from the numbers unless given (qualitative claims). The
    condition column is the setting in words, then `condition` (what else the number depends on)."""
    if verdict is None:
        verdict = numeric_verdict(ours, published, tolerance)
    return {
        "paper": paper,
        "table": table,
        "dataset": dataset,
        "model": model,
        "seed": seed,
        "seeds": 1,
        "quantity": quantity,
        "ours": ours,
        "sd": None,
        "published": published,
        "tolerance": tolerance,
        "verdict": verdict,
        "source": source,
        "condition": "; ".join(part for part in (setting.words(), condition) if part),
        "select_on": setting.select_on,
        "embeddings": setting.embeddings,
        "stand_ins": setting.stand_ins,
        "stands_for": setting.stands_for,
        "deviations": ", ".join(setting.deviations),
        "low": None,
        "high": None,
        "p_value": None,
        "q_value": None,
        "threshold_sensitive": None,
    }


MAJORITY = "a majority of the instances"  # our reading of a share threshold of 0.5 the paper states in words


def share_span(threshold: float) -> tuple[float, float]:
    """Where a share's threshold t of ours is read again (`finding`'s `span`): t/2 and (1 + t)/2,
    since double a majority is more than every instance."""
    return (threshold / 2, (1 + threshold) / 2)


def finding(
    paper: str,
    table: str,
    dataset: str,
    model: str,
    quantity: str,
    per_seed: Mapping[int, Evidence | None],
    *,
    threshold: float,
    side: str,
    rule: str,
    source: str,
    setting: Setting = Setting(),
    undefined: str = "undefined",
    parameter: str | None = None,
    span: tuple[float, float] | None = None,
    variants: Mapping[str, Mapping[int, Evidence | None]] | None = None,
    cannot_fail: str | None = None,
) -> dict:
    """One finding of a paper on one model, over its seeds (`attnexp.verdicts`). `per_seed`: seed ->
    our statistic, a number or a `Sample` of per-instance values (None where it is undefined on that
    seed, `undefined` saying why); the finding puts the statistic `side` ("above"/"below") of
    `threshold`; `rule`: that test in words. `parameter`: the name of our threshold where the paper
    states none: the verdict is also read at half and double it, or at the ends of `span` (a share's
    threshold: `share_span`). `variants`: the per-seed evidence
    under other values of an instance-level parameter of ours (label -> per seed), read the same way.
    A verdict that changes over either is threshold-sensitive. `cannot_fail`: why the test cannot
    fail on this model (it is then not counted: `not comparable: …`).

    The verdict: `holds` / `does not hold` / `inconclusive` by the interval rule; `not comparable`
    on fewer than `MIN_SEEDS` seeds or where a seed's value is undefined. `ours` is the mean over the
    seeds, `sd` their spread, [`low`, `high`] the 95 % interval, `p_value` against the threshold."""
    seeds = sorted(per_seed)
    evidence = [per_seed[s] for s in seeds]
    values = [None if e is None else _value(e) for e in evidence]
    defined = [v for v in values if v is not None and not math.isnan(v)]
    shown = ", ".join(
        f"{s}: {'undefined' if v is None or math.isnan(v) else f'{v:.3f}'}" for s, v in zip(seeds, values)
    )
    low = high = p = sensitive = None
    ends = span or (threshold / 2, threshold * 2)  # where our threshold is read again
    if len(seeds) < MIN_SEEDS:
        verdict = f"not comparable: {len(seeds)} seed{'' if len(seeds) == 1 else 's'}, a finding needs {MIN_SEEDS}"
    elif len(defined) < len(values):
        missing = ", ".join(str(s) for s, v in zip(seeds, values) if v is None or math.isnan(v))
        verdict = f"not comparable: {undefined} on seed {missing}"
    else:
        found = verdicts.estimate(evidence)
        low, high = round(found.low, 4), round(found.high, 4)
        verdict = verdicts.verdict(found.low, found.high, threshold, side)
        p = round(verdicts.p_value(found.draws, threshold), 4)
        readings = {verdict}
        if parameter is not None and threshold != 0:
            readings |= {verdicts.verdict(found.low, found.high, t, side) for t in ends}
        for other in (variants or {}).values():
            if all(other.get(s) is not None for s in seeds):
                again = verdicts.estimate([other[s] for s in seeds])
                readings.add(verdicts.verdict(again.low, again.high, threshold, side))
        sensitive = len(readings) > 1
        if cannot_fail:
            verdict = f"not comparable: the test cannot fail here ({cannot_fail})"
    ours = round(sum(defined) / len(defined), 4) if defined else None
    sd = round(statistics.stdev(defined), 4) if len(defined) > 1 else None
    basis = (
        ""
        if low is None
        else (
            f"; 95 % interval [{low:.3f}, {high:.3f}] over {len(seeds)} seeds"
            + (
                " and their test instances"
                if any(isinstance(e, verdicts.Sample) for e in evidence)
                else " (one value per seed)"
            )
        )
    )
    named = f" ({parameter}, ours; also read at {ends[0]:g} and {ends[1]:g})" if parameter else ""
    row = claim(
        paper,
        table,
        dataset,
        model,
        None,
        quantity,
        ours=ours,
        verdict=verdict,
        source=source,
        condition=f"{rule}{named}; threshold {threshold:g}, {side}{basis}; per seed {shown}",
        setting=setting,
    )
    return row | {
        "seeds": len(seeds),
        "sd": sd,
        "low": low,
        "high": high,
        "p_value": p,
        "threshold_sensitive": sensitive,
    }


def _value(evidence: Evidence) -> float:
    return evidence.value if isinstance(evidence, verdicts.Sample) else float(evidence)


def claims_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows -> the contract's table; a row with missing or extra columns is an error naming them."""
    for i, row in enumerate(rows):
        if set(row) != set(CLAIM_COLUMNS):
            missing, extra = sorted(set(CLAIM_COLUMNS) - set(row)), sorted(set(row) - set(CLAIM_COLUMNS))
            raise ValueError(f"claim row {i}: missing columns {missing}, unexpected columns {extra}")
    return _typed(pd.DataFrame(rows, columns=list(CLAIM_COLUMNS)))


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    """`seed` and `seeds` as integers with gaps (a finding has no single seed: 10, not 10.0); `sd`,
    the interval and the p- and q-values numbers (empty where they do not apply); the sensitivity
    flag true/false/empty."""
    numbers = dict.fromkeys(("sd", "low", "high", "p_value", "q_value"), float)
    return table.astype({"seed": "Int64", "seeds": "Int64", "threshold_sensitive": "boolean"} | numbers)


def write_claims(path: str | Path, rows: list[dict]) -> pd.DataFrame:
    table = claims_frame(rows)
    io.write_csv(path, table, seal=True)
    return table


def read_claims(path: str | Path, sealed: bool = False) -> pd.DataFrame:
    """A claims table; `sealed` (a job reading another job's output): verified against its seal first."""
    text = {column: str for column in ("dataset", "model", "quantity", "verdict") + SETTING_COLUMNS}
    table = io.read_table(
        path,
        sealed,
        dtype=text,
        keep_default_na=False,
        na_values={c: [""] for c in EMPTY_WHEN_MISSING},
    )
    if tuple(table.columns) != CLAIM_COLUMNS:
        raise ValueError(f"{path}: expected the claim columns {list(CLAIM_COLUMNS)}, got {list(table.columns)}")
    return _typed(table)


# what identifies one claim across the seeds of its model (a verdict's kind is added: see over_seeds)
_SAME_CLAIM = (
    "paper",
    "table",
    "dataset",
    "model",
    "quantity",
    "published",
    "tolerance",
    "source",
    "condition",
) + SETTING_COLUMNS
_POOLED_KINDS = {
    "match": "numeric",
    "differs": "numeric",
    "holds": "qualitative",
    "does not hold": "qualitative",
    "inconclusive": "qualitative",
}


def _pooled(rows: pd.DataFrame, kind: str) -> dict:
    """One claim's per-seed rows (2 or more) -> one row over those seeds."""
    first = rows.iloc[0].to_dict()
    seeds = [int(s) for s in rows["seed"]]
    values = [float(v) for v in rows["ours"]]
    defined = [v for v in values if not math.isnan(v)]
    shown = ", ".join(f"{s}: {v:.4f}" for s, v in zip(seeds, values))
    ours = round(statistics.fmean(defined), 4) if defined else None
    sd = round(statistics.stdev(defined), 4) if len(defined) > 1 else None
    low = high = None
    if len(defined) == len(values):
        spread = verdicts.estimate(defined)
        low, high = round(spread.low, 4), round(spread.high, 4)
    if kind == "numeric" and len(defined) == len(values):
        published, tolerance = float(first["published"]), float(first["tolerance"])
        verdict = "match" if abs(statistics.fmean(defined) - published) <= tolerance + 1e-12 else "differs"
        rule = (
            f"the mean of {len(seeds)} seeds within the tolerance of the published value "
            f"(95 % interval over the seeds [{low:.4f}, {high:.4f}])"
        )
    elif kind == "qualitative":
        held = int((rows["verdict"] == "holds").sum())
        verdict = "holds" if held == len(rows) else "does not hold" if held == 0 else "inconclusive"
        rule = f"holds on {held} of {len(rows)} seeds (holds on every seed: holds; on none: does not hold; else inconclusive)"
    else:
        verdict, rule = first["verdict"], "the same verdict on every seed"
    condition = "; ".join(part for part in (first["condition"], f"{rule}; per seed {shown}") if part)
    return first | {
        "seed": None,
        "seeds": len(seeds),
        "ours": ours,
        "sd": sd,
        "verdict": verdict,
        "condition": condition,
        "low": low,
        "high": high,
    }


def over_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """Per-seed rows of the same claim (same paper, table, dataset, model, quantity, published value,
    tolerance, source, condition and setting) pooled into one row, where the seeds agree on the kind
    of verdict: numeric (`match`/`differs`: the published value within our seeds' range widened by
    the tolerance), qualitative (`holds` on every seed, else `does not hold`) or the same other verdict
    (`reference only`, `not comparable: …`); rows of a single seed, and findings (already over their
    seeds), stay as they are. The pooled row takes the place of the claim's first seed."""
    if table.empty:
        return table
    groups: dict[tuple, list[int]] = {}
    for i, row in table.iterrows():
        kind = _POOLED_KINDS.get(row["verdict"], row["verdict"])
        key = (
            (i,) if pd.isna(row["seed"]) else tuple(None if pd.isna(row[c]) else row[c] for c in _SAME_CLAIM) + (kind,)
        )
        groups.setdefault(key, []).append(i)
    rows = []
    for key, members in groups.items():  # in the order of each claim's first row
        group = table.loc[members]
        rows.append(group.iloc[0].to_dict() if len(members) == 1 else _pooled(group.sort_values("seed"), key[-1]))
    return _typed(pd.DataFrame(rows, columns=list(CLAIM_COLUMNS)))


def concatenate(paths: list[str | Path], sealed: bool = False) -> pd.DataFrame:
    """Every paper's claims in one table, in the order given, pooled over the seeds (`over_seeds`),
    with the findings' q-values (`with_q_values`)."""
    parts = [read_claims(p, sealed) for p in paths]
    return with_q_values(over_seeds(pd.concat(parts, ignore_index=True))) if parts else claims_frame([])


def with_q_values(table: pd.DataFrame) -> pd.DataFrame:
    """`q_value`: each counted finding's p-value adjusted across all counted findings of the table by
    Benjamini-Hochberg (`attnexp.verdicts.q_values`); a finding not counted (`not comparable: …`) has none."""
    table = table.copy()
    counted = table["p_value"].notna() & ~table["verdict"].str.startswith("not comparable")
    table["q_value"] = np.nan
    table.loc[counted, "q_value"] = np.round(verdicts.q_values(table.loc[counted, "p_value"].to_numpy()), 4)
    return _typed(table)


def claims_markdown(table: pd.DataFrame) -> str:
    """Counts of verdicts per paper, then every row (numbers to 3 decimals)."""
    verdict = table["verdict"].str.split(":").str[0]
    counts = table.assign(verdict=verdict).groupby(["paper", "verdict"], sort=True).size().rename("rows").reset_index()
    shown = table.copy()
    for column in ("ours", "sd", "published", "tolerance"):
        shown[column] = shown[column].map(lambda v: v if isinstance(v, str) else (None if pd.isna(v) else f"{v:.3f}"))
    return (
        "# Claims: our numbers beside the published ones\n\n"
        "One row per compared number (`attnexp.claims`). Verdicts: `match`/`differs` within the tolerance, "
        "`holds`/`does not hold` for qualitative claims, `not comparable` where our setting differs from the paper's.\n\n"
        + to_markdown(counts)
        + "\n"
        + to_markdown(shown)
    )
