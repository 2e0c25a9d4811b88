"""Cross-dataset tables: ours beside the published numbers, as CSV and Markdown."""

from __future__ import annotations

import pandas as pd

__all__ = ["dataset_table", "to_markdown"]


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
            "substitute_notes": " | ".join(dict.fromkeys(src["substitute"] for src in s["sources"] if src["substitute"])) or None,
        }
        if s["dataset"] in published.index:
            pub = published.loc[s["dataset"]]
            for column in ("vocab_size", "avg_length", "train_0", "train_1", "test_0", "test_1"):
                row[f"published_{column}"] = pub[column]
            row["published_source"] = pub["source"]
        rows.append(row)
    columns = ["dataset", "classes", "vocab_size", "published_vocab_size", "mean_length", "published_avg_length",
               "train_0", "published_train_0", "train_1", "published_train_1", "dev",
               "test_0", "published_test_0", "test_1", "published_test_1", "substitutes", "substitute_notes", "published_source"]
    table = pd.DataFrame(rows).reindex(columns=columns)
    return table.astype({c: "Int64" for c in columns if c.startswith(("train", "test", "published_t", "published_v", "vocab", "dev", "classes"))})


def to_markdown(table: pd.DataFrame, drop: tuple[str, ...] = ()) -> str:
    """A GitHub Markdown table (pandas' own needs the optional `tabulate` package)."""
    table = table.drop(columns=list(drop))
    def cell(value) -> str:
        return "–" if pd.isna(value) else str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"
