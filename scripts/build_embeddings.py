"""Rule build_embeddings: results/embeddings/{dataset}/vectors.npy + vectors.json (provenance)."""

from attnexp.data.embeddings import EmbeddingSourceError, build_embeddings
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
plan = dict(snakemake.params.plan)
if "path" in plan:  # a pretrained file: where the workflow put it
    plan["path"] = snakemake.input.vectors
with fail_cleanly(EmbeddingSourceError, ValueError):
    build_embeddings(
        snakemake.input.vocab,
        snakemake.input.corpus,
        snakemake.output.vectors,
        snakemake.output.meta,
        plan=plan,
        seed=snakemake.config["seed"],
        log=log,
    )
