"""Jain & Wallace (2019), "Attention is not Explanation": the experiments of §5 on a trained model.

- `correlations`: Kendall τ-b between attention, |gradient|, leave-one-out and |IG| per instance (§5.3;
  torch-free in `attnexp.papers.jain_wallace.correlations`, re-exported here).
- `permutation_output_differences`: α̂ permuted over the real tokens, only `decode` re-run (§5.4).
- `adversarial_search` / `eps_max_jsd`: K attention distributions far from α̂ (JSD) that keep the
  output (§5.5), found by Adam on free logits with the hidden states fixed.
- `ground_truth_scores`: explanations against the planted cue positions of `synthetic` and the planted datasets.

Permutation and adversarial search never re-run the encoder: they decode cached hidden states
(projected through a linear output layer once, `attnexp.experiments.cached.readout`), vectorised over
permutations / candidates and batched over instances. They act on the readout
attention per head (`attnexp.experiments.cached`: H = 1 for the recurrent models, the `[CLS]` heads
of the Transformer), so every model goes through the same code: a permutation shuffles the tokens'
weights identically in every head, and the adversary searches per-head weights whose head mean — the
model's reported attention, the explanation under test — is far from α̂. Their randomness is drawn per
instance from (seed, instance index), so results do not depend on how instances are batched, and the
reference loops of `benchmarks/jain_wallace_speed.py` reproduce them exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.experiments.cached import Readout, cached_batches, readout, real_positions
from attnexp.explanations import METHODS, ig_converged, importance, unconverged_count
from attnexp.metrics import JSD_EPS, ground_truth_scores, jsd, neg_entropy, pairwise_jsd_total, tvd
from attnexp.models.attention import masked_softmax
from attnexp.models.inputs import Encoded, Example
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData
from attnexp.papers.jain_wallace.correlations import (
    PAIRS,
    class_groups,
    correlations,
    summarise_correlations,
    write_correlations,
)
from attnexp.plan import require
from attnexp.runs import Run, restore_run
from attnexp.runtime import frozen, model_device, predict, set_determinism

if TYPE_CHECKING:  # the tables are built where asked for: the model jobs write their rows without pandas
    import pandas as pd

__all__ = [
    "PAIRS",
    "correlations",
    "class_groups",
    "summarise_correlations",
    "permutation_indices",
    "permuted_attention",
    "permutation_output_differences",
    "permutation_rows",
    "permutation_experiment",
    "adversary_noise",
    "adversarial_search",
    "search_objective",
    "linear_search_gradient",
    "LinearSearchGradient",
    "eps_max_jsd",
    "adversarial_rows",
    "adversarial_experiment",
    "FusedAdam",
    "GROUND_TRUTH_METHODS",
    "ground_truth_table",
    "summarise_ground_truth",
    "write_correlations",
    "write_shifted_accuracy",
    "write_permutation",
    "write_adversarial",
]

# ---------------------------------------------------------------------------------------------
# Permutation (§5.4)


def permutation_indices(n: int, count: int, seed: int, index: int) -> np.ndarray:
    """(count, n) random permutations of 0..n-1 for the instance at `index` of the test split."""
    rng = np.random.default_rng([seed, 0, index])
    return rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1)


def permuted_attention(heads: torch.Tensor, mask: torch.Tensor, permutations: list[np.ndarray]) -> torch.Tensor:
    """heads (B, H, L), mask (B, L), per instance (P, n_b) permutations -> (P, B, H, L): the weights
    of the real positions shuffled among themselves, by the same permutation in every head; masked
    positions keep their exact zeros."""
    count = permutations[0].shape[0]
    B, H, L = heads.shape
    index = torch.arange(L, device=heads.device).expand(count, B, L).clone()  # (P, B, L)
    for b, (positions, perm) in enumerate(zip(real_positions(mask), permutations)):
        index[:, b, positions] = positions[torch.from_numpy(perm).to(heads.device)]
    return heads.expand(count, B, H, L).gather(-1, index[:, :, None, :].expand(count, B, H, L))


@torch.no_grad()
def permutation_output_differences(
    model: nn.Module, encoded: Encoded, heads: torch.Tensor, probs: torch.Tensor, permutations: list[np.ndarray]
) -> torch.Tensor:
    """heads (B, H, L) -> (P, B) output change TVD(p_perm, p) (= |Δŷ| for BC) of each permutation."""
    logits = readout(model, encoded).logits(permuted_attention(heads, encoded.mask, permutations))  # (P, B, C)
    return tvd(probabilities(logits), probs)


def permutation_rows(model: nn.Module, examples: list[Example], settings: dict, seed: int) -> list[dict]:
    """Per instance: Δŷ^med = median over permutations of the output change, max α̂, predicted class."""
    rows = [None] * len(examples)
    for batch in cached_batches(model, examples, settings["max_tokens"]):
        indices, encoded, attention, probs, lengths = (
            batch.indices,
            batch.encoded,
            batch.attention,
            batch.probs,
            batch.lengths,
        )
        perms = [permutation_indices(n, settings["permutations"], seed, int(i)) for n, i in zip(lengths, indices)]
        changes = permutation_output_differences(model, encoded, batch.heads, probs, perms)  # (P, B)
        medians = torch.quantile(changes.double(), 0.5, dim=0)  # the mean of the middle two, as np.median
        probs, attention, medians = probs.cpu(), attention.cpu(), medians.cpu()  # read per instance below
        for b, i in enumerate(indices):
            rows[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "predicted": int(probs[b].argmax()),
                "max_attention": float(attention[b].max()),
                "median_output_difference": float(medians[b]),
            }
    return rows


def permutation_experiment(model: nn.Module, examples: list[Example], settings: dict, seed: int) -> pd.DataFrame:
    """`permutation_rows` as a table, one row per instance."""
    import pandas as pd

    return pd.DataFrame(permutation_rows(model, examples, settings, seed))


# ---------------------------------------------------------------------------------------------
# Adversarial attention (§5.5)


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


def adversarial_rows(
    model: nn.Module, examples: list[Example], settings: dict, seed: int, log: Callable[[str], None] = print
) -> tuple[list[dict], list[dict]]:
    """Per instance: ε-max JSD, max α̂, predicted class; and the chosen candidate (D-JWEXPORT)."""
    classifier = model.spec.classifier  # J&W's ε and output scale differ for QA/NLI models
    eps = settings["adv_eps_bc"] if classifier else settings["adv_eps_qa"]
    search = {k: settings["adversary"][k] for k in ("steps", "lr", "amsgrad", "penalty", "margin")}
    rows, exported = [None] * len(examples), [None] * len(examples)
    done = 0
    for batch in cached_batches(model, examples, settings["max_tokens"]):
        indices, encoded, attention, probs, lengths = (
            batch.indices,
            batch.encoded,
            batch.attention,
            batch.probs,
            batch.lengths,
        )
        heads = batch.heads
        noise = [
            adversary_noise(n, settings["adversary"]["candidates"], seed, int(i), heads.shape[1])
            for n, i in zip(lengths, indices)
        ]
        candidates = adversarial_search(
            model, encoded, heads, probs, noise, output_scale=1.0 if classifier else 2.0, **search
        )
        divergence, chosen, change, feasible = eps_max_jsd(model, encoded, heads, probs, candidates, eps)
        # read per instance below: one copy each to the CPU (a no-op there)
        probs, attention, mask = probs.cpu(), attention.cpu(), encoded.mask.cpu()
        divergence, chosen, change, feasible = divergence.cpu(), chosen.cpu(), change.cpu(), feasible.cpu()
        for b, i in enumerate(indices):
            real = mask[b]
            rows[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "predicted": int(probs[b].argmax()),
                "max_attention": float(attention[b].max()),
                "eps_max_jsd": float(divergence[b]),
                "output_difference": float(change[b]),
                "feasible_candidates": int(feasible[b]),
            }
            exported[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "jsd": float(divergence[b]),
                "output_difference": float(change[b]),
                "attention": chosen[b][real].tolist(),
            }
        done += len(indices)
        log(f"adversary: {done}/{len(examples)} instances")
    return rows, exported


def adversarial_experiment(
    model: nn.Module, examples: list[Example], settings: dict, seed: int, log: Callable[[str], None] = print
) -> tuple[pd.DataFrame, list[dict]]:
    """`adversarial_rows` with the rows as a table."""
    import pandas as pd

    rows, exported = adversarial_rows(model, examples, settings, seed, log)
    return pd.DataFrame(rows), exported


# ---------------------------------------------------------------------------------------------
# Ground truth (on `synthetic` and the planted datasets)

GROUND_TRUTH_METHODS = METHODS  # every method explained for the model (the Transformer adds rollout, attattr)


def ground_truth_table(records: list[dict], data: list[dict]) -> pd.DataFrame:
    """One row per test instance and method: the §3 metrics against the planted class cues G
    (`rationale` of each test record), and on integrated gradients' rows whether the instance's IG met
    its completeness tolerance (`ig_converged`). Instances without cues are skipped."""
    import pandas as pd

    truth = {d["id"]: d["rationale"] for d in data}
    rows = []
    for r in records:
        if r["id"] not in truth:
            raise ValueError(f"instance {r['id']!r} of the explanations is not in the test data")
        if not truth[r["id"]]:
            continue
        for method in (m for m in GROUND_TRUTH_METHODS if m in r):
            scores = ground_truth_scores(importance(r, method), truth[r["id"]])
            converged = ig_converged(r) if method == "ig" else None
            row = {"id": r["id"], "length": r["length"], "predicted": r["predicted"], "method": method, **scores}
            rows.append(row | {"ig_converged": converged})
    return pd.DataFrame(rows)


def summarise_ground_truth(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over instances per method, overall and by predicted class. `n_undefined_mass`
    counts instances whose scores are all zero (mass undefined, left out of the mass means);
    `n_ig_unconverged` the integrated-gradients instances whose completeness gap did not converge
    (counted, not left out; empty for the other methods)."""
    import pandas as pd

    metrics = ["mass", "mass_ratio", "precision", "first_hit", "auprc"]
    if "ig_converged" not in table:  # a table made without integrated gradients
        table = table.assign(ig_converged=None)
    parts = [table.assign(group="Overall"), table.assign(group=table["predicted"].astype(str))]
    grouped = pd.concat(parts).groupby(["method", "group"], sort=True)
    summary = grouped[metrics].agg(["mean", lambda x: x.std(ddof=0)])
    summary.columns = [f"{m}_{'mean' if s == 'mean' else 'std'}" for m, s in summary.columns]
    undefined = grouped["mass"].apply(lambda mass: int(mass.isna().sum()))
    unconverged = grouped["ig_converged"].apply(unconverged_count)
    return summary.reset_index().assign(
        n=grouped.size().values, n_undefined_mass=undefined.values, n_ig_unconverged=unconverged.values
    )


# ---------------------------------------------------------------------------------------------
# From files to files: what the rule scripts call


def _restore(checkpoint, data: DataFiles, seed: int, threads: int, device: str) -> tuple[Run, list[Example]]:
    """The run on `device` (the config's `device` setting: auto | cpu | cuda) and its test examples."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "jain_wallace")
    return run, run.test_examples(data)


def write_shifted_accuracy(
    checkpoint, data: DataFiles, shifted_path, out, seed: int, threads: int, device: str = "cpu"
) -> dict:
    """A model's accuracy on its dataset's shifted test set (`attnexp.data.synthetic.shifted_test`: cues of
    both classes in every instance; `attnexp.data.planted.shifted_test`: labels independent of the original
    text), written as JSON: {accuracy, n}."""
    run, _ = _restore(checkpoint, data, seed, threads, device)
    examples = run.examples_of(data, io.read_jsonl(shifted_path, sealed=True))
    split = SplitData(examples)
    probs, _ = predict(run.model, split, 128, model_device(run.model))
    result = {"accuracy": round(float(np.mean(probs.argmax(axis=1) == split.labels())), 6), "n": len(examples)}
    io.write_json(out, result, seal=True)
    return result


def write_permutation(
    checkpoint, data: DataFiles, out, settings: dict, seed: int, threads: int, device: str = "cpu"
) -> None:
    run, examples = _restore(checkpoint, data, seed, threads, device)
    io.write_records_csv(out, permutation_rows(run.model, examples, settings, seed), seal=True)


def write_adversarial(
    checkpoint,
    data: DataFiles,
    out_table,
    out_attention,
    settings: dict,
    seed: int,
    threads: int,
    log=print,
    device: str = "cpu",
) -> None:
    run, examples = _restore(checkpoint, data, seed, threads, device)
    rows, exported = adversarial_rows(run.model, examples, settings, seed, log)
    io.write_records_csv(out_table, rows, seal=True)
    io.write_jsonl(out_attention, exported, seal=True)
