"""Rule ss_removal_figures: F-box (fraction removed) and F-mass (attention mass removed) at the first
flip for one dataset, a panel per model (S&S §7)."""

import pandas as pd

from attnexp.plots import save_figure
from attnexp.plots.serrano_smith import removal_boxes
from attnexp.workflow import log_to

log = log_to(snakemake.log[0])
tables = {m: pd.read_csv(p, dtype={"id": str}) for m, p in zip(snakemake.params.models, snakemake.input)}
dataset = snakemake.wildcards.dataset
for name, quantity in (("removal_fraction", "fraction"), ("removed_mass", "removed_mass")):
    save_figure(removal_boxes(tables, dataset, quantity), snakemake.output[f"{name}_pdf"], snakemake.output[f"{name}_png"])
log(f"F-box and F-mass of {dataset} over {sorted(tables)}")
