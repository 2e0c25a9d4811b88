"""Summaries of the S&S per-instance tables: what the tables, the claims and the debate matrix are
built from (`experiment` writes the tables). Torch-free, so that those jobs never load torch.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import binomtest

__all__ = ["ERASURE_COLUMNS", "REMOVAL_COLUMNS", "summarise_erasure", "summarise_removal", "flip_sooner"]

# The per-instance tables' columns (`experiment.run_interventions`): a run with nothing to erase (every
# test instance has one item, S&S §4) writes them with no rows, and every summary of it is empty
_INSTANCE = ["id", "n", "predicted"]
ERASURE_COLUMNS = _INSTANCE + [
    "top_by",
    "top",
    "random",
    "top_attention",
    "random_attention",
    "delta_attention",
    "js_top",
    "js_random",
    "delta_js",
    "kl_top",
    "kl_random",
    "flip_top",
    "flip_random",
]
REMOVAL_COLUMNS = _INSTANCE + ["ranking", "permutation", "flipped", "removed", "fraction", "removed_mass"]
ERASURE_SUMMARY_COLUMNS = [
    "top_by",
    "n",
    "negative_delta_js",
    "pct_both_flip",
    "pct_only_top_flips",
    "pct_only_random_flips",
    "pct_neither_flips",
    "mcnemar_p",
]
REMOVAL_SUMMARY_COLUMNS = [
    "ranking",
    "n",
    "pct_no_flip",
    "fraction_mean",
    "fraction_sd",
    "fraction_q1",
    "fraction_median",
    "fraction_q3",
    "mass_mean",
    "mass_median",
]


def summarise_erasure(table: pd.DataFrame) -> pd.DataFrame:
    """Per top_by: instances, the fraction with ΔJS < 0, the 2 × 2 flip table in percent of
    instances, and McNemar's exact test of flip_top against flip_random (binomial on the discordant
    pairs, scipy)."""
    rows = []
    for name, part in table.groupby("top_by", sort=False):
        both = int((part.flip_top & part.flip_random).sum())
        only_top = int((part.flip_top & ~part.flip_random).sum())
        only_random = int((~part.flip_top & part.flip_random).sum())
        neither = len(part) - both - only_top - only_random
        discordant = only_top + only_random
        rows.append(
            {
                "top_by": name,
                "n": len(part),
                "negative_delta_js": float((part.delta_js < 0).mean()),
                "pct_both_flip": 100 * both / len(part),
                "pct_only_top_flips": 100 * only_top / len(part),
                "pct_only_random_flips": 100 * only_random / len(part),
                "pct_neither_flips": 100 * neither / len(part),
                "mcnemar_p": binomtest(only_top, discordant, 0.5).pvalue if discordant else 1.0,
            }
        )
    return pd.DataFrame(rows, columns=ERASURE_SUMMARY_COLUMNS)


def summarise_removal(table: pd.DataFrame) -> pd.DataFrame:
    """Per ranking: instances, % no-flip, and the fraction removed at the first flip (mean, sd,
    quartiles) and removed attention mass over flipping instances (D-SS-NOFLIP); `random` pools
    all its permutations (D-SS-BOX applies to the figure only)."""
    rows = []
    for name, part in table.groupby("ranking", sort=False):
        flipping = part[part.flipped]
        fraction, mass = flipping["fraction"].astype(float), flipping["removed_mass"].astype(float)
        rows.append(
            {
                "ranking": name,
                "n": part["id"].nunique(),
                "pct_no_flip": 100 * float((~part.flipped).mean()),
                "fraction_mean": fraction.mean(),
                "fraction_sd": fraction.std(ddof=0),
                "fraction_q1": fraction.quantile(0.25),
                "fraction_median": fraction.median(),
                "fraction_q3": fraction.quantile(0.75),
                "mass_mean": mass.mean(),
                "mass_median": mass.median(),
            }
        )
    return pd.DataFrame(rows, columns=REMOVAL_SUMMARY_COLUMNS)


def flip_sooner(table: pd.DataFrame, first: str = "gradient", second: str = "attention") -> dict:
    """Per instance, which ranking flips the decision after fewer removals (§6; a ranking that flips
    beats one that never does) -> shares of instances where `first` wins, `second` wins, tie."""
    k = table[table.ranking.isin([first, second])].pivot(index="id", columns="ranking", values="removed")
    a, b = k[first].astype(float), k[second].astype(float)
    a_wins = (a.notna() & (b.isna() | (a < b))).mean()
    b_wins = (b.notna() & (a.isna() | (b < a))).mean()
    return {
        "n": len(k),
        f"{first}_sooner": float(a_wins),
        f"{second}_sooner": float(b_wins),
        "tie": float(1 - a_wins - b_wins),
    }
