# Every comparison with a paper in one table: each paper's claims (results/claims/<name>.csv, registered
# in CLAIMS by its rule file) stacked into results/tables/claims.{csv,md} (`attnexp.claims`), then the
# scorecard: each claim's tolerance basis and, for a miss, its named cause (`attnexp.scorecard`).

CLAIMS.close()  # read below: a paper's rule file included after this one fails loudly


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
