"""Checkpoints: a trained model's weights with the metadata it must agree with to be loaded (its
spec and config, the vocabulary and classes), written with the weights' digest and never with
non-finite weights, read back only after every check (`weights_only=True`, the digest, finite
weights, the expected metadata), and the model they describe rebuilt from its own spec
(`restore_model`). A file this pipeline did not write, or a damaged one, is one `CheckpointError`
naming the file and what to do.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from pathlib import Path

import torch
from torch import nn

from attnexp import io
from attnexp.models import ModelSpec, build_model, config_record, restore_config

__all__ = [
    "CheckpointError",
    "checkpoint_metadata",
    "weights_digest",
    "save_checkpoint",
    "load_checkpoint",
    "restore_model",
]


class CheckpointError(ValueError):
    """A checkpoint is unreadable, or was trained for a different vocabulary, config or model."""


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


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


def restore_model(
    path: str | Path, vocab: list[str], expected_model: str | None = None
) -> tuple[nn.Module, ModelSpec, dict]:
    """Rebuild a trained model from its checkpoint's own spec and config (nothing is re-derived from
    its name), refusing it if it was trained on another vocabulary than `vocab`, or if its spec names
    another model than `expected_model`. -> (the model with its weights, on the CPU; its spec; the
    checkpoint's metadata)."""
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
    return model, spec, metadata
