"""Jain & Wallace's permutation and adversarial findings as claims, each on every seed of the BiLSTM
models they concern (`attnexp.claims.finding`).

- §4.2, permutation: randomly permuting the attention weights often changes the output only
  minimally, even where attention is peaked. Per model: the share of test instances whose median
  output change over the permutations is at most `minimal_output_change`, over every instance and
  over those whose largest weight is at least `peaked_attention` (undefined on a seed with fewer than
  `min_peaked_instances` of them).
- §4.3, adversarial attention: attention distributions very different from the model's exist that
  leave the prediction effectively unchanged (within ε). Per model: the share of test instances whose
  ε-max JSD is at least `very_different_jsd`.

Each finding holds on a seed when its share exceeds `often` ("often": for most instances). The
thresholds are `jain_wallace.findings` in the config; J&W state these findings in words and
figures, not numbers, so each claim's condition says the thresholds it was tested with.
"""

from __future__ import annotations

import pandas as pd

from attnexp.claims import Setting, finding

__all__ = ["PERMUTATION", "ADVERSARIAL", "permutation_share", "adversarial_share", "finding_claims"]

PAPER = "Jain & Wallace 2019"
PERMUTATION = "§4.2, attention permutation (Figure 4)"
ADVERSARIAL = "§4.3, adversarial attention (Figures 6-7)"
SOURCE = "Jain & Wallace 2019, abstract and §4.2-4.3 (findings stated in words; the thresholds are ours)"
# J&W run both experiments on their BiLSTM models
ENCODERS = ("lstm",)


def permutation_share(permutation: pd.DataFrame, minimal: float, peaked: float | None = None, min_instances: int = 1) -> float | None:
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
    minimal, peaked, few = thresholds["minimal_output_change"], thresholds["peaked_attention"], thresholds["min_peaked_instances"]
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
            finding(PAPER, PERMUTATION, dataset, model, f"share of test instances whose median output change under permutation is at most {minimal}",
                    each(lambda r: permutation_share(r["permutation"], minimal)), lambda v: v > often, rule, SOURCE, setting),
            finding(PAPER, PERMUTATION, dataset, model,
                    f"the same among instances with max attention at least {peaked} (peaked attention)",
                    each(lambda r: permutation_share(r["permutation"], minimal, peaked, few)), lambda v: v > often, rule, SOURCE, setting,
                    undefined=f"fewer than {few} test instances with max attention at least {peaked}"),
            finding(PAPER, ADVERSARIAL, dataset, model,
                    f"share of test instances with an adversarial attention of JSD at least {very_different} from the model's within ε of its output",
                    each(lambda r: adversarial_share(r["adversarial"], very_different)), lambda v: v > often, rule, SOURCE, setting),
        ]
    return rows
