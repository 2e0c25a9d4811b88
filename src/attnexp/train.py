"""Training and checkpoints for every model family, deterministic given the seed.

Read top to bottom: settings -> determinism -> data -> loss and optimiser -> prediction -> the
training loop with checkpoint selection -> checkpoint files.

Protocols (config `train.protocols`, overridable per dataset): Jain & Wallace §3 for classification
(class-weighted BCE summed over the batch, Adam amsgrad 1e-3, weight decay 1e-5 except attention,
batch 32, 8 epochs, best dev ROC-AUC with the first epoch never selected), their QA/NLI settings
(cross-entropy, one weight-decay group, best dev accuracy), and Serrano & Smith §2 (Adam, dropout,
gradient clipping, ReduceLROnPlateau, early stopping, a cap on padded tokens per batch).
`select_on: test` reproduces the papers' test-set checkpoint selection (D-SEL).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnexp import io
from attnexp.metrics import classification_metrics
from attnexp.models import ModelSpec, build_model, config_record, model_config
from attnexp.models.inputs import Example, collate, length_bucketed_batches, sorted_batches

__all__ = [
    "CheckpointError",
    "SplitData",
    "set_determinism",
    "resolve_device",
    "class_weights",
    "predict",
    "train_model",
    "TrainResult",
    "checkpoint_metadata",
    "save_checkpoint",
    "load_checkpoint",
]


class CheckpointError(ValueError):
    """A checkpoint is unreadable or was trained for a different vocabulary or model config."""


# ---------------------------------------------------------------------------------------------
# Determinism and device


def set_determinism(seed: int, threads: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) and allow only deterministic kernels (D-SEED)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # required by deterministic cuBLAS
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.set_num_threads(threads)


def resolve_device(setting: str) -> torch.device:
    """`auto`: the GPU when one is present; `cuda` without one is an error, not a silent CPU run."""
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if setting == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("config key 'train.device' is 'cuda' but torch sees no GPU")
    return torch.device(setting)


# ---------------------------------------------------------------------------------------------
# Data


@dataclass
class SplitData:
    """Examples of one split plus the imposed attention of a guided model (by instance id)."""

    examples: list[Example]
    guides: dict[str, np.ndarray] | None = None

    def labels(self) -> np.ndarray:
        return np.array([e.label for e in self.examples])


def class_weights(labels: np.ndarray) -> float:
    """J&W §3 pos_weight = N / N_pos - 1, so both classes weigh the same in the summed loss."""
    n_pos = int(np.sum(labels == 1))
    if n_pos == 0:
        raise ValueError("the training split has no positive instance")
    return len(labels) / n_pos - 1


def _batches(split: SplitData, order: list[np.ndarray], layout: str):
    for indices in order:
        yield collate([split.examples[i] for i in indices], layout, split.guides)


# ---------------------------------------------------------------------------------------------
# Loss and optimiser


def _loss(logits: torch.Tensor, labels: torch.Tensor, pos_weight: float | None) -> torch.Tensor:
    """Summed over the batch. J&W BC: class-weighted BCE with logits; otherwise cross-entropy."""
    if logits.shape[-1] == 1:
        weight = torch.where(labels == 1, pos_weight, 1.0)
        return F.binary_cross_entropy_with_logits(logits.squeeze(-1), labels.float(), weight=weight, reduction="sum")
    return F.cross_entropy(logits, labels, reduction="sum")


def _optimizer(model: nn.Module, settings: dict) -> torch.optim.Optimizer:
    """Adam (amsgrad per protocol); attention parameters get their own weight decay (J&W BC: 0)."""
    attention = [p for n, p in model.named_parameters() if n.startswith("attention.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("attention.")]
    groups = [{"params": rest, "weight_decay": settings["weight_decay"]}]
    if attention:
        groups.append({"params": attention, "weight_decay": settings["attention_weight_decay"]})
    return torch.optim.Adam(groups, lr=settings["lr"], amsgrad=settings["amsgrad"])


# ---------------------------------------------------------------------------------------------
# Prediction


def probabilities(logits: torch.Tensor) -> torch.Tensor:
    """(..., C) class probabilities; a single sigmoid logit becomes [1 - p, p]."""
    if logits.shape[-1] == 1:
        p = torch.sigmoid(logits.squeeze(-1))
        return torch.stack([1 - p, p], dim=-1)
    return torch.softmax(logits, dim=-1)


@torch.no_grad()
def predict(model: nn.Module, split: SplitData, batch_size: int, device: torch.device, max_tokens: int | None = None):
    """Eval-mode pass over a split in length-sorted batches. Returns, in the split's order, the class
    probabilities (N, C) and each instance's attention over its attended items (list of arrays)."""
    model.eval()
    lengths = [e.length(model.layout) for e in split.examples]
    order = sorted_batches(np.array(lengths), batch_size, max_tokens)
    probs = [None] * len(split.examples)
    attention = [None] * len(split.examples)
    for indices, batch in zip(order, _batches(split, order, model.layout)):
        batch = batch.to(device)
        encoded = model.encode(batch)
        logits, alpha = model.decode(encoded, batch.guide if model.guided else None)
        p = probabilities(logits).cpu().numpy()
        alpha, mask = alpha.cpu().numpy(), encoded.mask.cpu().numpy()
        for row, i in enumerate(indices):
            probs[i] = p[row]
            attention[i] = alpha[row][mask[row]]
    return np.stack(probs), attention


def _evaluate(model, split, settings, device) -> dict:
    probs, _ = predict(model, split, settings["eval_batch_size"], device, settings["max_tokens"])
    return classification_metrics(split.labels(), probs)


# ---------------------------------------------------------------------------------------------
# Training loop


@dataclass
class TrainResult:
    state_dict: dict
    best_epoch: int
    history: list[dict]
    dev: dict
    test: dict
    timing: dict = field(default_factory=dict)


def _rounded(metrics: dict) -> dict:
    return json.loads(json.dumps(metrics), parse_float=lambda x: round(float(x), 6))


def train_model(
    model: nn.Module,
    splits: dict[str, SplitData],
    settings: dict,
    select_on: str,
    seed: int,
    device: torch.device,
    log: Callable[[str], None] = print,
) -> TrainResult:
    """Train, evaluating dev and test after every epoch; keep the weights of the best epoch on
    `select_on` (`settings.select_metric`; `skip_first_epoch`: J&W never select epoch 1)."""
    model.to(device)
    train = splits["train"]
    rng = np.random.RandomState(seed)  # batch order (J&W left it unseeded: D-SEED)
    optimizer = _optimizer(model, settings)
    plateau = None
    if settings["lr_plateau"] is not None:  # S&S: halve the lr when the validation metric stalls
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=settings["lr_plateau"]["factor"], patience=settings["lr_plateau"]["patience"]
        )
    pos_weight = class_weights(train.labels()) if model.decoder.out_features == 1 else None
    lengths = np.array([e.length(model.layout) for e in train.examples])
    best, history, since_best = None, [], 0
    computed = real = 0
    started = time.perf_counter()
    for epoch in range(1, settings["epochs"] + 1):
        epoch_start = time.perf_counter()
        model.train()
        order = length_bucketed_batches(lengths, settings["batch_size"], rng, settings["batch_noise"], settings["max_tokens"])
        total_loss = 0.0
        for batch in _batches(train, order, model.layout):
            computed += batch.tokens.numel()
            real += int(batch.lengths.sum()) if batch.sentence_lengths is None else int(batch.sentence_lengths.sum())
            batch = batch.to(device)
            logits, _ = model(batch)
            loss = _loss(logits, batch.labels, pos_weight)
            optimizer.zero_grad()
            # J&W BC sums the loss over the batch; QA/NLI and S&S average it
            (loss if settings["loss_reduction"] == "sum" else loss / len(batch)).backward()
            if settings["grad_clip"] is not None:
                nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
            optimizer.step()
            total_loss += loss.item()
        dev, test = (_evaluate(model, splits[s], settings, device) for s in ("dev", "test"))
        selection = dev if select_on == "dev" else test
        score = selection[settings["select_metric"]]
        record = {
            "epoch": epoch,
            "train_loss": total_loss / len(train.examples),
            "lr": optimizer.param_groups[0]["lr"],
            "dev": {k: v for k, v in dev.items() if k != "f1"},
            "test": {k: v for k, v in test.items() if k != "f1"},
        }
        history.append(_rounded(record))
        selectable = not (settings["skip_first_epoch"] and epoch == 1 and settings["epochs"] > 1)
        score = float("-inf") if np.isnan(score) else score  # e.g. ROC-AUC of a one-class split
        improved = selectable and (best is None or score > best[0])
        if improved:
            best = (score, epoch, copy.deepcopy(model.state_dict()), dev, test)
            since_best = 0
        elif selectable:
            since_best += 1
        log(
            f"epoch {epoch}/{settings['epochs']}: train loss {record['train_loss']:.4f}, "
            f"{select_on} {settings['select_metric']} {score:.4f} (dev acc {dev['accuracy']:.4f}, "
            f"test acc {test['accuracy']:.4f}){' *' if improved else ''} ({time.perf_counter() - epoch_start:.1f} s)"
        )
        if plateau is not None:
            plateau.step(score)
        if settings["patience"] is not None and since_best >= settings["patience"]:
            log(f"early stop: no {select_on} improvement for {since_best} epochs")
            break
    _, best_epoch, state, dev, test = best
    seconds = time.perf_counter() - started
    timing = {
        "train_seconds": round(seconds, 3),
        "epochs_run": len(history),
        "seconds_per_epoch": round(seconds / len(history), 3),
        "padding_share": round(1 - real / computed, 4) if computed else 0.0,
        "device": str(device),
        "threads": torch.get_num_threads(),
    }
    return TrainResult(state, best_epoch, history, _rounded(dev), _rounded(test), timing)


# ---------------------------------------------------------------------------------------------
# Checkpoints: state dict + metadata, loaded with weights_only=True and checked before use


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def checkpoint_metadata(spec: ModelSpec, config, vocab: list[str], classes: list) -> dict:
    """What a checkpoint must agree with to be loaded: the model config (hashed) and vocabulary."""
    record = config_record(config)
    return {
        "model": spec.name,
        "family": spec.family,
        "config": record,
        "config_sha256": _digest(record),
        "vocab_size": len(vocab),
        "vocab_sha256": _digest(vocab),
        "classes": [str(c) for c in classes],
    }


def save_checkpoint(path: str | Path, state_dict: dict, metadata: dict) -> None:
    # Through a file object: given a path, torch.save names the archive's inner folder after the
    # (random) temp file name, and identical checkpoints would differ in bytes.
    with io.atomic_path(path) as tmp, open(tmp, "wb") as f:
        torch.save({"metadata": metadata, "state_dict": state_dict}, f)


def load_checkpoint(path: str | Path, expected: dict | None = None) -> tuple[dict, dict]:
    """-> (state_dict, metadata). `expected`: metadata keys that must match, e.g. the vocabulary hash
    and config hash of the data and config at hand; a mismatch names each differing key."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same error to the user
        raise CheckpointError(f"{path}: not a readable attnexp checkpoint ({err})") from err
    if not isinstance(payload, dict) or set(payload) != {"metadata", "state_dict"}:
        raise CheckpointError(f"{path}: expected a dict with 'metadata' and 'state_dict'")
    metadata = payload["metadata"]
    differing = [
        f"{key}: checkpoint has {metadata.get(key)!r}, expected {value!r}"
        for key, value in (expected or {}).items()
        if metadata.get(key) != value
    ]
    if differing:
        raise CheckpointError(f"{path} was trained for a different setup:\n  " + "\n  ".join(differing))
    return payload["state_dict"], metadata


def restore_model(path: str | Path, spec: ModelSpec, config, vocab: list[str], classes: list) -> nn.Module:
    """Build the model and load its checkpoint, refusing one trained for other data or config."""
    expected = checkpoint_metadata(spec, config, vocab, classes)
    state, _ = load_checkpoint(path, {k: expected[k] for k in ("model", "config_sha256", "vocab_sha256", "classes")})
    model = build_model(spec, config)
    model.load_state_dict(state)
    return model.eval()


def build_and_initialise(spec: ModelSpec, vocab: list[str], n_classes: int, vectors: np.ndarray | None, settings: dict):
    """Seeded model construction; pretrained/word2vec vectors copied into the embedding (PAD row 0)."""
    embedding_dim = settings["embedding_dim"] if vectors is None else vectors.shape[1]
    if vectors is not None and vectors.shape[0] != len(vocab):
        raise ValueError(f"the embedding matrix has {vectors.shape[0]} rows for a vocabulary of {len(vocab)} words")
    output_size = 1 if n_classes == 2 and spec.family == "flat" else n_classes
    config = model_config(spec, len(vocab), output_size, embedding_dim, settings)
    model = build_model(spec, config)
    if vectors is not None:
        with torch.no_grad():
            model.embedding.weight.copy_(torch.from_numpy(vectors))
            model.embedding.weight[0].zero_()
    return model, config


# ---------------------------------------------------------------------------------------------
# From files to files: what the rule scripts call


def read_vocab(path: str | Path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def read_guides(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """A source model's exported attention (`export_attention`) -> {split: {id: weights}}."""
    guides: dict[str, dict[str, np.ndarray]] = {}
    for record in io.read_jsonl(path):
        if len(record["attention"]) != record["length"]:
            raise ValueError(f"{path}: instance {record['id']!r} stores {len(record['attention'])} weights for length {record['length']}")
        guides.setdefault(record["split"], {})[record["id"]] = np.asarray(record["attention"], dtype=np.float32)
    return guides


def load_splits(data_dir: str | Path, vocab: list[str], classes: list, guides: dict | None = None) -> dict[str, SplitData]:
    from attnexp.models.inputs import to_examples

    splits = {}
    for split in ("train", "dev", "test"):
        examples = to_examples(io.read_jsonl(Path(data_dir) / f"{split}.jsonl"), vocab, classes)
        split_guides = None
        if guides is not None:
            split_guides = guides.get(split, {})
            missing = [e.id for e in examples if e.id not in split_guides]
            if missing:
                raise ValueError(f"the guide attention lacks {len(missing)} {split} instances, e.g. {missing[0]!r}")
        splits[split] = SplitData(examples, split_guides)
    return splits


def fit(
    spec: ModelSpec,
    data_dir: str | Path,
    vectors_path: str | Path | None,
    guide_path: str | Path | None,
    settings: dict,
    select_on: str,
    seed: int,
    threads: int,
    device_setting: str,
    out_model: str | Path,
    out_metrics: str | Path,
    out_timing: str | Path,
    provenance: dict,
    log: Callable[[str], None] = print,
) -> dict:
    """Train one model from the preprocessed data and write its checkpoint, metrics and timing."""
    from attnexp.models.inputs import label_classes

    set_determinism(seed, threads)
    device = resolve_device(device_setting)
    vocab = read_vocab(Path(data_dir) / "vocab.txt")
    classes = label_classes(io.read_jsonl(Path(data_dir) / "train.jsonl"))
    guides = read_guides(guide_path) if guide_path else None
    splits = load_splits(data_dir, vocab, classes, guides)
    vectors = np.load(vectors_path) if vectors_path else None
    model, config = build_and_initialise(spec, vocab, len(classes), vectors, settings)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{spec.name}: {n_params:,} parameters, {len(classes)} classes, {len(splits['train'].examples)} training instances, device {device}")
    result = train_model(model, splits, settings, select_on, seed, device, log)
    metadata = checkpoint_metadata(spec, config, vocab, classes)
    save_checkpoint(out_model, result.state_dict, metadata)
    metrics = {
        "model": spec.name,
        "classes": [str(c) for c in classes],
        "select_on": select_on,
        "select_metric": settings["select_metric"],
        "selected_epoch": result.best_epoch,
        "seed": seed,
        "test": result.test,
        "dev": result.dev,
        "history": result.history,
        "settings": settings,
        "provenance": provenance,
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
    }
    io.write_json(out_metrics, metrics)
    io.write_json(out_timing, result.timing)
    log(f"selected epoch {result.best_epoch}: test accuracy {result.test['accuracy']:.4f}, macro F1 {result.test['macro_f1']:.4f}")
    return metrics


def restore_from_checkpoint(path: str | Path, data_dir: str | Path) -> tuple[nn.Module, dict, list[str], list]:
    """Rebuild a trained model from its checkpoint, refusing it if the data's vocabulary differs."""
    from attnexp.models import parse_model_name
    from attnexp.models.flat import FlatConfig
    from attnexp.models.hierarchical import HierarchicalConfig
    from attnexp.models.qa import QAConfig

    vocab = read_vocab(Path(data_dir) / "vocab.txt")
    state, metadata = load_checkpoint(path, {"vocab_sha256": _digest(vocab), "vocab_size": len(vocab)})
    record = dict(metadata["config"])
    config_class = {c.__name__: c for c in (FlatConfig, HierarchicalConfig, QAConfig)}[record.pop("class")]
    config = config_class(**record)
    task = "qa" if metadata["family"] == "qa" else "binary"
    model = build_model(parse_model_name(metadata["model"], task), config)
    model.load_state_dict(state)
    return model.eval(), metadata, vocab, metadata["classes"]


def export_attention(checkpoint: str | Path, data_dir: str | Path, out: str | Path, batch_size: int, guide_path=None) -> None:
    """Per instance of every split: id, split, length, the selected model's attention over the
    attended items and its class probabilities (W&P save these for the guided models, D-ALIGN)."""
    from attnexp.models.inputs import to_examples

    model, metadata, vocab, classes = restore_from_checkpoint(checkpoint, data_dir)
    raw_classes = {str(c): c for c in {r["label"] for r in io.read_jsonl(Path(data_dir) / "train.jsonl")}}
    classes = [raw_classes[c] for c in classes]
    guides = read_guides(guide_path) if guide_path else None

    def records():
        for split in ("train", "dev", "test"):
            examples = to_examples(io.read_jsonl(Path(data_dir) / f"{split}.jsonl"), vocab, classes)
            data = SplitData(examples, None if guides is None else guides[split])
            probs, attention = predict(model, data, batch_size, torch.device("cpu"))
            for e, p, a in zip(examples, probs, attention):
                yield {"id": e.id, "split": split, "length": len(a), "attention": a.tolist(), "probs": p.tolist()}

    io.write_jsonl(out, records())
