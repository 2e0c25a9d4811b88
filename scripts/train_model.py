"""Rule train_model: results/models/{dataset}/{model}/seed{seed}/ model.pt, metrics.json, timing.json."""

from attnexp import io
from attnexp.checkpoints import CheckpointError
from attnexp.data.documents import DataFiles
from attnexp.data.splits import split_labels
from attnexp.plan import model_spec
from attnexp.runtime import DeviceError
from attnexp.train import TrainingJob, fit
from attnexp.train.objectives import class_weights
from attnexp.workflow import fail_cleanly, log_to, torch_threads

log = log_to(snakemake.log[0])
with fail_cleanly(CheckpointError, DeviceError, ValueError):  # a damaged input is one line naming it
    stats = io.read_json(snakemake.input.stats)
    vectors_meta = io.read_json(snakemake.input.vectors_meta) if "vectors_meta" in snakemake.input.keys() else None
    provenance = {
        "dataset": snakemake.wildcards.dataset,
        "embeddings": vectors_meta["source"] if vectors_meta else "random",
        "embeddings_why": vectors_meta["why"]
        if vectors_meta
        else f"datasets.{snakemake.wildcards.dataset}.vectors: random",
        "substitutes": ", ".join(s["file"] for s in stats["sources"] if s.get("substitute")) or "none",
        "torch_threads": snakemake.params.torch_threads,
    }
    spec = model_spec(snakemake.config, snakemake.wildcards.dataset, snakemake.wildcards.model)
    data = DataFiles.of(snakemake.input)
    adversary = None
    if spec.is_adversary:  # W&P §4: trained on the base's export (`guide`), no gold labels
        # imported here: the W&P module loads pandas (~0.5 s), which no other training job needs
        from attnexp.papers.wiegreffe_pinter.experiment import ModelConsistentAdversary

        _, labels = split_labels(data, "train")
        adversary = ModelConsistentAdversary(
            snakemake.input.guide, snakemake.params.settings["adversary"], class_weights(labels)
        )
    job = TrainingJob(
        data=data,
        vectors_path=snakemake.input.get("vectors"),
        guide_path=snakemake.input.get("guide"),
        settings=snakemake.params.settings,
        select_on=snakemake.params.select_on,
        seed=int(snakemake.wildcards.seed),
        threads=torch_threads(snakemake.params.torch_threads, snakemake.threads, log),
        device_setting=snakemake.params.device,
        out_model=snakemake.output.model,
        out_metrics=snakemake.output.metrics,
        out_timing=snakemake.output.timing,
        provenance=provenance,
    )
    fit(
        spec,
        job,
        log=log,
        objective=adversary and adversary.objective,
        monitor=adversary and adversary.monitor,
    )
