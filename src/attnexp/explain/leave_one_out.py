"""Leave-one-out importance (Jain & Wallace §5.2): remove token t, re-run the full model, and score
s^loo_t = TVD(p(x₋t), p(x)), which is |ŷ(x₋t) − ŷ(x)| for BC.

How a token is left out (D-LOO-OP, `loo_op`): `delete` (default, the J&W code: the sequence becomes
one token shorter; SOS/EOS are kept), `unk`, or `pad_masked` (`attnexp.explain.perturb`).

The n one-token erasures of every instance are batched input variants (`variant_probabilities`): an
instance costs a share of a few large forward passes instead of n passes of batch size one. Deleting
from a BiLSTM re-runs only the states the deletion changes (`attnexp.explain.recurrent_deletion`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from attnexp.explain.perturb import ERASE_OPS, variant_probabilities
from attnexp.explain.recurrent_deletion import deletion_probabilities, supports_recurrent_deletion
from attnexp.metrics import tvd
from attnexp.models.inputs import Example

__all__ = ["LOO_OPS", "leave_one_out"]

LOO_OPS = ERASE_OPS


def leave_one_out(
    model: nn.Module, examples: list[Example], probs: np.ndarray, op: str = "delete", max_tokens: int = 20_000, log=None
) -> list[np.ndarray]:
    """examples (N) with their full-input class probabilities (N, C) -> per instance the (n,) output
    changes, in the examples' order. `log` gets progress lines (BiLSTM deletions: instances done)."""
    if op not in LOO_OPS:
        raise ValueError(f"loo_op must be one of {LOO_OPS}, got {op!r}")
    owners = np.concatenate([np.full(len(e.tokens), i) for i, e in enumerate(examples)])  # (V,)
    if len(owners) == 0:  # no instance has a token to leave out
        return [np.zeros(0, dtype=np.float32) for _ in examples]
    if supports_recurrent_deletion(model, op):  # BiLSTM: only the states a deletion changes are re-run
        erased = np.concatenate(deletion_probabilities(model, examples, max_tokens, log))  # (V, C)
    else:
        erase = [row for e in examples for row in np.eye(len(e.tokens), dtype=bool)]  # V one-token masks
        erased = variant_probabilities(model, examples, owners, erase, op, max_tokens)  # (V, C)
    changes = tvd(torch.from_numpy(erased), torch.from_numpy(probs[owners]).to(torch.float32)).numpy()
    starts = np.cumsum([0] + [len(e.tokens) for e in examples])
    return [changes[a:b] for a, b in zip(starts[:-1], starts[1:])]
