# The report's tables: each results/tables/<name>.md rendered as an HTML page (`attnexp.tables.
# markdown_html`), so that `snakemake --report` shows it instead of offering a file to download.
# Per table: its caption (report/<caption>.rst), category, subcategory and label.
REPORT_TABLES = {
    "jain_wallace_table2": (
        "jain_wallace_table2",
        "Jain & Wallace 2019",
        "tables",
        "Table 2",
    ),
    "ground_truth": ("ground_truth", "Jain & Wallace 2019", "tables", "ground truth"),
    **{
        f"serrano_smith_{name}": (
            f"serrano_smith_{name}",
            "Serrano & Smith 2019",
            "tables",
            name,
        )
        for name in SS_TABLES
    },
    **{
        f"wiegreffe_pinter_{name}": (
            f"wiegreffe_pinter_{name}",
            "Wiegreffe & Pinter 2019",
            "tables",
            name,
        )
        for name in WP_TABLES
    },
    "faithfulness_aopc": ("faithfulness_aopc", "Beyond - faithfulness", "AOPC", "AOPC"),
    "faithfulness_seed_envelopes": (
        "faithfulness_seed_envelopes",
        "Beyond - faithfulness",
        "seed envelopes",
        "seed envelopes",
    ),
    "faithfulness_violation": (
        "faithfulness_violation",
        "Beyond - faithfulness",
        "violation test",
        "violation test",
    ),
    "zoo": ("zoo", "Beyond - the zoo", "Mohankumar et al. 2020", "zoo"),
    "zoo_comparison": (
        "zoo_comparison",
        "Beyond - the zoo",
        "against the vanilla BiLSTM",
        "zoo against vanilla",
    ),
    "attention_attribution_pruning": (
        "attention_attribution_tables",
        "Beyond - attention attribution",
        "head pruning",
        "head pruning",
    ),
    "attention_attribution_agreement": (
        "attention_attribution_tables",
        "Beyond - attention attribution",
        "rollout agreement",
        "rollout agreement",
    ),
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
