"""Cross-dataset tables: ours beside the published numbers, as CSV and Markdown."""

from __future__ import annotations

import pandas as pd

from attnexp.claims import Setting, claim, numeric_verdict
from attnexp.markdown import to_markdown

__all__ = ["dataset_table", "performance_table", "performance_markdown", "performance_claims"]


def _count(split: dict, label: str | None):
    return split["n"] if label is None else split["by_label"].get(label, 0)


def dataset_table(stats: list[dict], published: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset: our split sizes, vocabulary and mean length beside J&W Table 1."""
    published = published.set_index("dataset")
    rows = []
    for s in sorted(stats, key=lambda s: s["dataset"]):
        splits = s["splits"]
        binary = sorted(splits["train"]["by_label"]) == ["0", "1"]
        row = {
            "dataset": s["dataset"],
            "vocab_size": s["vocab_size"],
            "mean_length": round(splits["train"]["mean_length"], 1),
            "train_0": _count(splits["train"], "0") if binary else _count(splits["train"], None),
            "train_1": _count(splits["train"], "1") if binary else None,
            "dev": splits["dev"]["n"],
            "test_0": _count(splits["test"], "0") if binary else _count(splits["test"], None),
            "test_1": _count(splits["test"], "1") if binary else None,
            "classes": len(splits["train"]["by_label"]),
            "substitutes": ", ".join(src["file"] for src in s["sources"] if src["substitute"]) or "none",
            "substitute_notes": " | ".join(
                dict.fromkeys(src["substitute"] for src in s["sources"] if src["substitute"])
            )
            or None,
        }
        if s["dataset"] in published.index:
            pub = published.loc[s["dataset"]]
            for column in ("vocab_size", "avg_length", "train_0", "train_1", "test_0", "test_1"):
                row[f"published_{column}"] = pub[column]
            row["published_source"] = pub["source"]
        rows.append(row)
    columns = [
        "dataset",
        "classes",
        "vocab_size",
        "published_vocab_size",
        "mean_length",
        "published_avg_length",
        "train_0",
        "published_train_0",
        "train_1",
        "published_train_1",
        "dev",
        "test_0",
        "published_test_0",
        "test_1",
        "published_test_1",
        "substitutes",
        "substitute_notes",
        "published_source",
    ]
    table = pd.DataFrame(rows).reindex(columns=columns)
    return table.astype(
        {
            c: "Int64"
            for c in columns
            if c.startswith(("train", "test", "published_t", "published_v", "vocab", "dev", "classes"))
        }
    )


PERFORMANCE_METRICS = ("accuracy", "macro_f1", "f1_class1", "roc_auc")


def _our_metrics(run: dict) -> dict:
    test = run["test"]
    ours = {"accuracy": test["accuracy"], "macro_f1": test["macro_f1"]}
    if "roc_auc" in test:  # binary: F1 of the positive class is the papers' F1
        ours["f1_class1"] = test["f1"][1]
        ours["roc_auc"] = test["roc_auc"]
    if "conicity" in run:  # flat and QA models: how narrow a cone their attended states lie in (Mohankumar et al.)
        ours["conicity"] = run["conicity"]["test"]
    return ours


def performance_table(runs: list[dict], published: pd.DataFrame) -> pd.DataFrame:
    """Long format, one row per (dataset, model, seed, metric): our test value, then every published
    value for the same dataset, model and metric with its checkpoint selection and source.
    `runs`: metrics.json contents with `dataset` added."""
    rows = []
    for run in sorted(runs, key=lambda r: (r["dataset"], r["model"], r["seed"])):
        for metric, value in _our_metrics(run).items():
            base = {
                "dataset": run["dataset"],
                "model": run["model"],
                "seed": run["seed"],
                "select_on": run["select_on"],
                "embeddings": run["provenance"].get("embeddings", "random"),
                "substitutes": run["provenance"].get("substitutes", "none"),
                "metric": metric,
                "ours": round(value, 4),
            }
            matches = published[
                (published.dataset == run["dataset"]) & (published.model == run["model"]) & (published.metric == metric)
            ]
            if matches.empty:
                rows.append(base | {"published": None, "published_selection": None, "paper": None, "source": None})
            for pub in matches.itertuples():
                rows.append(
                    base
                    | {
                        "published": pub.value,
                        "published_selection": pub.selection,
                        "paper": pub.paper,
                        "source": pub.source,
                    }
                )
    columns = [
        "dataset",
        "model",
        "seed",
        "select_on",
        "embeddings",
        "substitutes",
        "metric",
        "ours",
        "published",
        "published_selection",
        "paper",
        "source",
    ]
    return pd.DataFrame(rows, columns=columns)


def performance_markdown(table: pd.DataFrame) -> str:
    """Wide view: one row per run; published values in brackets after ours, with footnoted sources
    and `*` where the published checkpoint was selected the way ours was."""
    sources = {s: i + 1 for i, s in enumerate(dict.fromkeys(table["source"].dropna()))}
    rows = []
    for (dataset, model, seed), group in table.groupby(["dataset", "model", "seed"], sort=True):
        first = group.iloc[0]
        row = {
            "dataset": dataset,
            "model": model,
            "seed": seed,
            "select_on": first.select_on,
            "embeddings": first.embeddings,
        }
        for metric in PERFORMANCE_METRICS:
            cells = group[group.metric == metric]
            if cells.empty:
                row[metric] = None
                continue
            published = [
                f"{p.published:.3f}{'*' if p.published_selection == first.select_on else ''}[{sources[p.source]}]"
                for p in cells.itertuples()
                if not pd.isna(p.published)
            ]
            row[metric] = f"{cells.iloc[0].ours:.3f}" + (f" ({', '.join(published)})" if published else "")
        rows.append(row)
    notes = "\n".join(f"{i}. {s}" for s, i in sources.items())
    return (
        "# Test performance: ours (published)\n\n"
        + to_markdown(pd.DataFrame(rows))
        + "\nPublished values in brackets; `*` marks those selected on the same split as ours (D-SEL).\n"
        + (f"Sources:\n\n{notes}\n" if sources else "No published values exist for these datasets and models.\n")
    )


def performance_claims(table: pd.DataFrame, tolerance: float) -> list[dict]:
    """Every published value of the performance table as a claim row: a value of a checkpoint
    selected on another split than ours is `not comparable` (D-SEL)."""
    rows = []
    for r in table.dropna(subset=["published"]).itertuples():
        why = (
            None
            if r.published_selection == r.select_on
            else f"ours selected on {r.select_on}, published on {r.published_selection} (D-SEL)"
        )
        setting = Setting(r.select_on, r.embeddings, r.substitutes).deviating("D-SEL" if why else None)
        rows.append(
            claim(
                r.paper,
                "test performance",
                r.dataset,
                r.model,
                int(r.seed),
                r.metric,
                ours=float(r.ours),
                published=float(r.published),
                tolerance=tolerance,
                verdict=numeric_verdict(float(r.ours), float(r.published), tolerance, why),
                source=r.source,
                setting=setting,
            )
        )
    return rows
