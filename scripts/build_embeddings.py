"""Rule build_embeddings: results/embeddings/{dataset}/vectors.npy + vectors.json (provenance)."""

from attnexp.data.embeddings import build_embeddings
from attnexp.workflow import log_to

log = log_to(snakemake.log[0])
plan = dict(snakemake.params.plan)
if plan["kind"] == "pretrained":
    plan["path"] = snakemake.input.vectors
build_embeddings(
    snakemake.input.vocab,
    snakemake.input.corpus,
    snakemake.output.vectors,
    snakemake.output.meta,
    plan,
    seed=snakemake.config["seed"],
    log=log,
)
