"""Rule scorecard: results/tables/claims.csv -> results/tables/scorecard.{csv,md} (`attnexp.scorecard`)."""

from attnexp.scorecard import summary, write_scorecard
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError):
    card = write_scorecard(
        snakemake.input.claims,
        snakemake.output.csv,
        snakemake.output.md,
        frozenset(snakemake.params.same_data),
        sealed=True,
    )
for row in summary(card).itertuples():
    log(
        f"{row.paper}: {row.claims} claims, {row.matched} matched, {row.missed} missed ({row.unexplained} unexplained), {row.not_compared} not compared"
    )
