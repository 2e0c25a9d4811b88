"""Rule ss_removal_figures: the removal box plots, fraction removed and attention mass removed at
the first flip, for one dataset, a panel per model (S&S §6)."""

from attnexp import io
from attnexp.papers.serrano_smith.plots import removal_boxes
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    tables = {m: io.read_table(p, dtype={"id": str}) for m, p in zip(snakemake.params.models, snakemake.input)}
    dataset = snakemake.wildcards.dataset
    for name, quantity in (("removal_fraction", "fraction"), ("removed_mass", "removed_mass")):
        save_figure(
            removal_boxes(tables, dataset, quantity), snakemake.output[f"{name}_pdf"], snakemake.output[f"{name}_png"]
        )
    log(f"removal box plots of {dataset} over {sorted(tables)}")
