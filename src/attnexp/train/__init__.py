"""Training one model, from files to files: what the train_model rule's script calls (`fit`, given a
`TrainingJob`). It reads the dataset's splits and vocabulary (and word vectors, another model's
attention), builds and initialises the model, trains it and writes its checkpoint, metrics and timing.

The training itself, one concern per module, read in this order:

- `attnexp.train.objectives`: the loss a training minimises, and the hooks that replace or watch it;
- `attnexp.train.optimizers`: the optimiser step (Adam, AdamW, their lazy variants) and the
  learning-rate schedules;
- `attnexp.train.parts`: the loop's parts (the embedding's gradient and clipping, checkpoint
  selection with early stopping, the timing);
- `attnexp.train.snapshot`: the snapshot a stopped job resumes from;
- `attnexp.train.loop`: the loop, `train_model` (one epoch at a time: `train_epochs`).

Protocols (config `train.protocols`, overridable per dataset): Jain & Wallace §3 for classification
(class-weighted BCE summed over the batch, Adam amsgrad 1e-3, weight decay 1e-5 except attention,
batch 32, 8 epochs, best dev ROC-AUC with the first epoch never selected), their QA/NLI settings
(cross-entropy, one weight-decay group, best dev accuracy), and Serrano & Smith §2 (Adam, dropout,
gradient clipping, ReduceLROnPlateau, early stopping, a cap on padded tokens per batch), and the
small Transformer (AdamW, linear warm-up then decay, best dev accuracy).
`select_on: test` reproduces the papers' test-set checkpoint selection (D-SEL).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnexp import io
from attnexp.checkpoints import checkpoint_metadata, save_checkpoint
from attnexp.data.documents import DATA_FILES, DataFiles
from attnexp.data.embeddings import load_vectors
from attnexp.data.splits import open_words, read_classes, read_guides, read_vocab
from attnexp.models import ModelSpec, build_model, model_config
from attnexp.models.splits import load_splits
from attnexp.runtime import resolve_device, set_determinism
from attnexp.train.loop import TrainResult, mean_conicity, train_model
from attnexp.train.objectives import Monitor, Objective
from attnexp.train.snapshot import Snapshot, snapshot_path

__all__ = ["build_and_initialise", "TrainingJob", "training_identity", "fit"]


def build_and_initialise(spec: ModelSpec, vocab: list[str], n_classes: int, vectors: np.ndarray | None, settings: dict):
    """Seeded model construction; pretrained/word2vec vectors copied into the embedding (PAD row 0)."""
    embedding_dim = settings["embedding_dim"] if vectors is None else vectors.shape[1]
    if vectors is not None and vectors.shape[0] != len(vocab):
        raise ValueError(f"the embedding matrix has {vectors.shape[0]} rows for a vocabulary of {len(vocab)} words")
    output_size = spec.output_size(n_classes)
    config = model_config(spec, len(vocab), output_size, embedding_dim, settings)
    model = build_model(spec, config)
    if hasattr(model, "bind_vocabulary"):  # a pretrained encoder: the dataset's words as its word pieces
        model.bind_vocabulary(vocab)
    if vectors is not None:
        with torch.no_grad():
            model.embedding.weight.copy_(torch.from_numpy(vectors))
            model.embedding.weight[0].zero_()
    return model, config


@dataclass(frozen=True, kw_only=True)
class TrainingJob:
    """One train_model job: what it reads (`data`: the dataset's splits and vocabulary), how it
    trains, what it writes. `guide_path`: another model's exported attention
    (`attnexp.runs.export_attention`), carried by every batch as `batch.guide`: a guided model imposes
    it, W&P's adversary diverges from it."""

    data: DataFiles
    vectors_path: str | Path | None
    guide_path: str | Path | None
    settings: dict
    select_on: str
    seed: int
    threads: int
    device_setting: str
    out_model: str | Path
    out_metrics: str | Path
    out_timing: str | Path
    provenance: dict


def _code_digest() -> str:
    """The digest of attnexp's own source files: a snapshot is resumed only by the code that wrote it."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # attnexp, this package's parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def training_identity(spec: ModelSpec, job: TrainingJob, device: torch.device) -> str:
    """What makes a training the same one: its model, settings, seed, threads and device, the digests
    of the files it reads, and the code's digest (`_code_digest`)."""
    files = {name: getattr(job.data, name) for name in DATA_FILES}
    files |= {"vectors": job.vectors_path, "guide": job.guide_path}
    what = {
        "spec": spec.record(),
        "settings": job.settings,
        "select_on": job.select_on,
        "seed": job.seed,
        "threads": job.threads,
        "device": str(device),
        "files": {name: None if path is None else io.file_digest(path) for name, path in files.items()},
        "code": _code_digest(),
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def _metrics(spec: ModelSpec, job: TrainingJob, classes: list, result: TrainResult, extra: dict) -> dict:
    """metrics.json: the selected epoch's dev and test metrics, every epoch's, and what made them."""
    return {
        "model": spec.name,
        "spec": spec.record(),
        "classes": [str(c) for c in classes],
        "select_on": job.select_on,
        "select_metric": job.settings["select_metric"],
        "selected_epoch": result.best_epoch,
        "seed": job.seed,
        "test": result.test,
        "dev": result.dev,
        "history": result.history,
        **extra,
        "settings": job.settings,
        "provenance": job.provenance,
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
    }


def fit(
    spec: ModelSpec,
    job: TrainingJob,
    log: Callable[[str], None] = print,
    objective: Objective | None = None,
    monitor: Monitor | None = None,
) -> dict:
    """Train one model from the preprocessed data and write its checkpoint, metrics and timing;
    -> the metrics."""
    set_determinism(job.seed, job.threads)
    device = resolve_device(job.device_setting)
    vocab = read_vocab(job.data.path("vocab"))
    extra_words = open_words(job.data, vocab) if spec.traits.open_vocabulary else []
    classes = read_classes(job.data)
    guides = read_guides(job.guide_path) if job.guide_path else None
    splits = load_splits(job.data, vocab + extra_words, classes, guides)
    vectors = load_vectors(job.vectors_path) if job.vectors_path else None
    model, config = build_and_initialise(spec, vocab + extra_words, len(classes), vectors, job.settings)
    n_params = sum(p.numel() for p in model.parameters())
    log(
        f"{spec.name}: {n_params:,} parameters, {len(classes)} classes, {len(splits['train'].examples)} training instances, device {device}"
    )
    resume = snapshot_path(job.out_model)
    identity = training_identity(spec, job, device)
    result = train_model(
        model,
        splits,
        job.settings,
        select_on=job.select_on,
        seed=job.seed,
        device=device,
        log=log,
        objective=objective,
        monitor=monitor,
        resume=resume,
        identity=identity,
    )
    save_checkpoint(job.out_model, result.state_dict, checkpoint_metadata(spec, config, vocab, classes, extra_words))
    extra = {}
    if spec.family in ("flat", "qa"):  # token states to attend over: their conicity (the zoo's measure)
        model.load_state_dict(result.state_dict)
        test_conicity = mean_conicity(model, splits["test"], job.settings["eval_batch_size"], device)
        extra["conicity"] = {"test": round(test_conicity, 6)}
    metrics = _metrics(spec, job, classes, result, extra)
    io.write_json(job.out_metrics, metrics, seal=True)
    io.write_json(job.out_timing, result.timing)
    Snapshot(resume, identity, log).remove()  # the outputs are whole: nothing to resume
    log(
        f"selected epoch {result.best_epoch}: test accuracy {result.test['accuracy']:.4f}, macro F1 {result.test['macro_f1']:.4f}"
    )
    return metrics
