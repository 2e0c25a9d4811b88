from dataclasses import astuple

# The report's tables: each results/tables/<name>.md rendered as an HTML page (`attnexp.tables.
# markdown_html`), so that `snakemake --report` shows it instead of offering a file to download.
# Per table: its caption (report/<caption>.rst), category, subcategory and label; a paper's tables are
# those its descriptor's page puts in the report (`Table.report`), the workflow's own are listed here.
REPORT_TABLES = {
    **{
        table.name: (table.caption, *astuple(table.report))
        for paper in PAPERS.values()
        if paper.page
        for table in paper.page.tables
        if table.report
    },
    "debate_matrix": (
        "debate_matrix",
        "Beyond - debate matrix",
        "every paper's test on every model",
        "debate matrix",
    ),
    "claims": ("claims", "Replication scorecard", "claims", "claims"),
    "scorecard": ("scorecard", "Replication scorecard", "scorecard", "scorecard"),
    "datasets": ("datasets", "Data and models", "datasets", "datasets"),
    "performance": (
        "performance",
        "Data and models",
        "test performance",
        "performance",
    ),
}


rule render_table:
    input:
        "results/tables/{table}.md",
    output:
        report(
            "results/report/{table}.html",
            caption="../report/table.rst",
            category=lambda wildcards: REPORT_TABLES[wildcards.table][1],
            subcategory=lambda wildcards: REPORT_TABLES[wildcards.table][2],
            labels=lambda wildcards: {"table": REPORT_TABLES[wildcards.table][3]},
        ),
    log:
        "results/logs/render_table/{table}.log",
    wildcard_constraints:
        table="|".join(REPORT_TABLES),
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    params:
        # the table's own caption, which report/table.rst shows
        caption=lambda wildcards: (
            Path(workflow.basedir)
            / "report"
            / f"{REPORT_TABLES[wildcards.table][0]}.rst"
        ).read_text(encoding="utf-8"),
    script:
        "../scripts/render_table.py"


TARGETS["report"] = [
    f"results/report/{table}.html"
    for table in REPORT_TABLES
    if f"results/tables/{table}.md" in all_targets()
]
