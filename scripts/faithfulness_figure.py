"""Rule faithfulness_figure: results/figures/faithfulness/{dataset}/aopc.{pdf,png}, the ERASER
perturbation curves of every model of one dataset, under the first removal operator (`faithfulness.ops`)."""

from attnexp import io
from attnexp.papers.faithfulness.plots import perturbation_curves
from attnexp.papers.faithfulness.summary import primary_operator
from attnexp.plan import RunKey
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    tables = {}
    for path in snakemake.input:
        run = RunKey.of_file(path)
        table = primary_operator(io.read_table(path, dtype={"id": str, "ranking": str, "unit": str, "operator": str}))
        for unit, part in table.groupby("unit", sort=False):  # a HAN has a column per unit
            tables[f"{run.model} (seed {run.seed})" + (f", {unit}" if table["unit"].nunique() > 1 else "")] = part
    save_figure(perturbation_curves(tables, snakemake.wildcards.dataset), snakemake.output.pdf, snakemake.output.png)
    log(f"{len(tables)} models plotted")
