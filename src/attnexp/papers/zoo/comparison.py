"""The zoo against the vanilla BiLSTM, test by test: from the debate matrix (every paper's test on every
model), per dataset and zoo model, each test's mean over the seeds beside `lstm-tanh`'s, and whether the
zoo model's number points further towards attention as an explanation (the test's own reading: a
higher or a lower number). Tests read against another row (a baseline, a uniform twin) are left out:
their numbers do not compare across models on their own.
"""

from __future__ import annotations

import pandas as pd

from attnexp.markdown import to_markdown
from attnexp.papers.zoo import VANILLA

__all__ = ["direction", "zoo_comparison", "comparison_markdown"]

COLUMNS = ["dataset", "model", "paper", "measure", "test", "seeds", "vanilla", "zoo", "reading", "compared"]


def direction(reading: str) -> int:
    """+1 where a higher number supports attention as an explanation, -1 where a lower one does, 0 for a
    baseline, context, or a number read against another row ("lower than the model's")."""
    for word, sign in (("higher", 1), ("lower", -1)):
        if reading.startswith((f"{word}:", f"{word},")) or reading == word:
            return sign
    return 0


def zoo_comparison(matrix: pd.DataFrame, zoo_models: list[str]) -> pd.DataFrame:
    """The debate matrix's rows (`attnexp.experiments.debate_matrix`) -> one row per dataset, zoo model
    and directional test both it and the vanilla BiLSTM ran, over the seeds both have: `compared` is
    `further` (the zoo model's mean points further towards attention as an explanation), `less` or
    `equal`."""
    rows = []
    for dataset, part in matrix.groupby("dataset", sort=False):
        vanilla = part[part["model"] == VANILLA]
        for model in zoo_models:
            own = part[part["model"] == model]
            for measure, group in own.groupby("measure", sort=False):
                sign = direction(group["reading"].iloc[0])
                base = vanilla[vanilla["measure"] == measure]
                seeds = sorted(set(group["seed"]) & set(base["seed"]))
                if not sign or not seeds:
                    continue
                ours = float(group[group["seed"].isin(seeds)]["value"].mean())
                theirs = float(base[base["seed"].isin(seeds)]["value"].mean())
                gap = sign * (ours - theirs)
                rows.append(
                    {
                        "dataset": dataset,
                        "model": model,
                        "paper": group["paper"].iloc[0],
                        "measure": measure,
                        "test": group["test"].iloc[0],
                        "seeds": len(seeds),
                        "vanilla": round(theirs, 4),
                        "zoo": round(ours, 4),
                        "reading": group["reading"].iloc[0],
                        "compared": "further" if gap > 1e-9 else "less" if gap < -1e-9 else "equal",
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def comparison_markdown(table: pd.DataFrame) -> str:
    lines = [
        "# The zoo against the vanilla BiLSTM, test by test",
        "",
        f"Each test of the debate matrix that reads one way (higher or lower supports attention as an explanation), "
        f"the zoo model's mean over the seeds beside `{VANILLA}`'s over the same seeds; `further`: the zoo model's "
        "number points further towards attention as an explanation. Whether a difference is beyond seed noise is in "
        "the papers' own claims (results/tables/claims.csv), not here.",
        "",
    ]
    if table.empty:
        return "\n".join(lines + ["No zoo model and vanilla BiLSTM ran the same test on a dataset.", ""])
    for (dataset, model), group in table.groupby(["dataset", "model"], sort=False):
        further = int((group["compared"] == "further").sum())
        lines += [
            f"## {dataset}: {model}",
            "",
            f"Further towards attention as an explanation than `{VANILLA}` on {further} of {len(group)} tests.",
            "",
            to_markdown(group[["paper", "test", "seeds", "vanilla", "zoo", "reading", "compared"]]),
            "",
        ]
    return "\n".join(lines)
