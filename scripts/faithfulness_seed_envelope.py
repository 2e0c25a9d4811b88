"""Rule faithfulness_seed_envelope: results/faithfulness/{dataset}/{model}/seed{seed}/seed_envelope.csv,
each explainer's agreement with itself across the W&P seed models."""

from attnexp.explanations import explanation_sets
from attnexp.papers.faithfulness.seed_envelopes import write_seed_envelope
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    seeds = list(explanation_sets(snakemake.input.seeds).values())
    write_seed_envelope(
        snakemake.input.base, dict(zip(snakemake.params.seeds, seeds, strict=True)), snakemake.output[0]
    )
log(f"seed envelope over {len(snakemake.params.seeds)} seed models written to {snakemake.output[0]}")
