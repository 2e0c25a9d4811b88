"""Integrated gradients (Sundararajan et al. 2017), computed by captum.

  IG_t = Σ_d (e_{t,d} − e′_{t,d}) · ∫₀¹ ∂F(e′ + a(e − e′)) / ∂e_{t,d} da

- F (`ig_target`): the logit of the predicted class (`logit`, BC: ±logit) or its probability (`prob`).
- Baseline e′ (`ig_baseline`): the real tokens w_1..w_n replaced by `<PAD>` (zero vectors: the PAD row
  is zero) or by `<UNK>`. SOS/EOS keep their embeddings, so the attributions of the real tokens alone
  sum to F(e) − F(e′), and the real attention mask is kept, never rebuilt from baseline ids.
- Integration (`ig_method`): Gauss–Legendre (`gausslegendre`) or `riemann_trapezoid`, `ig_steps` points.
- Completeness: δ = Σ_t IG_t − (F(e) − F(e′)). Where |δ| > tolerance · max(1, |F(e) − F(e′)|) the
  instance is recomputed with twice the points, up to `ig_max_steps`; the final δ and point count are
  returned with the scores.
- `adaptive` places the points where F changes instead (non-uniform sample points, as Swain & Singhi
  2024 argue for; the allocation rule here is classic adaptive quadrature, not theirs). The straight path
  is cut into segments of `ADAPTIVE_POINTS` Gauss–Legendre points each, `ig_steps` points at first;
  completeness holds on every piece of the path, so each segment has a gap of its own
  (Σ_t IG_t over [a, b] − (F(x_b) − F(x_a)), summing to δ). While δ fails the tolerance, every segment
  whose gap exceeds its share of the tolerance (its length × the bound) is halved, the largest gaps
  first, up to `ig_max_steps` points. The path and baseline are the same, so where both converge the
  scores agree; on a near-saturated model, whose F changes steeply on a short stretch of the path,
  it converges where doubling the uniform points does not (benchmarks/ig_convergence.md).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import torch
from torch import nn

from attnexp.models.attention import real_token_mask
from attnexp.models.inputs import PAD, UNK, Batch
from attnexp.models.outputs import class_logit, class_probability

__all__ = ["IG_TARGETS", "IG_BASELINES", "IG_METHODS", "ADAPTIVE_POINTS", "IGResult", "integrated_gradients"]

IG_TARGETS = ("logit", "prob")
IG_BASELINES = ("pad", "unk")
IG_METHODS = ("gausslegendre", "riemann_trapezoid", "adaptive")
ADAPTIVE_POINTS = 8  # Gauss–Legendre points per segment of `adaptive`


class IGResult(NamedTuple):
    scores: torch.Tensor  # (B, L) signed IG_t, zero outside the real tokens
    delta: torch.Tensor  # (B,) completeness gap δ
    steps: torch.Tensor  # (B,) integration points used
    converged: torch.Tensor  # (B,) whether |δ| met the tolerance


def _target(embedded, tokens, lengths, question, question_lengths, cls, *, model, objective):
    """F for a batch of (possibly interpolated) embeddings (N, L, E) -> (N,). captum calls it with the
    embeddings, then the batch's tensors (`additional_forward_args`) positionally."""
    batch = Batch([], tokens, lengths, cls, question=question, question_lengths=question_lengths)
    logits, _ = model.decode(model.encode(batch, embedded))
    return class_logit(logits, cls) if objective == "logit" else class_probability(logits, cls)


def _baseline(model: nn.Module, batch: Batch, embedded: torch.Tensor, mask: torch.Tensor, kind: str) -> torch.Tensor:
    token = torch.full_like(batch.tokens, PAD if kind == "pad" else UNK)
    return torch.where(mask[:, :, None], model.embedding(token), embedded).detach()


def integrated_gradients(
    model: nn.Module,
    batch: Batch,
    cls: torch.Tensor,
    *,
    target: str = "logit",
    baseline: str = "pad",
    method: str = "gausslegendre",
    steps: int = 50,
    max_steps: int = 400,
    tolerance: float = 0.01,
    max_tokens: int = 50_000,
) -> IGResult:
    """Integrated gradients of F for the class `cls` (B,) (the predicted class) of each instance."""
    for name, value, allowed in (
        ("ig_target", target, IG_TARGETS),
        ("ig_baseline", baseline, IG_BASELINES),
        ("ig_method", method, IG_METHODS),
    ):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    with torch.no_grad():
        embedded = model.embedding(batch.tokens)  # (B, L, E)
        mask = real_token_mask(batch.lengths, batch.tokens.shape[1])  # (B, L) w_1..w_n (passage for QA)
        reference = _baseline(model, batch, embedded, mask, baseline)
    args = (batch.tokens, batch.lengths, batch.question, batch.question_lengths, cls)
    forward = partial(_target, model=model, objective=target)
    with torch.no_grad():
        gap = forward(embedded, *args) - forward(reference, *args)  # (B,) F(e) − F(e′)

    from captum.attr import IntegratedGradients  # ~0.5 s to import: only the IG job loads it

    if method == "adaptive":
        return _adaptive(
            forward,
            embedded,
            reference,
            mask,
            args,
            gap,
            steps=steps,
            max_steps=max_steps,
            tolerance=tolerance,
            max_tokens=max_tokens,
        )
    device = embedded.device
    attributions = torch.zeros(batch.tokens.shape, device=device)
    deltas = torch.full((len(batch),), float("nan"), device=device)
    points = torch.zeros(len(batch), dtype=torch.long, device=device)
    converged = torch.zeros(len(batch), dtype=torch.bool, device=device)
    todo = torch.arange(len(batch), device=device)
    m = steps
    while len(todo):
        sub = tuple(a[todo] if isinstance(a, torch.Tensor) else a for a in args)
        ig, delta = IntegratedGradients(forward).attribute(
            embedded[todo],
            baselines=reference[todo],
            additional_forward_args=sub,
            n_steps=m,
            method=method,
            # interpolated sequences per pass, by padded tokens: memory stays flat for long documents
            internal_batch_size=max(len(todo), max_tokens // batch.tokens.shape[1]),
            return_convergence_delta=True,
        )
        scores = ig.sum(dim=-1) * mask[todo]  # (b, L); SOS/EOS equal their baseline, so they get 0
        attributions[todo], deltas[todo], points[todo] = scores.detach(), delta.detach().float(), m
        ok = delta.abs() <= tolerance * gap[todo].abs().clamp(min=1.0)
        converged[todo] = ok
        if m * 2 > max_steps:
            break
        todo, m = todo[~ok], m * 2
    return IGResult(attributions, deltas, points, converged)


def _segments_ig(forward, embedded, reference, mask, args, *, rows, start, end, max_tokens):
    """IG of the straight path's pieces [start, end] (fractions of e′ → e) of instances `rows` ->
    (per-segment (S, L) scores, (S,) completeness gaps of the pieces)."""
    from captum.attr import IntegratedGradients

    direction = embedded[rows] - reference[rows]
    at = lambda fraction: reference[rows] + fraction[:, None, None] * direction  # noqa: E731
    ig, delta = IntegratedGradients(forward).attribute(
        at(end),
        baselines=at(start),
        additional_forward_args=tuple(a[rows] if isinstance(a, torch.Tensor) else a for a in args),
        n_steps=ADAPTIVE_POINTS,
        method="gausslegendre",
        internal_batch_size=max(len(rows), max_tokens // embedded.shape[1]),
        return_convergence_delta=True,
    )
    return (ig.sum(dim=-1) * mask[rows]).detach(), delta.detach().float()


def _adaptive(forward, embedded, reference, mask, args, gap, *, steps, max_steps, tolerance, max_tokens) -> IGResult:
    """`ig_method: adaptive` (module docstring): segments halved where their own completeness gap is
    largest, until δ meets the tolerance or `max_steps` points are used."""
    n, device = len(embedded), embedded.device
    bound = tolerance * gap.abs().clamp(min=1.0)  # (B,)
    first = max(1, steps // ADAPTIVE_POINTS)
    most = max(first, max_steps // ADAPTIVE_POINTS)  # segments an instance may reach
    owner = torch.arange(n, device=device).repeat_interleave(first)
    start = torch.arange(first, device=device).repeat(n) / first
    end = start + 1 / first
    scores, gaps = _segments_ig(
        forward, embedded, reference, mask, args, rows=owner, start=start, end=end, max_tokens=max_tokens
    )
    while True:
        delta = torch.zeros(n, device=device).index_add_(0, owner, gaps)
        count = torch.bincount(owner, minlength=n)
        wanted = ~(delta.abs() <= bound)[owner] & (gaps.abs() > bound[owner] * (end - start))
        halve = torch.zeros_like(wanted)
        for i in torch.unique(owner[wanted]).tolist():  # the largest gaps first, within the point budget
            mine = torch.nonzero(wanted & (owner == i)).squeeze(-1)
            room = int(most - count[i])
            halve[mine[torch.argsort(-gaps[mine].abs(), stable=True)[:room]]] = True
        if not halve.any():
            break
        middle = (start[halve] + end[halve]) / 2
        new_owner = owner[halve].repeat(2)
        new_start, new_end = torch.cat([start[halve], middle]), torch.cat([middle, end[halve]])
        new_scores, new_gaps = _segments_ig(
            forward,
            embedded,
            reference,
            mask,
            args,
            rows=new_owner,
            start=new_start,
            end=new_end,
            max_tokens=max_tokens,
        )
        keep = ~halve
        owner, start, end = (
            torch.cat([owner[keep], new_owner]),
            torch.cat([start[keep], new_start]),
            torch.cat([end[keep], new_end]),
        )
        scores, gaps = torch.cat([scores[keep], new_scores]), torch.cat([gaps[keep], new_gaps])
    attributions = torch.zeros(mask.shape, device=device).index_add_(0, owner, scores)
    return IGResult(attributions, delta, count * ADAPTIVE_POINTS, delta.abs() <= bound)
