"""Rule jw_model_figures: one model's J&W figures (τ histograms, densities and differences,
permutation violins, adversarial JSD histogram and violins) from its per-instance tables, as PDF and PNG."""

from attnexp import io
from attnexp.papers.jain_wallace import plots
from attnexp.plots import save_figure
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    w = snakemake.wildcards
    title = f"{w.dataset} {w.model} (seed {w.seed})"
    tables = {name: io.read_table(snakemake.input[name]) for name in ("correlations", "permutation", "adversarial")}
    classes = io.read_json(snakemake.input.metrics, sealed=True)["classes"]  # the legends name each predicted class
    figures = {
        "tau_histograms": plots.tau_histograms(tables["correlations"], title, classes),
        "tau_densities": plots.tau_densities(tables["correlations"], title),
        "tau_differences": plots.tau_differences(tables["correlations"], title),
        "permutation": plots.permutation_violin(tables["permutation"], title, classes),
        "adversarial_histogram": plots.adversarial_histogram(tables["adversarial"], title, classes),
        "adversarial_violin": plots.adversarial_violin(tables["adversarial"], title, classes),
    }
    for name, figure in figures.items():
        save_figure(figure, snakemake.output[f"{name}_pdf"], snakemake.output[f"{name}_png"])
    log(f"{len(figures)} figures written for {title}")
