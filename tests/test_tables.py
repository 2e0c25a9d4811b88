"""Cross-run tables (attnexp.tables): the performance table beside the published values (with the
paper each comes from), its Markdown and its claim rows."""

from __future__ import annotations

import pandas as pd

from attnexp.claims import claims_frame
from attnexp.markdown import NO_ROWS, to_markdown
from attnexp.publish.text import empty_tables_marked
from attnexp.tables import performance_claims, performance_markdown, performance_table

PUBLISHED = pd.DataFrame(
    [
        ("sst", "lstm-tanh", "accuracy", 0.82, "test", "Jain & Wallace 2019", "J&W repository"),
        ("sst", "lstm-tanh", "accuracy", 0.80, "dev", "Wiegreffe & Pinter 2019", "W&P Table 2"),
        ("sst", "lstm-tanh", "f1_class1", 0.806, "test", "Jain & Wallace 2019", "J&W repository"),
    ],
    columns=["dataset", "model", "metric", "value", "selection", "paper", "source"],
)


def run(dataset="sst", model="lstm-tanh", select_on="test", accuracy=0.8123):
    return {
        "dataset": dataset,
        "model": model,
        "seed": 10,
        "select_on": select_on,
        "test": {"accuracy": accuracy, "macro_f1": 0.79, "f1": [0.78, 0.80], "roc_auc": 0.88},
        "provenance": {"embeddings": "word2vec", "substitutes": "none"},
    }


def test_performance_table_has_one_row_per_published_value_with_its_paper():
    table = performance_table([run()], PUBLISHED)
    assert table.columns.tolist()[-2:] == ["paper", "source"]
    accuracy = table[table.metric == "accuracy"]
    assert accuracy["paper"].tolist() == ["Jain & Wallace 2019", "Wiegreffe & Pinter 2019"]
    assert accuracy["published"].tolist() == [0.82, 0.80] and accuracy["ours"].tolist() == [0.8123, 0.8123]
    unpublished = table[table.metric == "macro_f1"].iloc[0]
    assert pd.isna(unpublished.published) and pd.isna(unpublished.paper)
    assert set(table.metric) == {"accuracy", "macro_f1", "f1_class1", "roc_auc"}
    assert "0.812 (0.820*[1], 0.800[2])" in performance_markdown(table)


def test_performance_claims_compare_like_with_like():
    rows = performance_claims(performance_table([run()], PUBLISHED), tolerance=0.01)
    claims = claims_frame(rows)
    assert len(claims) == 3  # every published value, none for the unpublished metrics
    jw = claims[(claims.paper == "Jain & Wallace 2019") & (claims.quantity == "accuracy")].iloc[0]
    assert (jw.ours, jw.published, jw.tolerance, jw.verdict) == (0.8123, 0.82, 0.01, "match")  # |0.8123 - 0.82| <= 0.01
    assert jw.table == "test performance" and jw.condition == "select_on=test; embeddings=word2vec; stand-ins=none"
    wp = claims[claims.paper == "Wiegreffe & Pinter 2019"].iloc[0]
    assert wp.verdict == "not comparable: ours selected on test, published on dev (D-SEL)"
    f1 = claims[claims.quantity == "f1_class1"].iloc[0]
    assert (f1.ours, f1.verdict) == (0.8, "match")  # 0.80 vs 0.806
    strict = claims_frame(performance_claims(performance_table([run()], PUBLISHED), tolerance=0.005))
    assert strict[strict.quantity == "accuracy"]["verdict"].tolist() == [
        "differs",
        "not comparable: ours selected on test, published on dev (D-SEL)",
    ]
    assert performance_claims(performance_table([run(dataset="synthetic")], PUBLISHED), 0.01) == []


def test_to_markdown_escapes_pipes_and_dashes_missing_values():
    text = to_markdown(pd.DataFrame({"a": ["x|y", None], "b": [1.5, float("nan")]}))
    assert text.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 1.5 |", "| – | – |"]


def test_a_table_without_rows_is_one_line_saying_so_in_the_run_and_on_a_published_page():
    # a pivot of no rows has no columns either: a header alone would read as a broken table
    assert to_markdown(pd.DataFrame()) == NO_ROWS + "\n"
    assert to_markdown(pd.DataFrame(columns=["a", "b"])) == NO_ROWS + "\n"
    # a run whose renderer wrote a header alone is published with the same line; other tables stay
    written = "Caption.\n\n|  |\n|\n\n[1] a source\n\n| a |\n|---|\n| 1 |"
    assert empty_tables_marked(written) == f"Caption.\n\n{NO_ROWS}\n\n[1] a source\n\n| a |\n|---|\n| 1 |"


def test_performance_claims_of_a_dev_selected_run():
    table = performance_table([run(select_on="dev")], PUBLISHED)
    for tolerance, wp in [(0.01, "differs"), (0.02, "match")]:  # 0.8123 vs 0.80, both dev-selected
        claims = claims_frame(performance_claims(table, tolerance))
        verdicts = dict(zip(claims.paper + " " + claims.quantity, claims.verdict))
        assert verdicts["Wiegreffe & Pinter 2019 accuracy"] == wp
        assert (
            verdicts["Jain & Wallace 2019 accuracy"]
            == "not comparable: ours selected on dev, published on test (D-SEL)"
        )


def test_markdown_tables_render_as_html_pages_for_the_report():
    from attnexp.markdown import markdown_html

    markdown = (
        "# Table 2: `tanh` attention\n\nCells: ours **beside** J&W's; see [the docs](docs/protocol-notes.md).\n\n"
        + to_markdown(pd.DataFrame({"dataset": ["sst"], "cell": ["0.21 ± 0.18 | 0.30"], "note": [None]}))
        + "\n- one item\n\n<details>\n<summary>more</summary>\n\n</details>\n"
    )
    page = markdown_html(markdown, title="Table 2 & more")
    assert page.startswith("<!DOCTYPE html>") and "<title>Table 2 &amp; more</title>" in page
    assert "<h1>Table 2: <code>tanh</code> attention</h1>" in page
    assert (
        '<p>Cells: ours <strong>beside</strong> J&amp;W\'s; see <a href="docs/protocol-notes.md">the docs</a>.</p>'
        in page
    )
    # a bar escaped inside a cell stays in the cell; a missing value is the dash
    assert "<tr><td>sst</td><td>0.21 ± 0.18 | 0.30</td><td>–</td></tr>" in page
    assert "<th>dataset</th><th>cell</th><th>note</th>" in page
    assert "<ul><li>one item</li></ul>" in page and "<details>" in page and "<summary>more</summary>" in page
