"""Rule tabulate_performance: results/tables/performance.{csv,md}, ours beside the published values."""

import json
from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.tables import performance_markdown, performance_table
from attnexp.workflow import log_to

log = log_to(snakemake.log[0])
runs = []
for path in snakemake.input.metrics:
    run = json.loads(Path(path).read_text(encoding="utf-8"))
    runs.append(run | {"dataset": Path(path).parts[-4]})  # results/models/{dataset}/{model}/seed{seed}/metrics.json
table = performance_table(runs, pd.read_csv(snakemake.input.published))
with io.atomic_path(snakemake.output.csv) as tmp:
    table.to_csv(tmp, index=False)
io.write_text(snakemake.output.md, performance_markdown(table))
log(f"{len(runs)} trained models tabulated")
