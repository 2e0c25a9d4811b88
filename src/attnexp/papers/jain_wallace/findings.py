"""Jain & Wallace's correlation, permutation and adversarial findings as claims, each on every seed
of the models they concern (`attnexp.claims.finding`).

- §4.1, correlations (Table 2): a BiLSTM's attention correlates only weakly with gradient and
  leave-one-out importance: per model, the larger of its mean τ(attention, gradient) and mean
  τ(attention, loo) over all test instances is below `weak_tau`; gradient and leave-one-out agree with
  each other more than either does with attention: mean τ(gradient, loo) minus that larger one is above
  0; and an Average encoder's attention correlates better with gradients than a BiLSTM's with the
  same attention: mean τ(attention, gradient) of the Average model minus the BiLSTM's, seed by seed,
  is above 0 (`correlation_claims`).
- §4.2, permutation: randomly permuting the attention weights often changes the output only
  minimally, even where attention is peaked. Per model: the share of test instances whose median
  output change over the permutations is at most `minimal_output_change`, over every instance and
  over those whose largest weight is at least `peaked_attention` (undefined on a seed with fewer than
  `min_peaked_instances` of them).
- §4.3, adversarial attention: attention distributions very different from the model's exist that
  leave the prediction effectively unchanged (within ε). Per model: the share of test instances whose
  ε-max JSD is at least `very_different_jsd`.

Each §4.2-4.3 finding holds on a seed when its share exceeds `often` ("often": for most instances). The
thresholds are `jain_wallace.findings` in the config; J&W state these findings in words and
figures, not numbers, so each claim's condition says the thresholds it was tested with.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnexp.claims import Setting, finding, share_span
from attnexp.verdicts import Sample, share

__all__ = [
    "CORRELATION",
    "PERMUTATION",
    "ADVERSARIAL",
    "permutation_share",
    "adversarial_share",
    "finding_claims",
    "correlation_claims",
]

PAPER = "Jain & Wallace 2019"
CORRELATION = "§4.1, attention vs gradient and leave-one-out (Table 2)"
PERMUTATION = "§4.2, attention permutation (Figure 4)"
ADVERSARIAL = "§4.3, adversarial attention (Figures 6-7)"
SOURCE = "Jain & Wallace 2019, abstract and §4.2-4.3 (findings stated in words; the thresholds are ours)"
CORRELATION_SOURCE = "Jain & Wallace 2019, §4.1 and Table 2 (findings stated in words; the thresholds are ours)"
# J&W run both experiments on their BiLSTM models, and call the BiLSTMs' correlations weak
ENCODERS = ("lstm",)
# the correlation pairs (`overall_means`: mean τ over all test instances), and the encoder whose
# attention J&W found to agree better with gradients than the BiLSTM's
GRADIENT, LOO, BETWEEN = "attention~gradient", "attention~loo", "gradient~loo"
AVERAGE = "average"


def permutation_share(
    permutation: pd.DataFrame, minimal: float, peaked: float | None = None, min_instances: int = 1
) -> float | None:
    """The share of instances (those with max attention >= `peaked`, if given) whose median output
    change under permutation is at most `minimal`; None with fewer than `min_instances` of them."""
    rows = permutation if peaked is None else permutation[permutation["max_attention"] >= peaked]
    if len(rows) < min_instances:
        return None
    return float((rows["median_output_difference"] <= minimal).mean())


def adversarial_share(adversarial: pd.DataFrame, very_different: float) -> float | None:
    """The share of instances whose ε-max JSD is at least `very_different`; None without instances."""
    return float((adversarial["eps_max_jsd"] >= very_different).mean()) if len(adversarial) else None


def _peaked_count(permutation: pd.DataFrame, peaked: float) -> int:
    return int((permutation["max_attention"] >= peaked).sum())


def _permutation_sample(permutation: pd.DataFrame, minimal: float, peaked: float | None = None, few: int = 1):
    """The share of `permutation_share` as a Sample of its instances; None where it is undefined."""
    rows = permutation if peaked is None else permutation[permutation["max_attention"] >= peaked]
    return share(rows["median_output_difference"].to_numpy() <= minimal) if len(rows) >= max(few, 1) else None


def _adversarial_sample(adversarial: pd.DataFrame, very_different: float):
    return share(adversarial["eps_max_jsd"].to_numpy() >= very_different) if len(adversarial) else None


def finding_claims(runs: list[dict], thresholds: dict) -> list[dict]:
    """One claim per finding and BiLSTM model over its seeds, each from the instances of every seed
    (`attnexp.verdicts.Sample`). `runs`: {dataset, model, seed, setting (`Setting`), encoder,
    permutation, adversarial (the experiments' tables)}; `thresholds`: `jain_wallace.findings`. Each
    threshold is ours (J&W state these findings in words): the verdict is also read at half and double
    the instance-level one (`minimal_output_change`, `very_different_jsd`) and the share's (`often`).
    The permutation findings cannot fail where attention is near uniform on every seed (fewer than
    `min_peaked_instances` instances with max attention at least `peaked_attention`): permuting a
    uniform distribution changes nothing, so they are not counted there."""
    minimal, peaked, few = (
        thresholds["minimal_output_change"],
        thresholds["peaked_attention"],
        thresholds["min_peaked_instances"],
    )
    very_different, often = thresholds["very_different_jsd"], thresholds["often"]
    models: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        if run["encoder"] in ENCODERS:
            models.setdefault((run["dataset"], run["model"]), []).append(run)
    rule = "the share exceeds 'often' (J&W: 'often', for most instances)"
    rows = []
    for (dataset, model), seeds in sorted(models.items()):
        setting: Setting = seeds[0]["setting"]

        def each(evidence) -> dict[int, object]:
            return {int(r["seed"]): evidence(r) for r in seeds}

        def halved_and_doubled(evidence, value) -> dict[str, dict[int, object]]:
            return {f"{factor}x": each(lambda r: evidence(r, value * factor)) for factor in (0.5, 2)}

        uniform = all(_peaked_count(r["permutation"], peaked) < few for r in seeds)
        cannot_fail = (
            f"attention near uniform: fewer than {few} test instances with max attention at least {peaked} on every seed"
            if uniform
            else None
        )
        common = {"threshold": often, "side": "above", "rule": rule, "source": SOURCE, "setting": setting}
        common |= {"parameter": "jain_wallace.findings.often", "span": share_span(often)}
        rows += [
            finding(
                PAPER,
                PERMUTATION,
                dataset,
                model,
                f"share of test instances whose median output change under permutation is at most {minimal}",
                each(lambda r: _permutation_sample(r["permutation"], minimal)),
                variants=halved_and_doubled(lambda r, m: _permutation_sample(r["permutation"], m), minimal),
                cannot_fail=cannot_fail,
                **common,
            ),
            finding(
                PAPER,
                PERMUTATION,
                dataset,
                model,
                f"the same among instances with max attention at least {peaked} (peaked attention)",
                each(lambda r: _permutation_sample(r["permutation"], minimal, peaked, few)),
                undefined=f"fewer than {few} test instances with max attention at least {peaked}",
                variants=halved_and_doubled(
                    lambda r, m: _permutation_sample(r["permutation"], m, peaked, few), minimal
                ),
                cannot_fail=cannot_fail,
                **common,
            ),
            finding(
                PAPER,
                ADVERSARIAL,
                dataset,
                model,
                f"share of test instances with an adversarial attention of JSD at least {very_different} from the model's within ε of its output",
                each(lambda r: _adversarial_sample(r["adversarial"], very_different)),
                variants=halved_and_doubled(lambda r, v: _adversarial_sample(r["adversarial"], v), very_different),
                **common,
            ),
        ]
    return rows


def _tau(pair: str) -> str:
    return f"mean tau({pair.replace('~', ', ')})"


def _taus(correlations: pd.DataFrame) -> pd.DataFrame:
    """Per-instance τ, one column per pair (NaN where τ is undefined on the instance)."""
    return correlations.pivot_table(index="id", columns="pair", values="tau", aggfunc="first", dropna=False)


def _tau_sample(taus: pd.DataFrame, pairs: dict[str, str], statistic) -> Sample | None:
    """A Sample of the instances of `taus` (rows: instances; `pairs`: name -> column) whose statistic
    reads each pair's mean τ over the instances where it is defined, as `overall_means` does:
    `statistic(mean)` with `mean(name)` that pair's mean. None where a pair is missing."""
    if not all(column in taus.columns for column in pairs.values()):
        return None
    columns = {}
    for name, column in pairs.items():
        tau = taus[column].to_numpy(dtype=float)
        columns[f"sum {name}"] = np.nan_to_num(tau)
        columns[f"defined {name}"] = (~np.isnan(tau)).astype(float)
    if not all(columns[f"defined {name}"].any() for name in pairs):
        return None
    return Sample(columns, lambda m: statistic(lambda name: m[f"sum {name}"] / m[f"defined {name}"]))


def _largest(taus: pd.DataFrame, pairs: tuple[str, ...]) -> Sample | None:
    """The largest mean τ among `pairs`; None where a run lacks one of them."""
    return _tau_sample(taus, {p: p for p in pairs}, lambda mean: np.max([mean(p) for p in pairs], axis=0))


def _agreement(taus: pd.DataFrame) -> Sample | None:
    """Mean τ(gradient, loo) minus the larger of attention's two; None where a run lacks a pair."""
    return _tau_sample(
        taus,
        {p: p for p in (GRADIENT, LOO, BETWEEN)},
        lambda mean: mean(BETWEEN) - np.maximum(mean(GRADIENT), mean(LOO)),
    )


def correlation_claims(runs: list[dict], thresholds: dict) -> list[dict]:
    """J&W's §4.1 findings on every seed, from each run's per-instance τ (its `correlations` table,
    as `overall_means` averages it). `runs`: {dataset, model, seed, setting (`Setting`), encoder,
    attention, correlations}; `thresholds`: `jain_wallace.findings` (`weak_tau`, ours: J&W say
    'weak'). Per BiLSTM model: attention's weak correlation (over the attention pairs measured:
    without leave-one-out, gradient alone, as the quantity says) and gradient and leave-one-out
    agreeing more with each other (where all three pairs were measured). Per dataset and attention:
    the Average model against the BiLSTM, on the seeds and test instances both have, in the BiLSTM
    run's setting. A seed without a pair its model's other seeds have is undefined."""
    weak = thresholds["weak_tau"]
    models: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        models.setdefault((run["dataset"], run["model"]), [])
        models[(run["dataset"], run["model"])].append(run | {"taus": _taus(run["correlations"])})
    undefined = "no mean tau of a pair the model's other seeds have"
    rows = []
    for (dataset, model), seeds in sorted(models.items()):
        if seeds[0]["encoder"] not in ENCODERS:
            continue
        setting: Setting = seeds[0]["setting"]
        measured = {pair for r in seeds for pair in r["taus"].columns}
        pairs = tuple(p for p in (GRADIENT, LOO) if p in measured)
        if pairs:
            missing = "leave-one-out" if LOO not in pairs else "gradient"
            named = (
                " and ".join(map(_tau, pairs))
                if len(pairs) == 2
                else f"{_tau(pairs[0])} alone ({missing} not measured)"
            )
            rows.append(
                finding(
                    PAPER,
                    CORRELATION,
                    dataset,
                    model,
                    f"the larger of {named}, all test instances; weak: below {weak}",
                    {int(r["seed"]): _largest(r["taus"], pairs) for r in seeds},
                    threshold=weak,
                    side="below",
                    rule="attention's correlation is weak (J&W: 'weak', 'modest'; their Table 2 BiLSTM means are 0.05-0.47)",
                    source=CORRELATION_SOURCE,
                    setting=setting,
                    undefined=undefined,
                    parameter="jain_wallace.findings.weak_tau",
                )
            )
        if {GRADIENT, LOO, BETWEEN} <= measured:
            rows.append(
                finding(
                    PAPER,
                    CORRELATION,
                    dataset,
                    model,
                    f"{_tau(BETWEEN)} minus the larger of {_tau(GRADIENT)} and {_tau(LOO)}, all test instances",
                    {int(r["seed"]): _agreement(r["taus"]) for r in seeds},
                    threshold=0,
                    side="above",
                    rule="gradient and leave-one-out agree with each other more than either does with attention",
                    source=CORRELATION_SOURCE,
                    setting=setting,
                    undefined=undefined,
                )
            )
    return sorted(rows + _encoder_claims(models), key=lambda r: r["dataset"])  # stable: per dataset, the BiLSTMs' first


def _encoder_difference(average: pd.DataFrame, lstm: pd.DataFrame) -> Sample | None:
    """Mean τ(attention, gradient) of the Average model minus the BiLSTM's, over the test instances
    both have (each mean over the instances where its τ is defined); None where one lacks the pair."""
    if GRADIENT not in average.columns or GRADIENT not in lstm.columns:
        return None
    both = pd.concat([average[GRADIENT].rename("average"), lstm[GRADIENT].rename("lstm")], axis=1, join="inner")
    if both.empty:
        return None
    return _tau_sample(both, {"average": "average", "lstm": "lstm"}, lambda mean: mean("average") - mean("lstm"))


def _encoder_claims(models: dict[tuple[str, str], list[dict]]) -> list[dict]:
    """Per dataset and attention kind, each Average model against each BiLSTM model: mean
    τ(attention, gradient) of the Average model minus the BiLSTM's, on the seeds both have."""
    kinds: dict[tuple[str, str, str], list[str]] = {}
    for (dataset, model), seeds in models.items():
        kinds.setdefault((dataset, seeds[0]["attention"], seeds[0]["encoder"]), []).append(model)
    rows = []
    for (dataset, attention, encoder), averages in sorted(kinds.items()):
        if encoder != AVERAGE:
            continue
        for average in sorted(averages):
            for lstm in sorted(kinds.get((dataset, attention, ENCODERS[0]), [])):
                first = {int(r["seed"]): r["taus"] for r in models[(dataset, average)]}
                second = {int(r["seed"]): r["taus"] for r in models[(dataset, lstm)]}
                if not any(GRADIENT in t.columns for t in (*first.values(), *second.values())):
                    continue  # gradients not measured
                shared = sorted(set(first) & set(second))
                rows.append(
                    finding(
                        PAPER,
                        CORRELATION,
                        dataset,
                        f"{average} vs {lstm}",
                        f"{_tau(GRADIENT)} of the Average encoder minus the BiLSTM's ({attention} attention, the same seed), all test instances",
                        {s: _encoder_difference(first[s], second[s]) for s in shared},
                        threshold=0,
                        side="above",
                        rule="the Average encoders' attention correlates better with gradients (J&W §4.1); "
                        "on the seeds and test instances both models have; the BiLSTM run's setting",
                        source=CORRELATION_SOURCE,
                        setting=models[(dataset, lstm)][0]["setting"],
                        undefined=f"no {_tau(GRADIENT)} of one of the two models",
                    )
                )
    return rows
