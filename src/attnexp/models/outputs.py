"""A model's logits read off: class probabilities, the predicted class, and the one scalar per
instance that an attribution differentiates.

Binary J&W models have one sigmoid logit; multi-class and QA models one logit per class. Both are
handled through the predicted class j (BC: j = round(ŷ), ŷ = 0.5 -> 0, J&W §5.3).
"""

from __future__ import annotations

import torch

__all__ = ["probabilities", "predicted_class", "class_probability", "class_logit"]


def probabilities(logits: torch.Tensor) -> torch.Tensor:
    """(..., C) class probabilities; a single sigmoid logit becomes [1 - p, p]."""
    if logits.shape[-1] == 1:
        p = torch.sigmoid(logits.squeeze(-1))
        return torch.stack([1 - p, p], dim=-1)
    return torch.softmax(logits, dim=-1)


def predicted_class(logits: torch.Tensor) -> torch.Tensor:
    """(..., C) logits -> (...,) predicted class; argmax of [1 - ŷ, ŷ] sends ŷ = 0.5 to class 0."""
    return probabilities(logits).argmax(dim=-1)


def class_probability(logits: torch.Tensor, cls: torch.Tensor) -> torch.Tensor:
    """(B, C) logits, (B,) classes -> (B,) p_cls."""
    return probabilities(logits).gather(-1, cls[:, None]).squeeze(-1)


def class_logit(logits: torch.Tensor, cls: torch.Tensor) -> torch.Tensor:
    """(B, C) logits, (B,) classes -> (B,) the logit of that class; for one sigmoid logit, the
    log-odds of the class (logit for class 1, -logit for class 0)."""
    if logits.shape[-1] == 1:
        return torch.where(cls == 1, logits[:, 0], -logits[:, 0])
    return logits.gather(-1, cls[:, None]).squeeze(-1)
