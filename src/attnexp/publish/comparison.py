"""The embeddings comparison (`--embeddings-comparison RUN2`): the J&W models both runs trained with
different vectors side by side beside J&W's committed means (`embeddings_comparison`), and each miss
blamed on embeddings given the other run's number and verdict (`with_comparison`)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.markdown import to_markdown
from attnexp.publish.record import REPO, PublishError
from attnexp.publish.text import shown_number
from attnexp.scorecard import MATCHED, MISSED, outcome

_PAIRS = (
    ("attention~loo", "τ(attention, LOO)"),
    ("attention~gradient", "τ(attention, |gradient|)"),
    ("gradient~loo", "τ(|gradient|, LOO)"),
)
_MEAN_TAU = REPO / "references" / "jain_wallace_mean_tau.csv"


def _trained_runs(root: Path) -> dict[tuple[str, str, int], dict]:
    """(dataset, model, seed) -> metrics.json, for every J&W model with a correlation table in the run."""
    runs = {}
    for path in sorted((root / "results" / "jain_wallace").glob("*/*/seed*/correlations.csv")):
        dataset, model, seed = path.parts[-4], path.parts[-3], int(path.parts[-2][len("seed") :])
        metrics = root / "results" / "models" / dataset / model / f"seed{seed}" / "metrics.json"
        if metrics.is_file():
            runs[(dataset, model, seed)] = io.read_json(metrics) | {"_correlations": path}
    return runs


def _comparison_row(key, trained: dict) -> dict:
    from attnexp.papers.jain_wallace.tables import overall_means

    means = overall_means(pd.read_csv(trained["_correlations"]))
    test = trained.get("test", {})
    row = {
        "dataset": key[0],
        "model": key[1],
        "seed": key[2],
        "embeddings": trained["provenance"].get("embeddings", "random"),
        "test accuracy": test.get("accuracy"),
    }
    return row | {label: means.get(pair) for pair, label in _PAIRS}


def embeddings_comparison(main: Path, other: Path) -> tuple[list[str], pd.DataFrame]:
    """The J&W models run in both folders with different vectors, side by side: test accuracy and the
    mean τ of each pair over all test instances, with J&W's committed means (BiLSTM, dev-selected) and,
    per model, which vectors come closer to them. Returns the Markdown lines and the rows."""
    ours, theirs = _trained_runs(main), _trained_runs(other)
    keys = [
        k
        for k in ours
        if k in theirs and ours[k]["provenance"].get("embeddings") != theirs[k]["provenance"].get("embeddings")
    ]
    if not keys:
        raise PublishError(
            f"{other}: no J&W model of {main} was run there with other vectors (results/jain_wallace/*/*/seed*/correlations.csv)"
        )
    published = pd.read_csv(_MEAN_TAU)
    rows, verdicts = [], []
    for key in sorted(keys):
        pair_rows = [_comparison_row(key, ours[key]), _comparison_row(key, theirs[key])]
        rows += pair_rows
        jw = published[(published.dataset == key[0]) & (published.model == key[1])].set_index("pair")["mean"]
        if len(jw):
            rows.append(
                {
                    "dataset": key[0],
                    "model": key[1],
                    "seed": None,
                    "embeddings": "J&W's committed means (dev-selected)",
                    "test accuracy": None,
                }
                | {label: float(jw[pair]) for pair, label in _PAIRS if pair in jw}
            )
            gaps = {
                r["embeddings"]: sum(
                    abs(r[label] - jw[pair]) for pair, label in _PAIRS if pair in jw and r[label] is not None
                )
                / len(jw)
                for r in pair_rows
            }
            (a, ga), (b, gb) = gaps.items()
            closer = a if ga < gb else b
            verdicts.append(
                f"- {key[1]} on {key[0]}: mean |ours − J&W| over the three pairs {ga:.3f} with {a}, {gb:.3f} with {b}: "
                f"{closer} comes closer to J&W's means."
            )
    table = pd.DataFrame(rows)
    shown = table.copy()
    for column in ["test accuracy"] + [label for _, label in _PAIRS]:
        shown[column] = shown[column].map(shown_number)
    shown["seed"] = shown["seed"].map(lambda v: "" if v is None or pd.isna(v) else str(int(v)))
    lines = [
        "## Embeddings: the GloVe stand-in against word2vec",
        "",
        "The same models trained with each kind of vectors (this run's, and the companion run's), test-selected; mean Kendall τ "
        "over all test instances. J&W's committed means are of their dev-selected BiLSTM retrain with 300-d pretrained vectors.",
        "",
        to_markdown(shown),
        *verdicts,
        "",
    ]
    return lines, table


def with_comparison(card: pd.DataFrame, other: pd.DataFrame, other_name: str) -> pd.DataFrame:
    """Each missed J&W row blamed (in part) on embeddings gets the other run's number for the same
    claim and its verdict there: whether other vectors would have matched."""
    key = ["paper", "table", "dataset", "model", "seed", "quantity"]
    theirs = other.set_index(key)
    causes, statuses = [], []
    for row in card.to_dict("records"):
        text = row["cause"] if isinstance(row["cause"], str) else ""
        status = row["cause_status"] if isinstance(row["cause_status"], str) else ""
        index = tuple(row[k] for k in key)
        if outcome(row["verdict"]) == MISSED and "embeddings (" in text and index in theirs.index:
            other_row = theirs.loc[index]
            other_row = other_row.iloc[0] if isinstance(other_row, pd.DataFrame) else other_row
            vectors = other_row["embeddings"] or "other"
            # the other vectors remove the cause: a match there establishes it, where it is the only one
            if text.count("; ") == 0 and outcome(other_row["verdict"]) == MATCHED:
                status = "established"
            text += (
                f"; with {vectors} vectors ({other_name}): {shown_number(other_row['ours'])}, {other_row['verdict']}"
            )
        causes.append(text)
        statuses.append(status)
    return card.assign(cause=causes, cause_status=statuses)


_COMPARED = re.compile(r"; with (\S+) vectors \(([^)]*)\): \S+, (.+)$")


def grouped_comparisons(card: pd.DataFrame) -> pd.DataFrame:
    """The card with each cause's other-vectors number dropped and only its verdict kept, so that the
    README's count of misses by cause groups them (\"...; with word2vec_local vectors (...): match\")."""
    causes = [
        _COMPARED.sub(lambda m: f"; with {m[1]} vectors ({m[2]}): {m[3]}", c) if isinstance(c, str) else c
        for c in card["cause"]
    ]
    return card.assign(cause=causes)
