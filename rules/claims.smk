# Every comparison with a paper in one table: the models' test performance and each paper's claims
# (`Paper.claims_file`, results/claims/<paper>.csv) stacked into results/tables/claims.{csv,md}
# (`attnexp.claims`), then the scorecard: each claim's tolerance basis and, for a miss, its named cause
# (`attnexp.scorecard`).

CLAIMS = (["results/claims/performance.csv"] if performance_targets() else []) + [
    paper.claims_file for paper in papers_made("rules/claims.smk")
]


rule tabulate_claims:
    input:
        CLAIMS,
    output:
        csv="results/tables/claims.csv",
        md="results/tables/claims.md",
    log:
        "results/logs/tabulate_claims.log",
    conda:
        "../envs/attnexp.yaml"
    script:
        "../scripts/tabulate_claims.py"


rule tabulate_scorecard:
    input:
        claims="results/tables/claims.csv",
    output:
        csv="results/tables/scorecard.csv",
        md="results/tables/scorecard.md",
    log:
        "results/logs/tabulate_scorecard.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        # stand-ins that repackage the same data are no cause of a miss
        same_data=sorted(same_data_stand_ins(config)),
    script:
        "../scripts/tabulate_scorecard.py"


TARGETS["claims"] = (
    [
        "results/tables/claims.csv",
        "results/tables/claims.md",
        "results/tables/scorecard.csv",
        "results/tables/scorecard.md",
    ]
    if CLAIMS
    else []
)
