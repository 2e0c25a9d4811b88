"""Jain & Wallace (2019) §5.5's adversarial attention search on one batch of cached states: K attention
distributions per instance far from the model's own α̂ (JSD) that keep its output (`adversarial_search`,
by Adam on free logits with the hidden states fixed, `FusedAdam`), the objective it minimises
(`search_objective`; for a linear readout its gradient in closed form, `LinearSearchGradient`), and the
§5.5 evaluation that keeps the farthest candidate within ε of the output (`eps_max_jsd`).

The search never re-runs the encoder: it decodes the cached hidden states (projected through a linear
output layer once, `attnexp.experiments.cached.readout`), vectorised over candidates and batched over
instances, per readout head (H = 1 for the recurrent models, the `[CLS]` heads of the Transformer): it
searches per-head weights whose head mean — the model's reported attention, the explanation under
test — is far from α̂. Its noise is drawn per instance from (seed, instance index) (`adversary_noise`),
so results do not depend on how instances are batched."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from attnexp.experiments.cached import Readout, readout, real_positions
from attnexp.metrics import JSD_EPS, jsd, neg_entropy, pairwise_jsd_total, tvd
from attnexp.models.attention import masked_softmax
from attnexp.models.inputs import Encoded
from attnexp.models.outputs import probabilities
from attnexp.runtime import frozen

__all__ = [
    "adversary_noise",
    "adversarial_search",
    "FusedAdam",
    "search_objective",
    "linear_search_gradient",
    "LinearSearchGradient",
    "eps_max_jsd",
]


def adversary_noise(n: int, candidates: int, seed: int, index: int, heads: int = 1) -> np.ndarray:
    """(K, H, n) standard normal draws ξ of the instance at `index` (initial logits log(1/L) + 3ξ).
    With H = 1 these are the draws of a (K, n) array: one stream, read in the same order."""
    return np.random.default_rng([seed, 1, index]).standard_normal((candidates, heads, n)).astype(np.float32)


def _initial_logits(mask: torch.Tensor, noise: list[np.ndarray]) -> torch.Tensor:
    """(K, B, H, L) logits z = log(1/L) + 3ξ at the real positions (masked ones never matter). The
    constant log(1/L) has no effect under the softmax; it is kept to mirror J&W §5.5."""
    K, H, _ = noise[0].shape
    # filled on the CPU, where the draws are (the same on every device), and moved in one copy
    z = torch.zeros(K, mask.shape[0], H, mask.shape[1])
    for b, (positions, xi) in enumerate(zip(real_positions(mask.cpu()), noise)):
        z[:, b, :, positions] = torch.from_numpy(xi)
    return (math.log(1.0 / mask.shape[1]) + 3.0 * z).to(mask.device)


def adversarial_search(
    model: nn.Module,
    encoded: Encoded,
    heads: torch.Tensor,
    probs: torch.Tensor,
    noise: list[np.ndarray],
    *,
    steps: int = 500,
    lr: float = 0.01,
    amsgrad: bool = True,
    penalty: float = 500.0,
    margin: float = 0.01,
    output_scale: float = 1.0,
) -> torch.Tensor:
    """K candidate readout attentions per instance (K, B, H, L) for the model's own `heads` (B, H, L),
    minimising with the model frozen

      J = Σ_b Σ_k [−JSD(α_bk, α̂_b) + penalty · max(0, s·TVD(p_bk, p_b) − margin)] − (1/K²) Σ_{k,k′} Σ_b JSD(α_bk, α_bk′)

    where α is a candidate's head mean (the distribution itself when H = 1) and s = `output_scale`
    (1 for BC, where TVD = |Δŷ|; 2 for QA, J&W's Σ|Δ softmax|, D-QA-PEN). Adam updates each element
    on its own and the loss is a sum over instances, so every instance follows the same trajectory in
    any batch. A linear readout (one distribution, `Readout`) takes the objective's gradient in closed
    form (`linear_search_gradient`); other readouts differentiate `search_objective` by autograd."""
    out = readout(model, encoded)  # a linear output layer is projected through the cached states once
    head_mask = encoded.mask[:, None, :]  # (B, 1, L)
    terms = {"penalty": penalty, "margin": margin, "output_scale": output_scale}
    z = _initial_logits(encoded.mask, noise)
    if out.linear:
        # masked logits at −∞ once: their gradient is exactly 0, so Adam never moves them and a plain
        # softmax gives the exact zeros of `masked_softmax` there
        z = z.masked_fill(~head_mask, float("-inf"))
        gradient = LinearSearchGradient(heads, out, probs, z.shape[0], **terms)  # per-batch constants, buffers
    z.requires_grad_(True)
    optimizer = FusedAdam(z, lr=lr, amsgrad=amsgrad)  # one kernel per step
    with frozen(model):
        for _ in range(steps):
            if out.linear:
                with torch.no_grad():
                    z.grad = gradient(torch.softmax(z, dim=-1))
            else:
                z.grad = None
                search_objective(masked_softmax(z, head_mask), heads, out, probs, **terms).backward()
            optimizer.step()
    return masked_softmax(z.detach(), head_mask)


class FusedAdam:
    """`torch.optim.Adam([z], lr=lr, amsgrad=amsgrad, fused=True)` for the one tensor the adversary
    searches: the same state (zero moments, a float32 step count on z's device) and the same fused
    kernel per step, so the same bits. Not the optimizer itself, because constructing any
    torch.optim optimizer imports torch._dynamo (about 1 s of the adversarial job's start-up, for a
    compiler nothing here uses) and its step() adds per-call bookkeeping this loop does not need."""

    BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults, as are eps and no weight decay
    EPS = 1e-8

    def __init__(self, z: torch.Tensor, lr: float, amsgrad: bool):
        self.z, self.lr, self.amsgrad = z, lr, amsgrad
        self.count = torch.zeros((), dtype=torch.float32, device=z.device)
        self.moments = [torch.zeros_like(z, memory_format=torch.preserve_format) for _ in range(3 if amsgrad else 2)]

    @torch.no_grad()
    def step(self) -> None:
        if self.z.grad is None:  # as torch.optim: a parameter without a gradient is not updated
            return
        torch._foreach_add_([self.count], 1)
        exp_avg, exp_avg_sq, *max_exp_avg_sq = self.moments
        torch._fused_adam_(
            [self.z],
            [self.z.grad],
            [exp_avg],
            [exp_avg_sq],
            max_exp_avg_sq,
            [self.count],
            amsgrad=self.amsgrad,
            lr=self.lr,
            beta1=self.BETAS[0],
            beta2=self.BETAS[1],
            weight_decay=0.0,
            eps=self.EPS,
            maximize=False,
            grad_scale=None,
            found_inf=None,
        )


def search_objective(
    per_head: torch.Tensor,
    heads: torch.Tensor,
    out,
    probs: torch.Tensor,
    *,
    penalty: float,
    margin: float,
    output_scale: float,
) -> torch.Tensor:
    """J of `adversarial_search` for candidates per head (K, B, H, L) against the model's `heads`."""
    attention = heads.mean(dim=-2)  # (B, L) α̂
    alpha = per_head.mean(dim=-2)  # (K, B, L)
    change = output_scale * tvd(probabilities(out.logits(per_head)), probs)  # (K, B)
    own = neg_entropy(alpha)  # (K, B), shared by both divergences
    to_model = (own + neg_entropy(attention)) / 2 - neg_entropy((alpha + attention) / 2)  # (K, B) JSD(α_k, α̂)
    diversity = pairwise_jsd_total(alpha, own).sum() / alpha.shape[0] ** 2  # K² mean incl. the diagonal
    return (-to_model + penalty * torch.relu(change - margin)).sum() - diversity


def linear_search_gradient(
    per_head: torch.Tensor,
    heads: torch.Tensor,
    out: Readout,
    probs: torch.Tensor,
    *,
    penalty: float,
    margin: float,
    output_scale: float,
) -> torch.Tensor:
    """∂J/∂z of `search_objective` for one distribution per instance (per_head (K, B, 1, L) = softmax
    of the logits z) and a linear readout, in closed form (`LinearSearchGradient`)."""
    return LinearSearchGradient(
        heads, out, probs, per_head.shape[0], penalty=penalty, margin=margin, output_scale=output_scale
    )(per_head)


class LinearSearchGradient:
    """∂J/∂z of `search_objective` for one distribution per instance and a linear readout, in closed
    form: ~30 kernels (element-wise passes, small reductions) instead of the ~75 of autograd's
    forward and backward (2× the search). With e(p) = Σ p log(p + ε):

      ∂JSD(α, β)/∂α = ½ (log(α + ε) − log(m + ε)),  m = (α + β)/2   (up to α/(α + ε) − m/(m + ε))
      ∂/∂α_k Σ_{k,k′} JSD(α_k, α_k′) = (K − 1) log(α_k + ε) − Σ_{k′≠k} log(m_kk′ + ε)   (likewise)

    The parts left out are constants (they cancel under the softmax) plus terms below ε/α ≤ 1e-10 ·
    1/α, which the softmax multiplies by α; the searches agree with autograd's as closely as autograd
    agrees with itself under a 1e-6 perturbation of the start (benchmarks/README.md). The output term
    differentiates the hinge through σ or the softmax, and the logits Σ_t α_t v_t + b through the
    projected values v (B, L, C).

    Built once per batch for K candidates: what does not change between steps (α̂/2 + ε, the pairs)
    is computed here, and the (K, B, L) / (P, B, L) intermediates are written into buffers reused by
    every step (each fresh tensor costs a NaN fill under deterministic algorithms). The gradient
    returned is one of those buffers: overwritten by the next call."""

    def __init__(
        self,
        heads: torch.Tensor,
        out: Readout,
        probs: torch.Tensor,
        candidates: int,
        *,
        penalty: float,
        margin: float,
        output_scale: float,
    ):
        B, _, L = heads.shape
        self.K, self.out, self.penalty, self.margin, self.output_scale = candidates, out, penalty, margin, output_scale
        self.half_model = heads[:, 0] / 2 + JSD_EPS  # (B, L) α̂/2 + ε
        self.target = probs[:, 1] if out.values.shape[-1] == 1 else probs  # (B,) p̂ of σ, else (B, C)
        self.first, self.second = torch.triu_indices(
            candidates, candidates, 1, device=heads.device
        )  # (P,) pairs k < k′
        self.grad = heads.new_empty(candidates, B, L)  # log(α + ε), then the gradient
        self.log_to_model = heads.new_empty(candidates, B, L)  # log(m + ε), m = (α + α̂)/2
        self.log_pairs = heads.new_empty(len(self.first), B, L)  # log(m_kk′ + ε) per pair
        self.log_mixtures = heads.new_empty(candidates, B, L)  # Σ_{k′≠k} log(m_kk′ + ε)

    def __call__(self, per_head: torch.Tensor) -> torch.Tensor:
        """per_head (K, B, 1, L) -> ∂J/∂z (K, B, 1, L), exact zeros off the mask."""
        alpha, K, first, second, values = (
            per_head[:, :, 0],
            self.K,
            self.first,
            self.second,
            self.out.values,
        )  # α (K, B, L)
        log_own = torch.add(alpha, JSD_EPS, out=self.grad).log_()
        torch.add(self.half_model, alpha, alpha=0.5, out=self.log_to_model).log_()
        torch.index_select(alpha, 0, first, out=self.log_pairs).add_(2 * JSD_EPS).add_(
            alpha.index_select(0, second)
        ).mul_(0.5).log_()
        self.log_mixtures.zero_().index_add_(0, first, self.log_pairs).index_add_(0, second, self.log_pairs)
        # −∂JSD(α, α̂)/∂α − (1/K²) ∂diversity/∂α
        grad = (
            log_own.mul_(-0.5 - (K - 1) / K**2)
            .add_(self.log_to_model, alpha=0.5)
            .add_(self.log_mixtures, alpha=1 / K**2)
        )
        logits = torch.einsum("kbl,blc->kbc", alpha, values) + self.out.bias  # (K, B, C)
        if logits.shape[-1] == 1:  # σ: TVD = |p − p̂|
            p = torch.sigmoid(logits[..., 0])  # (K, B)
            signed = p - self.target
            slope = p.mul_(1 - p).mul_(signed.sign()).mul_(self.penalty * self.output_scale)  # penalty · s · sign · σ′
            d_logits = torch.where(self.output_scale * signed.abs() > self.margin, slope, 0.0)  # (K, B), the hinge
            grad.add_(d_logits[..., None] * values[..., 0])  # (K, B, L): one class, an outer product
        else:  # softmax: TVD = ½ Σ_c |p_c − p̂_c|
            p = torch.softmax(logits, dim=-1)
            change = self.output_scale * (p - self.target).abs().sum(-1) / 2
            d_p = self.output_scale / 2 * torch.sign(p - self.target)
            d_logits = p * (d_p - (p * d_p).sum(-1, keepdim=True))
            d_logits = torch.where((change > self.margin)[..., None], self.penalty * d_logits, 0.0)  # the hinge
            grad.add_(torch.einsum("kbc,blc->kbl", d_logits, values))
        weighted = grad.mul_(alpha)  # softmax backward: α ⊙ (g − Σ_t α_t g_t), exact zeros off the mask
        return weighted.addcmul_(alpha, weighted.sum(-1, keepdim=True), value=-1)[:, :, None]


@torch.no_grad()
def eps_max_jsd(
    model: nn.Module, encoded: Encoded, heads: torch.Tensor, probs: torch.Tensor, candidates: torch.Tensor, eps: float
):
    """Among {α̂} ∪ candidates (K, B, H, L), drop those whose output change TVD exceeds ε, keep the one
    whose head mean is farthest from α̂ (§5.5 evaluation). -> (ε-max JSD (B,), the chosen attention's
    head mean (B, L), its TVD (B,), feasible (B,))."""
    change = tvd(probabilities(readout(model, encoded).logits(candidates)), probs)  # (K, B)
    attention, candidates = heads.mean(dim=-2), candidates.mean(dim=-2)  # (B, L), (K, B, L)
    divergence = jsd(candidates, attention)  # (K, B)
    feasible = change <= eps
    score = torch.where(feasible, divergence, torch.full_like(divergence, -1.0))
    best = score.argmax(dim=0)  # (B,)
    batch = torch.arange(attention.shape[0], device=attention.device)
    found = feasible[best, batch] & (score[best, batch] > 0)  # otherwise α̂ itself (JSD 0, Δŷ 0)
    chosen = torch.where(found[:, None], candidates[best, batch], attention)
    return (
        torch.where(found, divergence[best, batch], torch.zeros_like(found, dtype=divergence.dtype)),
        chosen,
        torch.where(found, change[best, batch], torch.zeros_like(found, dtype=change.dtype)),
        feasible.sum(dim=0),
    )
