"""Cross-dataset tables: ours beside the published numbers, as CSV and Markdown; and the Markdown
the tables are written in, rendered as an HTML page for the report."""

from __future__ import annotations

import html
import re

import pandas as pd

__all__ = ["dataset_table", "performance_table", "performance_markdown", "performance_claims", "to_markdown", "markdown_html"]


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

    lines = ["| " + " | ".join(str(c).replace("|", "\\|") for c in table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


PERFORMANCE_METRICS = ("accuracy", "macro_f1", "f1_class1", "roc_auc")


def _our_metrics(run: dict) -> dict:
    test = run["test"]
    ours = {"accuracy": test["accuracy"], "macro_f1": test["macro_f1"]}
    if "roc_auc" in test:  # binary: F1 of the positive class is the papers' F1
        ours["f1_class1"] = test["f1"][1]
        ours["roc_auc"] = test["roc_auc"]
    return ours


def performance_table(runs: list[dict], published: pd.DataFrame) -> pd.DataFrame:
    """Long format, one row per (dataset, model, seed, metric): our test value, then every published
    value for the same dataset, model and metric with its checkpoint selection and source.
    `runs`: metrics.json contents with `dataset` added."""
    rows = []
    for run in sorted(runs, key=lambda r: (r["dataset"], r["model"], r["seed"])):
        for metric, value in _our_metrics(run).items():
            base = {
                "dataset": run["dataset"], "model": run["model"], "seed": run["seed"], "select_on": run["select_on"],
                "embeddings": run["provenance"].get("embeddings", "random"),
                "substitutes": run["provenance"].get("substitutes", "none"),
                "metric": metric, "ours": round(value, 4),
            }
            matches = published[(published.dataset == run["dataset"]) & (published.model == run["model"]) & (published.metric == metric)]
            if matches.empty:
                rows.append(base | {"published": None, "published_selection": None, "paper": None, "source": None})
            for pub in matches.itertuples():
                rows.append(base | {"published": pub.value, "published_selection": pub.selection, "paper": pub.paper, "source": pub.source})
    columns = ["dataset", "model", "seed", "select_on", "embeddings", "substitutes", "metric", "ours", "published", "published_selection", "paper", "source"]
    return pd.DataFrame(rows, columns=columns)


def performance_markdown(table: pd.DataFrame) -> str:
    """Wide view: one row per run; published values in brackets after ours, with footnoted sources
    and `*` where the published checkpoint was selected the way ours was."""
    sources = {s: i + 1 for i, s in enumerate(dict.fromkeys(table["source"].dropna()))}
    rows = []
    for (dataset, model, seed), group in table.groupby(["dataset", "model", "seed"], sort=True):
        first = group.iloc[0]
        row = {"dataset": dataset, "model": model, "seed": seed, "select_on": first.select_on, "embeddings": first.embeddings}
        for metric in PERFORMANCE_METRICS:
            cells = group[group.metric == metric]
            if cells.empty:
                row[metric] = None
                continue
            published = [
                f"{p.published:.3f}{'*' if p.published_selection == first.select_on else ''}[{sources[p.source]}]"
                for p in cells.itertuples() if not pd.isna(p.published)
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
    from attnexp.claims import claim, numeric_verdict  # claims builds on to_markdown above

    rows = []
    for r in table.dropna(subset=["published"]).itertuples():
        why = None if r.published_selection == r.select_on else f"ours selected on {r.select_on}, published on {r.published_selection} (D-SEL)"
        rows.append(claim(
            r.paper, "test performance", r.dataset, r.model, int(r.seed), r.metric, float(r.ours), float(r.published),
            tolerance, numeric_verdict(float(r.ours), float(r.published), tolerance, why), r.source,
            f"select_on={r.select_on}; embeddings={r.embeddings}; stand-ins={r.substitutes}",
        ))
    return rows


# ---------------------------------------------------------------------------------------------
# The report's view of a table


_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r'<a href="\2">\1</a>'),
]
_STYLE = (
    "body{font-family:system-ui,sans-serif;font-size:14px;margin:1em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em;width:max-content}"
    # A wide table (the scorecard's every claim) scrolls sideways rather than squeezing a column to
    # one character; long prose cells wrap at a readable width.
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;"
    "max-width:30em}"
    "th{background:#f2f2f2;position:sticky;top:0}tr:nth-child(even) td{background:#fafafa}"
    "code{background:#f2f2f2;padding:0 3px}"
)


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row; `\\|` is a literal bar inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


def markdown_html(markdown: str, title: str) -> str:
    """A standalone HTML page of the Markdown the tables are written in (`to_markdown` tables,
    `#` headings, paragraphs, list items, `<details>` blocks, inline code, bold and links), so that
    the report shows a table instead of offering a file to download."""
    out, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header, rows = _cells(line), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append("<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in header) + "</tr></thead><tbody>")
            out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows]
            out.append("</tbody></table>")
            continue
        heading = re.match(r"(#{1,6}) (.*)", line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.strip() in ("<details>", "</details>") or re.fullmatch(r"\s*<summary>.*</summary>\s*", line):
            out.append(line.strip())  # the pages' own collapsible blocks
        elif line.startswith("- "):
            out.append(f"<ul><li>{_inline(line[2:])}</li></ul>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(out) + "\n</body></html>\n")

