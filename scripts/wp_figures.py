"""Rule wp_figures: W&P's Figure 2 (violin and scatter, for the seed models and for J&W's adversary),
Figure 4 (the frontier) and Table 1 (an example's base vs adversary attention) for one base run."""

from attnexp import io
from attnexp.papers.wiegreffe_pinter.experiment import example_records
from attnexp.papers.wiegreffe_pinter.plots import attention_example, frontier, seed_scatter, seed_violin
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
w, out = snakemake.wildcards, snakemake.output
run = f"{w.dataset}, {w.model}, seed {w.seed}"
with fail_cleanly(ValueError, KeyError):
    variance = io.read_table(snakemake.input.variance, dtype={"id": str})
    for comparison, name in (("seeds", "seeds"), ("jw_adversary", "jw_adversary")):
        save_figure(
            seed_violin(variance, comparison, snakemake.params.edges, run),
            out[f"{name}_violin_pdf"],
            out[f"{name}_violin_png"],
        )
        save_figure(seed_scatter(variance, comparison, run), out[f"{name}_scatter_pdf"], out[f"{name}_scatter_png"])
    save_figure(frontier(io.read_table(snakemake.input.frontier), run), out.frontier_pdf, out.frontier_png)
    tokens, rows, instance = example_records(
        snakemake.input.base, snakemake.input.adversary, snakemake.input.test, snakemake.params.example_max_tokens
    )
    title = f"{run}: test instance {instance}, base vs adversary (λ = {snakemake.params.table_lambda:g})"
    if instance is None:
        most = snakemake.params.example_max_tokens
        title = f"{run}: no test instance has 2 to {most} tokens (wiegreffe_pinter.example_max_tokens)"
    save_figure(attention_example(tokens, rows, title), out.example_pdf, out.example_png)
log(f"W&P figures for {run} written")
