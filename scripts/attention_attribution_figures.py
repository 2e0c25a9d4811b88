"""Rule attention_attribution_figures: the head-pruning curve and the attribution graphs of one
Transformer run, as deterministic PDF and PNG."""

from attnexp import io
from attnexp.papers.attention_attribution.plots import graph_figure, pruning_figure
from attnexp.plan import RunKey
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    run = RunKey.of_file(snakemake.input.pruning)
    name = f"{run.dataset}, {run.model} (seed {run.seed})"
    save_figure(
        pruning_figure(io.read_table(snakemake.input.pruning), f"{name}: head pruning"),
        snakemake.output.pruning_pdf,
        snakemake.output.pruning_png,
    )
    graphs = io.read_json(snakemake.input.graphs, sealed=True)
    save_figure(
        graph_figure(graphs["graphs"], graphs["layers"], f"{name}: attribution graphs (τ = {graphs['threshold']})"),
        snakemake.output.graphs_pdf,
        snakemake.output.graphs_png,
    )
    log(f"figures of {name} written")
