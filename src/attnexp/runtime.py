"""Run-time services every stage after training shares: determinism and device, checkpoints (save,
load, restore a trained run from its own spec), the splits and test examples, and an eval-mode
prediction pass (probabilities from logits: `attnexp.models.outputs`).

Read top to bottom: determinism -> device -> frozen parameters -> data -> prediction -> checkpoints ->
restoring a run -> exporting its attention. `attnexp.train` (the training loop) builds on this
module; nothing here imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles, read_records, verify_split_file
from attnexp.models import ModelSpec, build_model, config_record, restore_config
from attnexp.models.inputs import Example, collate, label_classes, sorted_batches, to_examples
from attnexp.models.outputs import probabilities

__all__ = [
    "CheckpointError",
    "DeviceError",
    "set_determinism",
    "resolve_device",
    "model_device",
    "frozen",
    "SplitData",
    "read_vocab",
    "open_words",
    "read_guides",
    "read_split",
    "read_classes",
    "load_splits",
    "split_labels",
    "load_examples",
    "load_test_examples",
    "batches_of",
    "predict",
    "checkpoint_metadata",
    "save_checkpoint",
    "load_checkpoint",
    "Run",
    "restore_run",
    "export_attention",
]


class CheckpointError(ValueError):
    """A checkpoint is unreadable, or was trained for a different vocabulary, config or model."""


class DeviceError(RuntimeError):
    """The config asks for a device this machine does not have. Its own class, so that the rule
    scripts report it in one line without swallowing torch's RuntimeErrors (and their tracebacks)."""


# ---------------------------------------------------------------------------------------------
# Determinism and device


def set_determinism(seed: int, threads: int) -> None:
    """A job's process set-up: seed Python, NumPy and torch (CPU and CUDA), allow only deterministic
    kernels (D-SEED) in float32 (no TF32 on a GPU), flush denormal floats to zero, set the torch
    threads, and keep freed memory for reuse (`_keep_freed_memory`)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # required by deterministic cuBLAS
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # Denormal floats (below 1.2e-38) flushed to zero on the CPU: x86 arithmetic on them is many
    # times slower, and a training that drives values towards them crawls (W&P's adversary on SST: an
    # epoch 4 s at the start, 20 s once its activations saturate; a forward and backward pass of the
    # trained adversary 4.2x faster flushed). Results change only where a value would have been a
    # denormal. A thread inherits the setting when it starts, and torch's worker threads start with a
    # job's first parallel operation, after this set-up.
    torch.set_flush_denormal(True)
    _deterministic_algorithms()
    # Under deterministic algorithms torch fills every new tensor with NaN before use, so that a read of
    # uninitialised memory shows; the pipeline's reruns are compared byte for byte instead (tests), and
    # the fills were a quarter of an IMDB BiLSTM training step (oneDNN's per-step workspaces)
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cudnn.benchmark = False
    # float32 on a GPU as on the CPU: no TF32 in cuDNN (its default) or cuBLAS products
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_num_threads(threads)
    _keep_freed_memory()


# glibc's mallopt parameters
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


def _keep_freed_memory() -> None:
    """Let the process reuse the memory it frees instead of handing it back to the kernel: a training
    step allocates and frees the same tens of MB of activations, and glibc's defaults return them
    (mmap'd blocks, trimmed heap tops), so every step paid page faults to touch them again (with the
    NaN fills off, the two together took an IMDB BiLSTM step from 308 to 237 ms on one thread). Blocks up to
    32 MB (glibc's ceiling) come from the heap, and up to 1 GB of free heap is kept. A C library
    without mallopt (not glibc) is left as it is: this changes speed, never results."""
    import ctypes

    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, 32 * 2**20)
    mallopt(_M_TRIM_THRESHOLD, 2**30)
    mallopt(_M_TOP_PAD, 64 * 2**20)


def _deterministic_algorithms() -> None:
    """`torch.use_deterministic_algorithms(True)` without its import of Inductor's config, which
    loads torch._inductor and torch._dynamo (about 1 s, more than `import torch` itself, in every job)
    only to set that config's `deterministic` flag. Nothing here compiles a model, so the flag goes
    where Inductor's config reads it when first imported (TORCHINDUCTOR_DETERMINISTIC), or onto the
    config if something has imported it already: the same state as torch's own call."""
    set_flag = getattr(torch._C, "_set_deterministic_algorithms", None)
    if set_flag is None:  # another torch: its public call, whatever it imports
        torch.use_deterministic_algorithms(True)
        return
    inductor_config = sys.modules.get("torch._inductor.config")
    if inductor_config is not None:
        inductor_config.deterministic = True
    else:
        os.environ["TORCHINDUCTOR_DETERMINISTIC"] = "1"
    set_flag(True, warn_only=False)


def resolve_device(setting: str) -> torch.device:
    """`auto`: the GPU when one is present; `cuda` without one is an error, not a silent CPU run."""
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if setting == "cuda" and not torch.cuda.is_available():
        raise DeviceError("config key 'device' is 'cuda' but torch sees no GPU")
    return torch.device(setting)


def model_device(model: nn.Module) -> torch.device:
    """Where a model's parameters live, so its inputs go there too; the CPU for a model without any."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


# ---------------------------------------------------------------------------------------------
# Frozen parameters


@contextmanager
def frozen(model: nn.Module):
    """The model's parameters left out of autograd inside the block (a search over its inputs or
    attention needs no parameter gradients), their flags restored after it."""
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        yield model
    finally:
        for p, flag in zip(model.parameters(), flags):
            p.requires_grad_(flag)


# ---------------------------------------------------------------------------------------------
# Data


@dataclass
class SplitData:
    """Examples of one split plus the imposed attention of a guided model (by instance id)."""

    examples: list[Example]
    guides: dict[str, np.ndarray] | None = None

    def labels(self) -> np.ndarray:
        return np.array([e.label for e in self.examples])


def read_vocab(path: str | Path) -> list[str]:
    """A dataset's vocabulary, checked against the digest its stats.json recorded."""
    verify_split_file(path)
    return Path(path).read_text(encoding="utf-8").splitlines()


def read_classes(data: DataFiles) -> list:
    """The class labels of a preprocessed dataset, in class-index order (from its training split)."""
    return label_classes([{"label": label} for label in _read_labels(data.path("train"))])


_LABEL_KEY = '"label":'


def _read_labels(path: Path) -> list:
    """The `label` of every record of a JSONL split, in file order, without parsing the rest of each
    record (a training split's tokens are most of its bytes: on IMDB 0.08 s instead of 0.6 s). Where
    no object opens before the first `"label":` and a comma or the record's own brace precedes it,
    that key is the record's own (its quote is no string's escaped quote; the files are written from
    dicts, so keys are unique) and its value is decoded there; any other line is parsed whole, with
    `io.read_jsonl`'s error for one that is not JSON."""
    decoder = json.JSONDecoder()
    labels = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            at = line.find(_LABEL_KEY)
            if at > 0 and line[0] == "{" and line[at - 1] in ",{" and line.find("{", 1, at) < 0:
                try:
                    labels.append(decoder.raw_decode(line, at + len(_LABEL_KEY))[0])
                    continue
                except json.JSONDecodeError:
                    pass  # e.g. whitespace after the colon: parsed whole below
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{line_no}: not a JSON object per line ({err.msg})") from None
            if not isinstance(record, dict) or "label" not in record:
                raise ValueError(f"{path}:{line_no}: no 'label' (expected id, tokens, label, sentences)")
            labels.append(record["label"])
    return labels


def read_split(data: DataFiles, split: str) -> list[dict]:
    """The records of a preprocessed split, each checked (`data.documents.read_records`)."""
    return read_records(data.path(split))


def read_guides(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """A source model's exported attention (`export_attention`) -> {split: {id: weights}}."""
    guides: dict[str, dict[str, np.ndarray]] = {}
    for record in io.read_jsonl(path, sealed=True):
        if len(record["attention"]) != record["length"]:
            raise ValueError(
                f"{path}: instance {record['id']!r} stores {len(record['attention'])} weights for length {record['length']}"
            )
        if not np.isfinite(np.asarray(record["attention"], dtype=np.float64)).all():
            raise ValueError(
                f"{path}: instance {record['id']!r} has non-finite attention weights; delete the file and rerun"
            )
        guides.setdefault(record["split"], {})[record["id"]] = np.asarray(record["attention"], dtype=np.float32)
    return guides


def _check_guides(examples: list[Example], guides: dict[str, np.ndarray], split: str) -> None:
    """Another model's attention must match the split instance by instance, id and length (D-ALIGN):
    the first instance that does not is named."""
    for e in examples:
        if e.id not in guides:
            raise ValueError(f"the guide attention has no {split} instance {e.id!r}")
        if len(guides[e.id]) != len(e.tokens):
            raise ValueError(
                f"the guide attention of {split} instance {e.id!r} has {len(guides[e.id])} weights, the instance has {len(e.tokens)} tokens"
            )
    extra = sorted(set(guides) - {e.id for e in examples})
    if extra:
        raise ValueError(f"the guide attention has {len(extra)} {split} instances the dataset lacks, e.g. {extra[0]!r}")


def load_splits(data: DataFiles, vocab: list[str], classes: list, guides: dict | None = None) -> dict[str, SplitData]:
    """train/dev/test as model inputs; another model's attention (`guides`, read_guides) must match
    every instance of every split."""
    splits = {}
    for split in ("train", "dev", "test"):
        examples = to_examples(read_split(data, split), vocab, classes)
        split_guides = None
        if guides is not None:
            split_guides = guides.get(split, {})
            _check_guides(examples, split_guides, split)
        splits[split] = SplitData(examples, split_guides)
    return splits


def split_labels(data: DataFiles, split: str) -> tuple[list[str], np.ndarray]:
    """Instance ids and class indices (the training split's class order) of a split, in file order."""
    classes = {c: i for i, c in enumerate(read_classes(data))}
    records = read_split(data, split)
    return [r["id"] for r in records], np.array([classes[r["label"]] for r in records])


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


# ---------------------------------------------------------------------------------------------
# Prediction


def batches_of(split: SplitData, order: list[np.ndarray], layout: str):
    """Batches of a split in the given order of index arrays."""
    for indices in order:
        yield collate([split.examples[i] for i in indices], layout, split.guides)


@torch.no_grad()
def predict(model: nn.Module, split: SplitData, batch_size: int, device: torch.device, max_tokens: int | None = None):
    """Eval-mode pass over a split in length-sorted batches. Returns, in the split's order, the class
    probabilities (N, C) and each instance's attention over its attended items (list of arrays)."""
    model.eval()
    lengths = [e.length(model.layout) for e in split.examples]
    order = sorted_batches(np.array(lengths), batch_size, max_tokens)
    probs = [None] * len(split.examples)
    attention = [None] * len(split.examples)
    for indices, batch in zip(order, batches_of(split, order, model.layout)):
        batch = batch.to(device)
        encoded = model.encode(batch)
        logits, alpha = model.decode(encoded, batch.guide if model.guided else None)
        p = probabilities(logits).cpu().numpy()
        alpha, mask = alpha.cpu().numpy(), encoded.mask.cpu().numpy()
        for row, i in enumerate(indices):
            probs[i] = p[row]
            attention[i] = alpha[row][mask[row]]
    return np.stack(probs), attention


# ---------------------------------------------------------------------------------------------
# Checkpoints: state dict + metadata, loaded with weights_only=True and checked before use


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def open_words(data: DataFiles, vocab: list[str]) -> list[str]:
    """The words of the train, dev and test splits that the vocabulary lacks, in order of first
    appearance: a model with an open vocabulary (a pretrained encoder) reads them as themselves, not
    as `<UNK>`. Its checkpoint stores them, so that every job maps words to the same ids."""
    known, extra = set(vocab), {}
    for split in ("train", "dev", "test"):
        for record in read_split(data, split):
            for word in record["tokens"] + (record.get("question") or []):
                if word not in known:
                    extra.setdefault(word, None)
    return list(extra)


def checkpoint_metadata(
    spec: ModelSpec, config, vocab: list[str], classes: list, extra_words: list[str] | None = None
) -> dict:
    """What a checkpoint must agree with to be loaded: the model spec and config (hashed), the
    vocabulary (hashed) and the classes. The spec record is what restoring rebuilds the model from."""
    record = config_record(config)
    return {
        "model": spec.name,
        "family": spec.family,
        "spec": spec.record(),
        "config": record,
        "config_sha256": _digest(record),
        "vocab_size": len(vocab),
        "vocab_sha256": _digest(vocab),
        "classes": [str(c) for c in classes],
        **({"open_words": extra_words} if extra_words else {}),  # ids len(vocab).. (an open vocabulary)
    }


def weights_digest(state_dict: dict) -> str:
    """sha256 of the weights as numbers: each tensor's name, dtype, shape and bytes, in name order.
    Recorded in the checkpoint when it is written and checked when it is read, because torch does
    not check its archive's CRCs: flipped bytes inside the weights load without complaint."""
    h = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().to("cpu").contiguous()
        h.update(f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        h.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return h.hexdigest()


def _non_finite(state_dict: dict) -> list[str]:
    return [
        f"{name} ({int((~torch.isfinite(t)).sum())} of {t.numel()} values)"
        for name, t in state_dict.items()
        if t.is_floating_point() and not bool(torch.isfinite(t).all())
    ]


def save_checkpoint(path: str | Path, state_dict: dict, metadata: dict) -> None:
    """Write the weights and metadata, with the weights' digest (`weights_digest`); weights with NaN
    or infinite values are refused, never saved."""
    bad = _non_finite(state_dict)
    if bad:
        raise CheckpointError(f"{path}: not written, the weights are not finite: " + ", ".join(bad))
    metadata = {**metadata, "weights_sha256": weights_digest(state_dict)}
    # Through a file object: given a path, torch.save names the archive's inner folder after the
    # (random) temp file name, and identical checkpoints would differ in bytes.
    with io.atomic_path(path) as tmp, open(tmp, "wb") as f:
        writer = _WriteErrorKept(f)
        try:
            torch.save({"metadata": metadata, "state_dict": state_dict}, writer)
        except RuntimeError as err:
            if writer.error is not None:  # torch reports a failed write as "unexpected pos"
                raise writer.error from err
            raise


class _WriteErrorKept:
    """A binary file's writer that keeps the OSError a write raised (no space left, a quota), which
    torch's archive writer would otherwise turn into "unexpected pos"."""

    def __init__(self, f) -> None:
        self.f, self.error = f, None

    def write(self, data) -> int:
        try:
            return self.f.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        self.f.flush()


def load_checkpoint(path: str | Path, expected: dict | None = None) -> tuple[dict, dict]:
    """-> (state_dict, metadata), the weights verified against the digest recorded when they were
    written and checked finite. `expected`: metadata keys that must match, e.g. the vocabulary hash
    and config hash of the data and config at hand; a mismatch names each differing key."""
    try:
        with warnings.catch_warnings():
            # torch warns of a pickle protocol it does not write and asks for an issue to be filed:
            # advice for a file this pipeline did not write either, which is refused below
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except OSError:
        raise  # a file gone, a permission: `fail_cleanly` names the file and what happened
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same error to the user
        raise CheckpointError(_foreign_checkpoint(path, _load_failure(path, err))) from err
    if not isinstance(payload, dict) or set(payload) != {"metadata", "state_dict"}:
        raise CheckpointError(_foreign_checkpoint(path, "not a dict of 'metadata' and 'state_dict'"))
    metadata, state = payload["metadata"], payload["state_dict"]
    recorded = metadata.get("weights_sha256") if isinstance(metadata, dict) else None
    if recorded is None:
        raise CheckpointError(
            f"{path}: no weights digest in its metadata (written by an older attnexp); delete it and rerun to retrain"
        )
    if weights_digest(state) != recorded:
        raise CheckpointError(
            f"{path}: damaged, its weights do not match the digest recorded when it was written; delete it and rerun to retrain"
        )
    bad = _non_finite(state)
    if bad:
        raise CheckpointError(f"{path}: the weights are not finite: {', '.join(bad)}; delete it and rerun to retrain")
    differing = [
        f"{key}: checkpoint has {metadata.get(key)!r}, expected {value!r}"
        for key, value in (expected or {}).items()
        if metadata.get(key) != value
    ]
    if differing:
        raise CheckpointError(f"{path} was trained for a different setup:\n  " + "\n  ".join(differing))
    return state, metadata


def _foreign_checkpoint(path: str | Path, reason: str) -> str:
    return f"{path}: not a checkpoint this pipeline wrote ({reason}); retrain it (delete the file and rerun)"


# What in a torch.load error is no reason: its header, and its advice, wrong for a file the pipeline
# did not write (load it unsafely with weights_only=False, file an issue, allowlist its globals)
_NOT_A_REASON = re.compile(
    r"weights.only|file an issue|safe_globals|documentation|pytorch\.org|In PyTorch \d", re.IGNORECASE
)


def _load_failure(path: str | Path, err: Exception) -> str:
    """Why torch.load refused a file, in a few words: "empty file", or the first sentence of torch's
    message that is not advice (never its suggestion to load with weights_only=False, which would
    run a hostile pickle's code), else the error's type."""
    if Path(path).is_file() and Path(path).stat().st_size == 0:
        return "empty file"
    text = str(err).replace("WeightsUnpickler error:", "\n")
    for line in filter(None, (line.strip() for line in text.splitlines())):
        sentence = re.split(r"(?<=\.)\s", line, maxsplit=1)[0].rstrip(".:")
        if sentence and not _NOT_A_REASON.search(sentence):
            return sentence if len(sentence) <= 160 else sentence[:157] + "..."
    return type(err).__name__


def _load_weights(model: nn.Module, state: dict, path: str | Path) -> None:
    """load_state_dict, with missing, unexpected and mis-shaped keys named in one CheckpointError."""
    own = model.state_dict()
    problems = [f"missing {k}" for k in own if k not in state]
    problems += [f"unexpected {k}" for k in state if k not in own]
    problems += [
        f"{k}: checkpoint shape {tuple(state[k].shape)}, model shape {tuple(v.shape)}"
        for k, v in own.items()
        if k in state and tuple(state[k].shape) != tuple(v.shape)
    ]
    if problems:
        raise CheckpointError(
            f"{path}: the weights do not fit the model its spec describes:\n  " + "\n  ".join(problems)
        )
    model.load_state_dict(state)


# ---------------------------------------------------------------------------------------------
# Restoring a trained run


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
    expected = {"vocab_sha256": _digest(vocab), "vocab_size": len(vocab)}
    if expected_model is not None:
        expected["model"] = expected_model
    state, metadata = load_checkpoint(path, expected)
    if "spec" not in metadata:
        raise CheckpointError(f"{path}: no model spec in its metadata (written before specs were stored); retrain it")
    try:
        spec = ModelSpec.from_record(metadata["spec"])
        config = restore_config(spec, metadata["config"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: unreadable model spec or config in its metadata ({err})") from err
    disagree = [
        f"{key}: spec {getattr(spec, key)!r}, config {getattr(config, key)!r}"
        for key in ("encoder", "attention", "architecture")
        if hasattr(config, key) and getattr(config, key) != getattr(spec, key)
    ]
    if disagree:
        raise CheckpointError(f"{path}: its model spec and config disagree:\n  " + "\n  ".join(disagree))
    model = build_model(spec, config)
    _load_weights(model, state, path)
    if device is not None:
        model.to(device)
    return Run(model.eval(), spec, metadata, vocab + metadata.get("open_words", []), metadata["classes"])


# ---------------------------------------------------------------------------------------------
# Exporting attention (W&P's guided models read it)


def export_attention(
    checkpoint: str | Path,
    data: DataFiles,
    out: str | Path,
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
