"""Rule ss_delta_js_figure: the single-weight erasure scatter (ΔJS) of one model, a panel per dataset
(S&S §5)."""

from attnexp import io
from attnexp.papers.serrano_smith.plots import delta_js
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    tables = {d: io.read_table(p, dtype={"id": str}) for d, p in zip(snakemake.params.datasets, snakemake.input)}
    plot = snakemake.params.plot
    model, model_seed = snakemake.wildcards.model, int(snakemake.wildcards.seed)
    figure = delta_js(tables, model, plot["bin_width"], plot["per_bin"], snakemake.params.seed, model_seed)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    log(f"single-weight erasure figure of {model}, seed {model_seed}, over {sorted(tables)}")
