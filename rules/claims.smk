# Every comparison with a paper in one table: each paper's claims (results/claims/<name>.csv, registered
# in CLAIMS by its rule file) stacked into results/tables/claims.{csv,md} (`attnexp.claims`).


rule tabulate_claims:
    input:
        CLAIMS,
    output:
        csv="results/tables/claims.csv",
        md=report(
            "results/tables/claims.md",
            caption="../report/claims.rst",
            category="Claims",
            labels={"table": "claims"},
        ),
    log:
        "results/logs/tabulate_claims.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/tabulate_claims.py"


TARGETS["claims"] = (
    ["results/tables/claims.csv", "results/tables/claims.md"] if CLAIMS else []
)
