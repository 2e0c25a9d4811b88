"""A model job's process and device: determinism (seeds, deterministic kernels, float32, flushed
denormals, the torch threads, freed memory kept for reuse), the device a config's setting resolves
to, a model's parameters frozen for a search over its inputs, and an eval-mode prediction pass over a
split (probabilities from logits: `attnexp.models.outputs`).

Read top to bottom: determinism -> device -> frozen parameters -> prediction. Checkpoints live in
`attnexp.checkpoints`, a restored run and its attention export in `attnexp.runs`, the split files in
`attnexp.data.splits` and the splits as model inputs in `attnexp.models.splits`.
"""

from __future__ import annotations

import os
import random
import sys
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from attnexp.models.inputs import sorted_batches
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData, batches_of

__all__ = [
    "DeviceError",
    "set_determinism",
    "resolve_device",
    "model_device",
    "frozen",
    "predict",
]


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
# Prediction


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
