"""A tiny separable task (positives contain "good", negatives "bad", among random filler words) as
records, examples and a preprocessed dataset's files, with the real config's training settings shrunk
to tiny models. Shared by the training and run-time tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from attnexp import io
from attnexp.config import merge_overlay, training_settings, validate_config
from attnexp.data.documents import DataFiles
from attnexp.models.inputs import Example, to_examples
from attnexp.spec import parse_model_name
from attnexp.train import TrainingJob, fit

ROOT = Path(__file__).resolve().parents[1]
SPECIALS = ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]
FILLERS = [f"w{i}" for i in range(20)]
VOCAB = SPECIALS + ["good", "bad"] + FILLERS


def quiet(_message: str) -> None:
    pass


def load_config() -> dict:
    return validate_config(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8")))


def full_grid_raw() -> dict:
    """config.yaml widened by presets/full_grid.yaml (every dataset, model and experiment), on one seed
    selected on dev: the wide config that tests of planning and validation reason about, unvalidated.
    The default config is the replication, whose selections name its own datasets and models."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    merge_overlay(config, yaml.safe_load((ROOT / "presets" / "full_grid.yaml").read_text(encoding="utf-8")))
    merge_overlay(config, {"train": {"seeds": [10], "select_on": "dev"}})
    return config


def tiny_settings(config, model, dataset="synthetic", **overrides):
    """The dataset's real settings for `model`, shrunk to a tiny model."""
    settings = training_settings(config, dataset, model)
    settings.update(epochs=2, hidden_size=8, embedding_dim=8, batch_size=16, eval_batch_size=16)
    settings.update(overrides)
    return settings


def task_records(n: int, seed: int, prefix: str, question: bool = False) -> list[dict]:
    rng = np.random.RandomState(seed)
    records = []
    for i in range(n):
        label = i % 2
        words = list(rng.choice(FILLERS, size=rng.randint(4, 12)))
        words[rng.randint(len(words))] = "good" if label else "bad"
        cut = rng.randint(1, len(words))
        record = {"id": f"{prefix}{i}", "tokens": words, "label": label, "sentences": [[0, cut], [cut, len(words)]]}
        if question:
            record["question"] = list(rng.choice(FILLERS, size=3))
        records.append(record)
    return records


def task_examples(n: int, seed: int, prefix: str, question: bool = False) -> list[Example]:
    return to_examples(task_records(n, seed, prefix, question), VOCAB, [0, 1])


def write_dataset(root: Path, sizes=(48, 24, 24), vocab=VOCAB, relabel=None) -> DataFiles:
    """train/dev/test.jsonl and vocab.txt in `root` -> their paths; `relabel` maps each label (e.g. to
    other class names)."""
    root.mkdir(parents=True, exist_ok=True)
    files = DataFiles(
        **{split: root / f"{split}.jsonl" for split in ("train", "dev", "test")}, vocab=root / "vocab.txt"
    )
    for seed, (split, n) in enumerate(zip(("train", "dev", "test"), sizes)):
        records = task_records(n, seed, f"{split}-")
        if relabel is not None:
            records = [r | {"label": relabel(r["label"])} for r in records]
        io.write_jsonl(files.path(split), records)
    files.vocab.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return files


def run_fit(config, data, out_dir, model="lstm-tanh", select_on="dev", guide=None, seed=10, log=quiet, **overrides):
    """`fit` one tiny model of the binary task -> (metrics, checkpoint path)."""
    out_dir = Path(out_dir)
    job = TrainingJob(
        data=data,
        vectors_path=None,
        guide_path=guide,
        settings=tiny_settings(config, model, **overrides),
        select_on=select_on,
        seed=seed,
        threads=1,
        device_setting="cpu",
        out_model=out_dir / "model.pt",
        out_metrics=out_dir / "metrics.json",
        out_timing=out_dir / "timing.json",
        provenance={"test": True},
    )
    metrics = fit(parse_model_name(model, "binary"), job, log=log)
    return metrics, out_dir / "model.pt"
