"""Rule tabulate_performance: results/tables/performance.{csv,md}, ours beside the published values,
and their claim rows (results/claims/performance.csv)."""

import pandas as pd

from attnexp import io
from attnexp.claims import write_claims
from attnexp.tables import performance_claims, performance_markdown, performance_table
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    runs = []
    for path in snakemake.input.metrics:
        run = io.read_json(path, sealed=True)
        runs.append(run | {"dataset": run["provenance"]["dataset"]})
    table = performance_table(runs, pd.read_csv(snakemake.input.published))
    with io.atomic_path(snakemake.output.csv) as tmp:
        table.to_csv(tmp, index=False)
    io.write_text(snakemake.output.md, performance_markdown(table))
    write_claims(snakemake.output.claims, performance_claims(table, snakemake.params.tolerance))
    log(f"{len(runs)} trained models tabulated")
