"""Serrano & Smith (2019), "Is Attention Interpretable?": erasure on the attention layer closest to
the output (S&S §4–§6).

- `single_weight_erasure`: erase the top item (by attention, by gradient, by attention × gradient)
  and, separately, a random other item; compare JS(p, q) and decision flips (§5).
- `removal_until_flip`: erase items cumulatively in the order of a ranking (random, attention,
  gradient, attention × gradient, ascending attention) until the decision flips (§6).

The items are sentences for HAN models and tokens for FLAN, the flat J&W models and the Transformer
(`spec.attended`). One forward pass caches the item states (`attnexp.experiments.cached`); every
intervention is decode-only. Erasing a set S renormalises the rest, α′_i = α_i · 1[i ∉ S] /
Σ_{j ∉ S} α_j, and α′ = 0 when nothing is left. The Transformer has one readout distribution per
head (`CachedBatch.heads`): an item is erased from every head, each head renormalised on its own.

Where the output layer is linear in the attention, the cached states are projected through it once
(`Readout`): logits(α′) = Σ_i α′_i W h_i + b (= b when nothing is left). All n prefixes of every
ranking are then decoded at once, batched across instances and rankings: in removal order the
remainder is a suffix, so its logits are reversed cumulative sums (O(n·C) per ranking; an n × n
masked product would be O(n²·C), which dominated on 20news20's 3,000-token posts). The Transformer's
readout is not linear (`DecodedReadout`): its n prefixes per ranking are decoded as one batch.

The gradient ranking is g_i = ∂p_ŷ/∂α_i with α as independent inputs (no softmax Jacobian, no
renormalisation, D-SS-GRAD); with several heads, g_i = Σ_h ∂p_ŷ/∂α_{h,i} (raising item i's weight in
every head) and attention × gradient = Σ_h α_{h,i} ∂p_ŷ/∂α_{h,i} (the first-order effect of erasing
it), both S&S's own for one head. The attention ranking is the head mean α̂. Instances with a single
item are excluded (§4). Randomness is drawn per instance from (seed, instance index), so results do
not depend on batching.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.experiments.cached import CachedBatch, DecodedReadout, Readout, cached_batches, readout
from attnexp.metrics import jsd, kl
from attnexp.models.inputs import Example
from attnexp.models.outputs import probabilities
from attnexp.papers.serrano_smith import RANKINGS, TOP_BY  # §6's orders and §5's top items
from attnexp.papers.serrano_smith.summary import ERASURE_COLUMNS, REMOVAL_COLUMNS
from attnexp.plan import require
from attnexp.runs import restore_run
from attnexp.runtime import set_determinism

__all__ = [
    "erase",
    "attention_gradient",
    "ranking_keys",
    "random_items",
    "random_rankings",
    "single_weight_erasure",
    "decisions",
    "removal_until_flip",
    "run_interventions",
    "write_interventions",
]


# ---------------------------------------------------------------------------------------------
# Decode-only interventions


def erase(heads: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """heads (B, H, L), keep (..., B, L) bool -> renormalised weights (..., B, H, L): erased items get
    0 in every head, the rest share each head's mass; all zeros where nothing (or no mass) is left (§4)."""
    kept = heads * keep[..., None, :]  # (..., B, H, L)
    total = kept.sum(-1, keepdim=True)  # (..., B, H, 1)
    return torch.where(total > 0, kept / torch.where(total > 0, total, 1.0), 0.0)


def attention_gradient(out: Readout | DecodedReadout, heads: torch.Tensor, predicted: torch.Tensor) -> torch.Tensor:
    """g (B, H, L) = ∂p_ŷ/∂α_{h,i}, α treated as independent inputs (D-SS-GRAD). One backward pass
    per batch: instances do not interact, so the gradient of the sum is each instance's own."""
    alpha = heads.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        p = probabilities(out.logits(alpha)).gather(-1, predicted[:, None]).squeeze(-1)  # (B,)
        (grad,) = torch.autograd.grad(p.sum(), alpha)
    return grad


def ranking_keys(heads: torch.Tensor, gradient: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """heads, gradient (B, H, L) -> scores (B, L) whose descending order is each deterministic
    ranking; items off the mask get −10⁶ (S&S: padding sorts last)."""
    attention = heads.mean(dim=-2)  # (B, L) α̂, exact for one head
    keys = {
        "attention": attention,
        "gradient": gradient.sum(dim=-2),
        "attn_x_grad": (heads * gradient).sum(dim=-2),
        "attention_ascending": -attention,
    }
    return {name: key.masked_fill(~mask, -1e6) for name, key in keys.items()}


def random_items(n: int, top: np.ndarray, mode: str, seed: int, index: int) -> np.ndarray:
    """The random other item of each top item (one per variant of `TOP_BY`), D-SS-RAND:
    `paper` draws uniformly from the n − 1 items other than the top one; `repo` draws a position
    in 1..n−1 (0-based), which can be the top item itself and never position 0."""
    u = np.random.default_rng([seed, 2, index]).random(len(top))
    if mode == "repo":
        return 1 + np.floor(u * (n - 1)).astype(np.int64)
    others = np.floor(u * (n - 1)).astype(np.int64)  # index among the items other than top
    return others + (others >= top)


def random_rankings(n: int, count: int, seed: int, index: int) -> np.ndarray:
    """(count, n) uniform random removal orders of the instance at `index`."""
    rng = np.random.default_rng([seed, 3, index])
    return rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1)


def _order(key: torch.Tensor) -> torch.Tensor:
    """Descending order of a key (B, L), ties to the lower position."""
    return torch.sort(key, dim=-1, descending=True, stable=True).indices


# ---------------------------------------------------------------------------------------------
# Experiment 1: single-weight erasure (§5)


@torch.no_grad()
def single_weight_erasure(
    out: Readout | DecodedReadout,
    heads: torch.Tensor,
    orders: dict[str, torch.Tensor],
    mask: torch.Tensor,
    randoms: torch.Tensor,
) -> dict[str, dict[str, torch.Tensor]]:
    """heads (B, H, L). Per variant of `TOP_BY`: erase its top item (the first of its order (B, L)),
    and separately its random item `randoms` (len(TOP_BY), B), all variants in one decode.
    -> {variant: {top, random (B,) positions; js_*, kl_* (B,); flip_* (B,) bool}}."""
    p = probabilities(out.logits(heads))  # (B, C)
    predicted = p.argmax(-1)
    tops = torch.stack([orders[name][:, 0] for name in TOP_BY])  # (V, B)
    picked = torch.stack([tops, randoms], dim=1)  # (V, 2, B): erase the top item, or the random one
    keep = mask.expand(*picked.shape, mask.shape[-1]).clone()  # (V, 2, B, L)
    keep.scatter_(-1, picked[..., None], False)
    q = probabilities(out.logits(erase(heads, keep)))  # (V, 2, B, C)
    js, divergence, flip = jsd(p, q), kl(p, q), q.argmax(-1) != predicted  # (V, 2, B) each
    return {
        name: {
            "top": tops[v],
            "random": randoms[v],
            "js_top": js[v, 0],
            "js_random": js[v, 1],
            "kl_top": divergence[v, 0],
            "kl_random": divergence[v, 1],
            "flip_top": flip[v, 0],
            "flip_random": flip[v, 1],
        }
        for v, name in enumerate(TOP_BY)
    }


# ---------------------------------------------------------------------------------------------
# Experiment 2: removal until the decision flips (§6)


def decisions(logits: torch.Tensor) -> torch.Tensor:
    """(..., C) logits -> (...,) predicted class, as `probabilities(logits).argmax(-1)` but without
    the softmax (it is monotone): for one sigmoid logit, class 1 iff the logit is > 0 (ŷ = 0.5 -> 0)."""
    if logits.shape[-1] == 1:
        return (logits[..., 0] > 0).long()
    return logits.argmax(-1)


def _linear_removal(out: Readout, attention: torch.Tensor, orders: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """attention (B, L) of a linear readout. Every prefix k = 1..L of every order is decoded at once:
    in removal order what remains after removing the first k items is a suffix, so
    m_k logits_k = Σ_{j≥k} α_j W h_j + m_k b with m_k = Σ_{j≥k} α_j for every k are cumulative sums
    over the reversed order (summed from the end, so a tiny remaining mass keeps its relative
    precision): O(L·C) per order, where an L × L masked product would be O(L²·C). A positive m_k does
    not change the argmax, so the decision needs no division. -> removed (R, B)."""
    R, B, L = orders.shape
    C = out.values.shape[-1]
    predicted = probabilities(out.logits(attention[:, None])).argmax(-1)  # (B,)
    bias_decision = decisions(out.bias[None])  # (1,): nothing left, α′ = 0, logits = b
    last_first = orders.flip(-1)  # (R, B, L): the removal order reversed, masked items (α = 0) first
    alpha = attention.expand(R, B, L).gather(-1, last_first)  # (R, B, L)
    weighted = (attention[..., None] * out.values).expand(R, B, L, C)  # α_i W h_i, (R, B, L, C) views
    weighted = weighted.gather(2, last_first[..., None].expand(R, B, L, C))  # in reversed removal order
    # entry j: what remains after removing k = L - 1 - j items (j = 0..L-1 <-> k = L-1..0)
    rest_mass = alpha.cumsum(-1)  # (R, B, L)
    scaled = weighted.cumsum(2) + rest_mass[..., None] * out.bias  # (R, B, L, C) = m_k logits_k
    decided = torch.where(rest_mass > 0, decisions(scaled), bias_decision)  # (R, B, L)
    positions = torch.arange(L, device=orders.device)  # (L,)
    k = L - 1 - positions  # (L,) items removed at entry j
    flips = (decided != predicted[:, None]) & (k >= 1) & (k <= lengths[:, None])  # (R, B, L)
    # k = L (everything removed) has no entry: it counts where n = L
    flips_all = ((bias_decision != predicted) & (lengths == L))[None].expand(R, B)
    first_j = torch.where(flips, positions, -1).amax(-1)  # (R, B): largest j = smallest k
    return torch.where(first_j >= 0, L - 1 - first_j, torch.where(flips_all, L, 0))  # (R, B)


def _decoded_removal(
    out: DecodedReadout, heads: torch.Tensor, orders: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """heads (B, H, L) of any readout: per order, its L prefixes (k = 1..L items removed) decoded as
    one batch of L × B variants. -> removed (R, B)."""
    R, B, L = orders.shape
    predicted = decisions(out.logits(heads))  # (B,)
    place = torch.empty_like(orders).scatter_(
        -1, orders, torch.arange(L, device=orders.device).expand(R, B, L)
    )  # each item's place in the order
    k = torch.arange(1, L + 1, device=orders.device)  # (L,) items removed
    removed = orders.new_zeros(R, B)
    for r in range(R):
        keep = place[r][None] >= k[:, None, None]  # (L, B, L): after removing the first k items
        decided = decisions(out.logits(erase(heads, keep)))  # (L, B)
        flips = (decided != predicted) & (k[:, None] <= lengths)  # (L, B)
        removed[r] = torch.where(flips.any(0), flips.int().argmax(0) + 1, 0)
    return removed


@torch.no_grad()
def removal_until_flip(
    out: Readout | DecodedReadout, heads: torch.Tensor, orders: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """heads (B, H, L); orders (R, B, L): R removal orders per instance (real items first); lengths (B,).
    -> (removed (R, B): the k of the first flip, 0 = no flip up to k = n; removed attention mass
    (R, B) at that k, of the head mean α̂, NaN for no flip)."""
    R, B, L = orders.shape
    attention = heads.mean(dim=-2)  # (B, L)
    if out.linear:
        removed = _linear_removal(out, attention, orders, lengths)
    else:
        removed = _decoded_removal(out, heads, orders, lengths)
    removed_mass = (
        attention.expand(R, B, L)
        .gather(-1, orders)
        .cumsum(-1)
        .gather(-1, (removed - 1).clamp(min=0)[..., None])
        .squeeze(-1)
    )
    return removed, torch.where(removed > 0, removed_mass, torch.nan)


# ---------------------------------------------------------------------------------------------
# Both experiments over a test set


def _batch_rows(
    batch: CachedBatch, out: Readout | DecodedReadout, examples: list[Example], settings: dict, seed: int
) -> tuple[list[dict], list[dict]]:
    mask, attention, heads = batch.encoded.mask, batch.attention, batch.heads
    lengths = mask.sum(-1)  # (B,)
    predicted = probabilities(out.logits(heads)).argmax(-1)
    gradient = attention_gradient(out, heads, predicted)
    orders = {name: _order(key) for name, key in ranking_keys(heads, gradient, mask).items()}  # (B, L) each
    B, L = attention.shape
    # Random items (per TOP_BY variant) and random rankings, drawn per instance over its n items and
    # mapped to positions (items are not positions where SOS comes first)
    device = mask.device
    tops = torch.stack([orders[name][:, 0] for name in TOP_BY]).cpu().numpy()  # (V, B) positions
    randoms = tops.copy()  # single-item instances keep their top item (they are dropped)
    perms = np.tile(np.arange(L), (settings["permutations"], B, 1))  # (P, B, L)
    present = mask.cpu().numpy()
    for b, i in enumerate(batch.indices):
        items = np.flatnonzero(present[b])
        n = len(items)
        if n > 1:
            top_items = np.searchsorted(items, tops[:, b])  # item index of each top position
            randoms[:, b] = items[random_items(n, top_items, settings["random_item"], seed, int(i))]
            perms[:, b, :n] = items[random_rankings(n, settings["permutations"], seed, int(i))]
            perms[:, b, n:] = np.flatnonzero(~present[b])  # SOS/EOS/padding: last
    single = single_weight_erasure(out, heads, orders, mask, torch.from_numpy(randoms).to(device))
    ranked = [name for name in list(RANKINGS)[1:] if name != "attention_ascending" or settings["attention_ascending"]]
    rankings = [("random", j) for j in range(settings["permutations"])] + [(name, 0) for name in ranked]
    every = torch.cat([torch.from_numpy(perms).to(device), torch.stack([orders[name] for name in ranked])])  # (R, B, L)
    removed, mass = removal_until_flip(out, heads, every, lengths)  # (R, B) each

    # rows, from numpy arrays on the CPU (element access on tensors costs microseconds each)
    a, n_items, classes = attention.cpu().numpy(), lengths.tolist(), predicted.tolist()
    removed, mass = removed.cpu().numpy(), mass.cpu().numpy()
    single = {name: {key: value.cpu().numpy() for key, value in r.items()} for name, r in single.items()}
    erasure_rows, removal_rows = [], []
    for b, i in enumerate(batch.indices):
        n = n_items[b]
        if n < 2:  # S&S §4: instances with one attended item are excluded
            continue
        base = {"index": int(i), "id": examples[i].id, "n": n, "predicted": classes[b]}
        for name, r in single.items():
            top, rand = int(r["top"][b]), int(r["random"][b])
            erasure_rows.append(
                base
                | {
                    "top_by": name,
                    "top": top,
                    "random": rand,
                    "top_attention": float(a[b, top]),
                    "random_attention": float(a[b, rand]),
                    "delta_attention": float(a[b, top] - a[b, rand]),
                    "js_top": float(r["js_top"][b]),
                    "js_random": float(r["js_random"][b]),
                    "delta_js": float(r["js_top"][b] - r["js_random"][b]),
                    "kl_top": float(r["kl_top"][b]),
                    "kl_random": float(r["kl_random"][b]),
                    "flip_top": bool(r["flip_top"][b]),
                    "flip_random": bool(r["flip_random"][b]),
                }
            )
        for row, (name, permutation) in enumerate(rankings):
            k = int(removed[row, b])
            removal_rows.append(
                base
                | {
                    "ranking": name,
                    "permutation": permutation,
                    "flipped": k > 0,
                    "removed": k if k else None,
                    "fraction": k / n if k else None,
                    "removed_mass": float(mass[row, b]) if k else None,
                }
            )
    return erasure_rows, removal_rows


def run_interventions(
    model, examples: list[Example], settings: dict, seed: int, log: Callable[[str], None] = print
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both experiments on every test instance with > 1 item -> (single-weight erasure table, one row
    per instance × top_by; removal table, one row per instance × ranking × permutation)."""
    require(model.spec, "serrano_smith")
    erasure, removal, done = [], [], 0
    for batch in cached_batches(model, examples, settings["max_tokens"]):
        e, r = _batch_rows(batch, readout(model, batch.encoded), examples, settings, seed)
        erasure += e
        removal += r
        done += len(batch.indices)
        log(f"serrano_smith: {done}/{len(examples)} instances")
    # rows in the test split's order, whatever the batching; no rows where every instance has one item
    erasure, removal = (
        pd.DataFrame(rows, columns=["index", *columns])
        .sort_values("index", kind="stable")
        .drop(columns="index")
        .reset_index(drop=True)
        for rows, columns in ((erasure, ERASURE_COLUMNS), (removal, REMOVAL_COLUMNS))
    )
    return erasure, removal


# ---------------------------------------------------------------------------------------------
# From files to files: what the rule script calls


def write_interventions(
    checkpoint,
    data: DataFiles,
    out_erasure,
    out_removal,
    *,
    settings: dict,
    threads: int,
    expected_model: str | None = None,
    log: Callable[[str], None] = print,
    device: str = "cpu",
) -> None:
    """Restore a trained run on `device` (the config's setting: auto | cpu | cuda), run both
    experiments on its test split and write the tidy tables."""
    set_determinism(settings["seed"], threads)
    run = restore_run(checkpoint, data, expected_model, device=device)
    require(run.spec, "serrano_smith")
    examples = run.test_examples(data)
    log(f"{run.spec.name}: S&S erasure on the {run.spec.attended} of {len(examples)} test instances")
    erasure, removal = run_interventions(run.model, examples, settings, settings["seed"], log)
    io.write_csv(out_erasure, erasure, seal=True)
    io.write_csv(out_removal, removal, seal=True)
    excluded = len(examples) - removal["id"].nunique()
    log(f"{excluded} instances with a single {run.spec.attended[:-1]} excluded (S&S §4)")
    if removal.empty:
        log(f"nothing to erase: every test instance has a single {run.spec.attended[:-1]}; the tables have no rows")
