"""A trained run back in memory: its model restored from its checkpoint onto a device (`restore_run`),
with the vocabulary and classes it was trained on, so that every later stage reads a split's
examples with labels mapped through the checkpoint's classes; and its attention exported per
instance of every split, which W&P's guided models and adversary read (`export_attention`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from attnexp import io
from attnexp.checkpoints import CheckpointError, restore_model
from attnexp.data.documents import DataFiles
from attnexp.data.splits import read_classes, read_guides, read_split, read_vocab
from attnexp.models import ModelSpec
from attnexp.models.inputs import Example, to_examples
from attnexp.models.splits import SplitData
from attnexp.runtime import model_device, predict, resolve_device, set_determinism

__all__ = ["Run", "restore_run", "load_examples", "load_test_examples", "export_attention"]


def _raw_classes(data: DataFiles, classes: list[str]) -> list:
    """A checkpoint stores class labels as strings; map them back to the dataset's label values."""
    raw = {str(c): c for c in read_classes(data)}
    missing = [c for c in classes if c not in raw]
    if missing:
        raise CheckpointError(f"the checkpoint's classes {missing} are not labels of {data.train}")
    return [raw[c] for c in classes]


def load_examples(data: DataFiles, split: str, vocab: list[str], classes: list[str]) -> list[Example]:
    """A split as model inputs, labels mapped through the checkpoint's `classes`."""
    records = read_split(data, split)
    return to_examples(records, vocab, _raw_classes(data, classes))


def load_test_examples(data: DataFiles, vocab: list[str], classes: list[str]) -> list[Example]:
    """The test split as model inputs, labels mapped through the checkpoint's `classes`."""
    return load_examples(data, "test", vocab, classes)


@dataclass
class Run:
    """A trained model back in memory, in eval mode, with what it was trained on."""

    model: nn.Module
    spec: ModelSpec
    metadata: dict
    vocab: list[str]
    classes: list[str]  # class labels as stored, in class-index order

    def test_examples(self, data: DataFiles) -> list[Example]:
        return load_test_examples(data, self.vocab, self.classes)

    def examples(self, data: DataFiles, split: str) -> list[Example]:
        return load_examples(data, split, self.vocab, self.classes)

    def examples_of(self, data: DataFiles, records: list[dict]) -> list[Example]:
        """Records of the dataset's own format from another file (the shifted test set) as model inputs."""
        return to_examples(records, self.vocab, _raw_classes(data, self.classes))


def restore_run(
    path: str | Path, data: DataFiles, expected_model: str | None = None, device: str | torch.device | None = None
) -> Run:
    """Rebuild a trained model from its checkpoint's own spec and config (nothing is re-derived from
    its name), refusing it if the vocabulary of `data` differs, or if its spec names another model
    than `expected_model` (e.g. the `{model}` wildcard of the rule asking); on `device` if given,
    a torch device or the config's setting (auto | cpu | cuda, `resolve_device`), checked before the
    checkpoint is read (which is always onto the CPU first)."""
    if isinstance(device, str):
        device = resolve_device(device)
    vocab = read_vocab(data.path("vocab"))
    model, spec, metadata = restore_model(path, vocab, expected_model)
    if device is not None:
        model.to(device)
    return Run(model.eval(), spec, metadata, vocab + metadata.get("open_words", []), metadata["classes"])


def export_attention(
    checkpoint: str | Path,
    data: DataFiles,
    out: str | Path,
    *,
    batch_size: int,
    guide_path=None,
    device: str = "cpu",
    threads: int = 1,
) -> None:
    """Per instance of every split: id, split, length, the selected model's attention over the
    attended items and its class probabilities (W&P save these for the guided models, D-ALIGN). The
    model runs on `device` (the config's setting: auto | cpu | cuda), with `threads` torch threads
    (not torch's default of every core: the last bits would depend on the machine)."""
    set_determinism(0, threads)  # evaluation only: the seed draws nothing
    run = restore_run(checkpoint, data, device=device)
    classes = _raw_classes(data, run.classes)
    guides = read_guides(guide_path) if guide_path else None

    def records():
        for split in ("train", "dev", "test"):
            examples = to_examples(read_split(data, split), run.vocab, classes)
            split_data = SplitData(examples, None if guides is None else guides[split])
            probs, attention = predict(run.model, split_data, batch_size, model_device(run.model))
            for e, p, a in zip(examples, probs, attention):
                yield {"id": e.id, "split": split, "length": len(a), "attention": a.tolist(), "probs": p.tolist()}

    io.write_jsonl(out, records(), seal=True)
