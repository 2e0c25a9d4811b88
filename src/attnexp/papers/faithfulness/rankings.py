"""What the ERASER battery ranks (`attnexp.papers.faithfulness.experiment`): the scores of each ranking
from an explanation record (`SCORES`, and their signed attributions for the violation test, `SIGNED`),
the top-k positions of a ranking, the seeded random rankings, the units a model attends to, and the
rankings of a model without attributable input from its own forward passes (`unit_rankings`).

What is ranked and erased is the unit the model attends to (`spec.attended`): tokens for flat, QA/NLI
(passage tokens), FLAN and Transformer models, sentences for HAN (erasing a sentence erases its tokens,
and under `delete` the sentence disappears). A HAN is also ranked over its tokens, by the product of
its sentence and word attention (`faithfulness.han_units`). Models with attributable input are ranked
by their explanations (attention, |gradient|, LOO, IG, ...); HAN and FLAN, whose encoders take no
replacement embeddings, by their own attention and leave-one-unit-out (`unit_rankings`). The tables
carry the unit, and AOPC is per unit and ranking.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from attnexp.experiments.cached import cached_batches
from attnexp.explain.perturb import variant_probabilities
from attnexp.explanations import SELF_ATTENTION_VECTORS
from attnexp.metrics import tvd
from attnexp.models.inputs import Example, collate, sorted_batches
from attnexp.papers.faithfulness.bounds import token_masks
from attnexp.runtime import model_device

RANDOM_RANKINGS = 5  # ERASER's Random: the mean of 5 random rankings


# ranking (`attnexp.papers.faithfulness.RANKINGS`) -> its (n,) scores from one explanation record: the attention itself, J&W's
# |gradient|, LOO's output change, signed IG (positive = supports the predicted class), and attention
# × |gradient| (the token-level analogue of S&S's attention × gradient ranking); for the Transformer
# also attention rollout (non-negative) and signed attention attribution (Abnar & Zuidema 2020; Hao et al. 2021)
SCORES = {
    "attention": lambda r: np.asarray(r["attention"]),
    "gradient": lambda r: np.abs(r["gradient"]),
    "loo": lambda r: np.asarray(r["loo"]),
    "ig": lambda r: np.asarray(r["ig"]),
    "attention_x_gradient": lambda r: np.asarray(r["attention"]) * np.abs(r["gradient"]),
    "rollout": lambda r: np.asarray(r["rollout"]),
    "attattr": lambda r: np.asarray(r["attattr"]),
}


# ranking -> its (n,) signed attributions for the violation test (positive: the unit supports the predicted
# class): attention and rollout as they are (non-negative), input × gradient and IG with their signs,
# attention × gradient with the gradient's sign (the ranking above takes |gradient|), attention attribution
SIGNED = {name: SCORES[name] for name in ("attention", "ig", "rollout", "attattr")} | {
    "gradient": lambda r: np.asarray(r["gradient"]),
    "attention_x_gradient": lambda r: np.asarray(r["attention"]) * np.asarray(r["gradient"]),
}


# What a model without attributable input (HAN, FLAN) is ranked by: its own attention over the units and
# leave-one-unit-out TVD(p(x), p(x minus the unit)) (J&W's LOO, one unit at a time)
UNIT_RANKINGS = ("attention", "loo")
REMOVAL = "removal_change"  # `unit_rankings`' key of each unit's signed removal Δ (not a ranking)


def top_positions(scores: np.ndarray, k: int) -> np.ndarray:
    """The positions of the k largest scores, most important first; ties go to the lower position."""
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores, dtype=np.float64)))
    return order[:k]


def random_rankings(lengths: list[int], seed: int, count: int = RANDOM_RANKINGS) -> list[list[np.ndarray]]:
    """`count` random score vectors per instance, seeded per instance index (the same whatever the
    batching or the other instances): [instance][draw] -> (n,)."""
    return [
        [np.random.default_rng([seed, i, d]).permutation(n).astype(np.float64) for d in range(count)]
        for i, n in enumerate(lengths)
    ]


def rankings_of(
    records: list[dict], examples: list[Example], names: tuple[str, ...] = tuple(SCORES)
) -> dict[str, list[np.ndarray]]:
    """Explanation records (`attnexp.explain.read_explanations`, test order) -> ranking name -> per
    instance (n,) scores; the records must be the examples' own, instance by instance (D-ALIGN).
    Rankings only a self-attention model has (rollout, attattr) are left out for the others."""
    if len(records) != len(examples):
        raise ValueError(f"{len(records)} explanation records for {len(examples)} test instances")
    for record, example in zip(records, examples):
        if record["id"] != example.id or record["length"] != len(example.tokens):
            raise ValueError(
                f"explanation {record['id']!r} (length {record['length']}) does not match test instance "
                f"{example.id!r} (length {len(example.tokens)}): the explanations are not this model's test set"
            )
    unknown = sorted(set(names) - set(SCORES))
    if unknown:
        raise ValueError(f"unknown rankings {unknown}; expected some of {sorted(SCORES)}")
    absent = {name for name in SELF_ATTENTION_VECTORS if records and name not in records[0]}
    return {name: [SCORES[name](r) for r in records] for name in names if name not in absent}


def attended_units(example: Example, attended: str) -> list[np.ndarray]:
    """The token positions of each unit the model attends to, in the order of its attention: one token
    each (`tokens`), or one non-empty sentence each (`sentences`: HAN, which drops empty sentences)."""
    if attended == "sentences":
        return [np.arange(a, b) for a, b in example.sentences if b > a]
    if attended != "tokens":
        raise ValueError(f"attended units must be 'tokens' or 'sentences', got {attended!r}")
    return [np.array([t]) for t in range(len(example.tokens))]


@torch.no_grad()
def han_token_attention(model: nn.Module, examples: list[Example], max_tokens: int = 20_000) -> list[np.ndarray]:
    """A HAN's weight on each token (`HierarchicalClassifier.token_attention`), per instance (n_tokens,)
    in token order: sentence by non-empty sentence, word by word."""
    model.eval()
    lengths = np.array([e.length(model.layout) for e in examples])
    weights: list[np.ndarray | None] = [None] * len(examples)
    for indices in sorted_batches(lengths, batch_size=len(examples), max_tokens=max_tokens):
        batch = collate([examples[i] for i in indices], model.layout).to(model_device(model))
        per_word = model.token_attention(batch).cpu().numpy()  # (B, S, W)
        for row, i in enumerate(indices):
            token = np.zeros(len(examples[i].tokens), dtype=per_word.dtype)
            for s, (a, b) in enumerate((a, b) for a, b in examples[i].sentences if b > a):
                token[a:b] = per_word[row, s, : b - a]
            weights[i] = token
    return weights


def unit_rankings(
    model: nn.Module,
    examples: list[Example],
    units: list[list[np.ndarray]],
    op: str = "delete",
    max_tokens: int = 20_000,
    unit: str | None = None,
) -> dict[str, list[np.ndarray]]:
    """`UNIT_RANKINGS` of a model from its own forward passes: its attention over the units (one cached
    pass; a HAN ranked over `unit="tokens"` uses `han_token_attention`) and leave-one-unit-out (every
    single-unit erasure as a batched input variant) -> name -> per instance (n_units,) scores, and under
    `REMOVAL` the same erasures' signed Δ (`removal_changes`; empty for an instance of one unit). `unit`:
    what `units` are, by default the units the model attends to."""
    unit = unit or model.spec.attended
    if unit not in (model.spec.attended, "tokens"):
        raise ValueError(
            f"model {model.spec.name!r} attends to {model.spec.attended}; its units can be those or tokens, not {unit!r}"
        )
    attention: list[np.ndarray | None] = [None] * len(examples)
    full = None
    for batch in cached_batches(model, examples, max_tokens):
        # one copy per batch to the CPU (a no-op there)
        probs, alpha, mask = (t.cpu().numpy() for t in (batch.probs, batch.attention, batch.encoded.mask))
        full = np.empty((len(examples), probs.shape[1]), dtype=probs.dtype) if full is None else full
        full[batch.indices] = probs
        for row, i in enumerate(batch.indices):
            attention[i] = alpha[row][mask[row]]
    if unit != model.spec.attended:  # a HAN over its tokens
        attention = han_token_attention(model, examples, max_tokens)
    for i, weights in enumerate(attention):
        if len(weights) != len(units[i]):  # D-ALIGN: the attention covers exactly the units
            raise ValueError(
                f"instance {examples[i].id!r}: {len(weights)} attention weights for {len(units[i])} {unit}"
            )
    # an instance of one unit is not scored (n < 2), and erasing its only unit would leave nothing to encode
    scored = [len(u) >= 2 for u in units]
    owners = np.concatenate([np.full(len(u) if ok else 0, i) for i, (u, ok) in enumerate(zip(units, scored))])
    erase = [
        m
        for u, e, ok in zip(units, examples, scored)
        if ok
        for m in token_masks(list(np.eye(len(u), dtype=bool)), u, len(e.tokens))
    ]
    changes, signed = np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
    if erase:
        erased = variant_probabilities(model, examples, owners, erase, op, max_tokens)  # (V, C)
        changes = tvd(torch.from_numpy(erased), torch.from_numpy(full[owners])).numpy()
        predicted = full.argmax(axis=1)[owners]
        rows = np.arange(len(owners))
        # Δ_t = p_j(x) - p_j(x minus t), for the violation test
        signed = full[owners, predicted] - erased[rows, predicted]
    starts = np.cumsum([0] + [len(u) if ok else 0 for u, ok in zip(units, scored)])
    loo = [
        changes[a:b] if ok else np.zeros(len(u), dtype=np.float32)
        for a, b, u, ok in zip(starts[:-1], starts[1:], units, scored)
    ]
    removal = [signed[a:b] if ok else signed[:0] for a, b, ok in zip(starts[:-1], starts[1:], scored)]
    return {"attention": attention, "loo": loo, REMOVAL: removal}


def ranked_units(attended: str, han_units: list[str] | None) -> list[str]:
    """The units a model without attributable input is ranked over: what it attends to, and for a HAN
    every unit of `faithfulness.han_units` (sentences first; only a HAN's settings carry the key)."""
    if attended != "sentences":
        return [attended]
    if not han_units:
        raise ValueError(
            "config key 'faithfulness.han_units' is missing or empty: a HAN needs sentences, tokens or both"
        )
    return [u for u in ("sentences", "tokens") if u in han_units]
