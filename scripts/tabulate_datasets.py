"""Rule tabulate_datasets: results/tables/datasets.{csv,md}, ours beside J&W Table 1."""

import pandas as pd

from attnexp import io
from attnexp.markdown import to_markdown
from attnexp.tables import dataset_table
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    stats = [io.read_json(path) for path in snakemake.input.stats]  # a damaged one: one line naming it
    table = dataset_table(stats, pd.read_csv(snakemake.input.published))
    with io.atomic_path(snakemake.output.csv) as tmp:
        table.to_csv(tmp, index=False)
    notes = "\n".join(
        f"- {row.dataset}: {row.substitute_notes}"
        for row in table.itertuples()
        if isinstance(row.substitute_notes, str)
    )
    io.write_text(
        snakemake.output.md,
        "# Datasets: ours beside Jain & Wallace Table 1\n\n"
        + to_markdown(table, drop=("substitute_notes", "published_source"))
        + "\nPublished values: Jain & Wallace 2019, Table 1 (references/jain_wallace_table1.csv).\n"
        + (f"\nStand-in files used (what differs from the canonical source):\n\n{notes}\n" if notes else ""),
    )
    log(f"{len(table)} datasets tabulated")
