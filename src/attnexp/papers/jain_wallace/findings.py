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

import pandas as pd

from attnexp.claims import Setting, finding

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


def finding_claims(runs: list[dict], thresholds: dict) -> list[dict]:
    """One claim per finding and BiLSTM model over its seeds. `runs`: {dataset, model, seed, setting
    (`Setting`), encoder, permutation, adversarial (the experiments' tables)}; `thresholds`:
    `jain_wallace.findings`."""
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
    rule = f"holds on a seed when the share exceeds {often} (J&W: 'often')"
    rows = []
    for (dataset, model), seeds in sorted(models.items()):
        setting: Setting = seeds[0]["setting"]

        def each(share) -> dict[int, float | None]:
            return {int(r["seed"]): share(r) for r in seeds}

        rows += [
            finding(
                PAPER,
                PERMUTATION,
                dataset,
                model,
                f"share of test instances whose median output change under permutation is at most {minimal}",
                each(lambda r: permutation_share(r["permutation"], minimal)),
                lambda v: v > often,
                rule,
                SOURCE,
                setting,
            ),
            finding(
                PAPER,
                PERMUTATION,
                dataset,
                model,
                f"the same among instances with max attention at least {peaked} (peaked attention)",
                each(lambda r: permutation_share(r["permutation"], minimal, peaked, few)),
                lambda v: v > often,
                rule,
                SOURCE,
                setting,
                undefined=f"fewer than {few} test instances with max attention at least {peaked}",
            ),
            finding(
                PAPER,
                ADVERSARIAL,
                dataset,
                model,
                f"share of test instances with an adversarial attention of JSD at least {very_different} from the model's within ε of its output",
                each(lambda r: adversarial_share(r["adversarial"], very_different)),
                lambda v: v > often,
                rule,
                SOURCE,
                setting,
            ),
        ]
    return rows


def _tau(pair: str) -> str:
    return f"mean tau({pair.replace('~', ', ')})"


def _largest(means: dict[str, float], pairs: tuple[str, ...]) -> float | None:
    """The largest mean τ among `pairs`; None where a run lacks one of them."""
    return max(means[p] for p in pairs) if all(p in means for p in pairs) else None


def _agreement(means: dict[str, float]) -> float | None:
    """Mean τ(gradient, loo) minus the larger of attention's two; None where a run lacks a pair."""
    larger = _largest(means, (GRADIENT, LOO))
    return None if larger is None or BETWEEN not in means else means[BETWEEN] - larger


def correlation_claims(runs: list[dict], thresholds: dict) -> list[dict]:
    """J&W's §4.1 findings on every seed, from each run's mean τ per pair over all test instances.
    `runs`: {dataset, model, seed, setting (`Setting`), encoder, attention, means (`overall_means`:
    pair -> mean τ)}; `thresholds`: `jain_wallace.findings` (`weak_tau`). Per BiLSTM model: attention's
    weak correlation (over the attention pairs measured: without leave-one-out, gradient alone, as the
    quantity says) and gradient and leave-one-out agreeing more with each other (where all three pairs
    were measured). Per dataset and attention: the Average model against the BiLSTM, on the seeds both
    have, in the BiLSTM run's setting. A seed without a pair its model's other seeds have is undefined."""
    weak = thresholds["weak_tau"]
    models: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        models.setdefault((run["dataset"], run["model"]), []).append(run)
    undefined = "no mean tau of a pair the model's other seeds have"
    rows = []
    for (dataset, model), seeds in sorted(models.items()):
        if seeds[0]["encoder"] not in ENCODERS:
            continue
        setting: Setting = seeds[0]["setting"]
        measured = {pair for r in seeds for pair in r["means"]}
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
                    {int(r["seed"]): _largest(r["means"], pairs) for r in seeds},
                    lambda v: v < weak,
                    f"holds on a seed when it is below {weak} (J&W: 'weak', 'modest'; their Table 2 BiLSTM means are 0.05-0.47)",
                    CORRELATION_SOURCE,
                    setting,
                    undefined,
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
                    {int(r["seed"]): _agreement(r["means"]) for r in seeds},
                    lambda v: v > 0,
                    "holds on a seed when it is above 0 (gradient and leave-one-out agree with each other more than either does with attention)",
                    CORRELATION_SOURCE,
                    setting,
                    undefined,
                )
            )
    return sorted(rows + _encoder_claims(models), key=lambda r: r["dataset"])  # stable: per dataset, the BiLSTMs' first


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
                first = {int(r["seed"]): r["means"] for r in models[(dataset, average)]}
                second = {int(r["seed"]): r["means"] for r in models[(dataset, lstm)]}
                if not any(GRADIENT in m for m in (*first.values(), *second.values())):
                    continue  # gradients not measured
                shared = sorted(set(first) & set(second))
                per_seed = {
                    s: first[s][GRADIENT] - second[s][GRADIENT]
                    if GRADIENT in first[s] and GRADIENT in second[s]
                    else None
                    for s in shared
                }
                rows.append(
                    finding(
                        PAPER,
                        CORRELATION,
                        dataset,
                        f"{average} vs {lstm}",
                        f"{_tau(GRADIENT)} of the Average encoder minus the BiLSTM's ({attention} attention, the same seed), all test instances",
                        per_seed,
                        lambda v: v > 0,
                        "holds on a seed when it is above 0 (J&W: the Average encoders' attention correlates better with gradients); "
                        "on the seeds both models have; the BiLSTM run's setting",
                        CORRELATION_SOURCE,
                        models[(dataset, lstm)][0]["setting"],
                        f"no {_tau(GRADIENT)} of one of the two models",
                    )
                )
    return rows
