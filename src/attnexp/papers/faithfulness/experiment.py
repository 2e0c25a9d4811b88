"""ERASER faithfulness (DeYoung et al. 2020) of every token ranking the project makes.

A ranking orders an instance's n real tokens, most important first (ties: the lower position). For a
bin b of `BINS`, r_b is its top k_b = max(1, ⌈b·n⌉) positions, j the class predicted on the full
input x, and p_j(·) that class's probability:

    comprehensiveness_b(x) = p_j(x) − p_j(x \\ r_b)     (erase r_b: higher = the ranking found what matters)
    sufficiency_b(x)       = p_j(x) − p_j(r_b)          (keep only r_b: lower = r_b alone suffices)

AOPC is the mean over the |B| bins (the official scorer's 1/|B|, no k = 0 term). Instances with n < 2
are left out. `Random` is the mean over `RANDOM_RANKINGS` random rankings of each instance.

What is ranked and erased is the unit the model attends to (`spec.attended`): tokens for flat, QA/NLI
(passage tokens), FLAN and Transformer models, sentences for HAN (erasing a sentence erases its tokens,
and under `delete` the sentence disappears). A HAN is also ranked over its tokens, by the product of
its sentence and word attention (`faithfulness.han_units`). Models with attributable input are ranked
by their explanations (attention, |gradient|, LOO, IG, ...); HAN and FLAN, whose encoders take no
replacement embeddings, by their own attention and leave-one-unit-out (`unit_rankings`). The tables
carry the unit, and AOPC is per unit and ranking.

Every variant of every instance, ranking and bin (and the unerased input, so p_j(x) comes from the
same forward passes) goes through `attnexp.explain.perturb.variant_probabilities` in one call: a few
large forward passes per model, never one per variant.

The violation test (Liu et al. 2022) asks whether an explanation's signs are right: unit t with a
signed attribution a_t claims to support the predicted class j (a_t > 0) or to oppose it (a_t < 0),
and removing t alone moves the prediction by Δ_t = p_j(x) − p_j(x \\ t). The unit violates when the two
disagree, sign(a_t) ≠ sign(Δ_t); an instance's violation ratio is the share of its units with a_t ≠ 0
that violate (a zero attribution claims nothing). Attention and rollout are non-negative, so they claim
that every unit supports the prediction; gradient (input × gradient), IG, attention × gradient and
attention attribution carry their own signs; Random is the mean over `RANDOM_RANKINGS` draws of N(0, 1)
attributions.

Removal is each operator of `faithfulness.ops` in turn (`attnexp.explain.perturb`: delete, zero,
attention_mask, ...), a whole battery each, in the tables' `operator` column: Liu et al. 2022 show that
the operator moves attention's scores as much as the choice of explainer. An operator a model does not
support (attention masking of a HAN's sentences or inside the Transformer) is left out of its tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.experiments.cached import cached_batches
from attnexp.explain.perturb import supports_op, variant_probabilities
from attnexp.explanations import SELF_ATTENTION_VECTORS, ig_converged, read_explanations
from attnexp.metrics import tvd
from attnexp.models.inputs import Example, collate, sorted_batches
from attnexp.papers.faithfulness import RANDOM
from attnexp.papers.faithfulness.bounds import (
    aopc_bounds,
    bin_size,
    boundable,
    token_masks,
    unit_counts,
    widen,
)
from attnexp.plan import require
from attnexp.runs import restore_run
from attnexp.runtime import model_device, set_determinism

__all__ = [
    "BINS",
    "RANDOM",
    "RANDOM_RANKINGS",
    "SCORES",
    "bin_size",
    "top_positions",
    "random_rankings",
    "evenly_spaced",
    "rankings_of",
    "attended_units",
    "han_token_attention",
    "unit_rankings",
    "UNIT_RANKINGS",
    "ranked_units",
    "eraser",
    "with_bounds",
    "SIGNED",
    "violation_ratio",
    "removal_changes",
    "violations",
    "violations_frame",
    "with_ig_convergence",
    "write_faithfulness",
]

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)  # DeYoung et al. 2020, the official scorer's bins
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


def _variants(scores: list[np.ndarray], bins: tuple[float, ...]):
    """Per instance with n >= 2 units: for each bin the comprehensiveness mask (erase r_b) and the
    sufficiency mask (erase all but r_b) over its units. Yields (instance, bin, k, erase_comp, erase_suff)."""
    for i, s in enumerate(scores):
        n = len(s)
        if n < 2:
            continue
        for b in bins:
            k = bin_size(b, n)
            top = np.zeros(n, dtype=bool)
            top[top_positions(s, k)] = True
            yield i, b, k, top, ~top


def eraser(
    model: nn.Module,
    examples: list[Example],
    rankings: dict[str, list[np.ndarray]],
    random: list[list[np.ndarray]] | None = None,
    bins: tuple[float, ...] = BINS,
    op: str = "delete",
    max_tokens: int = 20_000,
    units: list[list[np.ndarray]] | None = None,
    unit: str = "tokens",
) -> pd.DataFrame:
    """Per instance, ranking and bin: k, comprehensiveness and sufficiency (tidy, one row each).

    rankings: name -> per instance (n,) scores over its units, higher = more important; random: per
    instance the random score vectors whose mean is the `random` ranking (`random_rankings`); units:
    per instance the token positions of each unit (`attended_units`; None: every token a unit), named
    `unit` in the table. The model is in eval mode; `op` is how a token is erased (D-LOO-OP,
    `attnexp.explain.perturb`)."""
    sizes = unit_counts(examples, units)
    if len(sizes) != len(examples):
        raise ValueError(f"units for {len(sizes)} instances, {len(examples)} instances given")
    for name, scores in rankings.items():
        bad = next((e.id for e, s, n in zip(examples, scores, sizes) if len(s) != n), None)
        if len(scores) != len(examples) or bad is not None:
            raise ValueError(
                f"ranking {name!r}: scores for {len(scores)} instances ({bad!r} has the wrong length) for {len(examples)} instances"
            )
    draws = {f"{RANDOM}#{d}": [r[d] for r in random] for d in range(len(random[0]))} if random else {}
    # first the unerased inputs, so p_j(x) comes from the same forward passes as its variants
    owners = list(range(len(examples)))
    erase = [np.zeros(len(e.tokens), dtype=bool) for e in examples]
    keys: list[tuple] = []
    for name, scores in {**rankings, **draws}.items():
        for i, b, k, comp, suff in _variants(scores, bins):
            owners += [i, i]
            erase += token_masks([comp, suff], units[i] if units is not None else None, len(examples[i].tokens))
            keys += [(name, i, b, k, "comprehensiveness"), (name, i, b, k, "sufficiency")]
    probs = variant_probabilities(model, examples, np.array(owners), erase, op, max_tokens)  # (V, C)
    full = probs[: len(examples)]
    predicted = full.argmax(axis=1)  # j: the class predicted on the full input
    rows = {}
    for key, p in zip(keys, probs[len(examples) :]):
        name, i, b, k, metric = key
        row = rows.setdefault((name, i, b), {"ranking": name, "id": examples[i].id, "bin": b, "k": k, "n": sizes[i]})
        row[metric] = float(full[i, predicted[i]] - p[predicted[i]])
    frame = pd.DataFrame(
        list(rows.values()), columns=["ranking", "id", "bin", "k", "n", "comprehensiveness", "sufficiency"]
    )
    if draws:  # Random: the mean over the draws, per instance and bin
        is_draw = frame["ranking"].str.startswith(f"{RANDOM}#")
        mean = (
            frame[is_draw]
            .groupby(["id", "bin"], sort=False, as_index=False)
            .agg(
                k=("k", "first"),
                n=("n", "first"),
                comprehensiveness=("comprehensiveness", "mean"),
                sufficiency=("sufficiency", "mean"),
            )
        )
        frame = pd.concat([frame[~is_draw], mean.assign(ranking=RANDOM)[frame.columns]], ignore_index=True)
    return frame.assign(unit=unit)


def with_bounds(
    frame: pd.DataFrame,
    model: nn.Module,
    examples: list[Example],
    settings: dict,
    op: str,
    units: list[list[np.ndarray]] | None = None,
) -> pd.DataFrame:
    """An ERASER table with each instance's AOPC range (`attnexp.papers.faithfulness.bounds`) on its
    rows, widened to every ranking's own AOPC: `settings["bounds"]["max_instances"]` instances evenly
    spaced (None: all) over those of 2 to `beam_max_units` units (`boundable`); the others' bound columns
    are empty. The table as it is when `settings["bounds"]` is None (normalised AOPC off)."""
    config = settings["bounds"]
    if config is None:
        return frame
    eligible = np.asarray(boundable(unit_counts(examples, units), config["beam_max_units"]), dtype=np.int64)
    bounded = eligible[evenly_spaced(len(eligible), config["max_instances"])]
    found = aopc_bounds(
        model,
        examples,
        tuple(settings["bins"]),
        op=op,
        max_tokens=settings["max_tokens"],
        units=units,
        exact_max_units=config["exact_max_units"],
        beam_width=config["beam_width"],
        chosen=bounded,
        beam_max_units=config["beam_max_units"],
    )
    per_instance = frame.groupby(["ranking", "id"], sort=False)[["comprehensiveness", "sufficiency"]].mean()
    found = widen(found, per_instance.reset_index())
    return frame.merge(found, on="id", how="left", validate="many_to_one")


def violation_ratio(attribution: np.ndarray, change: np.ndarray) -> tuple[int, int]:
    """-> (units whose attribution's sign disagrees with the sign of their removal's output change,
    units with a non-zero attribution): Liu et al.'s violation count and its denominator."""
    attribution, change = np.asarray(attribution, dtype=np.float64), np.asarray(change, dtype=np.float64)
    claimed = attribution != 0
    return int((np.sign(attribution[claimed]) != np.sign(change[claimed])).sum()), int(claimed.sum())


def removal_changes(
    model: nn.Module,
    examples: list[Example],
    op: str = "delete",
    max_tokens: int = 20_000,
    units: list[list[np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """Per instance, Δ_t = p_j(x) − p_j(x minus unit t) for each of its units (j: the class predicted on
    x), every single-unit removal and the unerased inputs in one `variant_probabilities` call; an
    instance of one unit gets an empty vector (removing its only unit leaves nothing to encode)."""
    sizes = unit_counts(examples, units)
    scored = [i for i, n in enumerate(sizes) if n >= 2]
    owners = list(range(len(examples))) + [i for i in scored for _ in range(sizes[i])]
    erase = [np.zeros(len(e.tokens), dtype=bool) for e in examples]
    for i in scored:
        single = list(np.eye(sizes[i], dtype=bool))
        erase += token_masks(single, units[i] if units is not None else None, len(examples[i].tokens))
    probs = variant_probabilities(model, examples, np.array(owners), erase, op, max_tokens)  # (V, C)
    full = probs[: len(examples)]
    predicted = full.argmax(axis=1)
    changes = [np.zeros(0, dtype=probs.dtype) for _ in examples]
    starts = np.cumsum([len(examples)] + [sizes[i] for i in scored])
    for i, a, b in zip(scored, starts[:-1], starts[1:]):
        changes[i] = full[i, predicted[i]] - probs[a:b, predicted[i]]
    return changes


def violations(
    examples: list[Example],
    attributions: dict[str, list[np.ndarray]],
    changes: list[np.ndarray],
    seed: int,
    random_draws: int = RANDOM_RANKINGS,
    unit: str = "tokens",
) -> pd.DataFrame:
    """Per instance (n >= 2 units) and explainer: the violation test's counts and ratio (tidy: explainer,
    id, n, violations, claimed, violation_ratio, unit). attributions: name -> per instance (n,) signed
    scores over its units (`SIGNED`); changes: per instance each unit's removal Δ (`removal_changes`; empty:
    not scored); Random: the mean over `random_draws` N(0, 1) draws, seeded per instance."""
    for name, scores in attributions.items():
        if len(scores) != len(examples) or any(len(s) != len(c) for s, c in zip(scores, changes) if len(c)):
            raise ValueError(f"attribution {name!r}: its vectors do not cover the {len(examples)} instances' units")
    rows = []
    for i, change in enumerate(changes):
        if not len(change):
            continue
        counted = {name: [violation_ratio(scores[i], change)] for name, scores in attributions.items()}
        if random_draws:
            draws = [np.random.default_rng([seed, i, d]).standard_normal(len(change)) for d in range(random_draws)]
            counted[RANDOM] = [violation_ratio(draw, change) for draw in draws]
        for name, counts in counted.items():
            ratios = [v / c for v, c in counts if c]
            rows.append(
                {
                    "explainer": name,
                    "id": examples[i].id,
                    "n": len(change),
                    "violations": float(np.mean([v for v, _ in counts])),
                    "claimed": float(np.mean([c for _, c in counts])),
                    "violation_ratio": float(np.mean(ratios)) if ratios else float("nan"),
                }
            )
    return violations_frame(rows).assign(unit=unit)


def violations_frame(rows: list[dict] = ()) -> pd.DataFrame:
    """The violation test's per-instance table (no rows: a model whose rankings carry no attention)."""
    columns = ["explainer", "id", "n", "violations", "claimed", "violation_ratio", "unit"]
    return pd.DataFrame(list(rows), columns=columns)


def with_ig_convergence(frame: pd.DataFrame, records: list[dict], column: str) -> pd.DataFrame:
    """`frame` with `ig_converged` on its integrated-gradients rows (whether the instance's completeness gap
    met `explain.ig_tolerance`, `attnexp.explain.integrated_gradients`), empty on the others: the tables
    report the share of unconverged IG rows beside each IG number."""
    converged = {r["id"]: ig_converged(r) for r in records}
    flags = [converged.get(i) if name == "ig" else None for name, i in zip(frame[column], frame["id"])]
    return frame.assign(ig_converged=pd.array(flags, dtype="boolean"))


def evenly_spaced(count: int, limit: int | None) -> np.ndarray:
    """`limit` indices evenly spaced over range(count), first and last included (all when `limit` is
    None or at least `count`): a subset that follows whatever order the test file has (e.g. by class)."""
    if limit is None or limit >= count:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, limit).round().astype(np.int64))


def write_faithfulness(
    checkpoint,
    data: DataFiles,
    explanations,
    out: str | Path,
    settings: dict,
    seed: int,
    threads: int,
    device: str = "cpu",
    violation_out: str | Path | None = None,
) -> None:
    """The per-instance ERASER table of one trained model: every ranking of its explanations (models
    with attributable input; `explanations` is None for the others, ranked by `unit_rankings`) and
    Random, every bin (`settings`: bins, rankings, random_rankings, ops, max_instances, max_tokens);
    and at `violation_out` the violation test of the rankings that have signs (`SIGNED`) and Random.
    Both once per removal operator of `ops` the model supports (`attnexp.explain.perturb.supports_op`),
    in an `operator` column.
    The model runs on `device` (the config's setting: auto | cpu | cuda)."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "faithfulness")
    if (explanations is not None) != run.spec.attributable_input:
        raise ValueError(
            f"model {run.spec.name!r}: explanations are the rankings of models with attributable input "
            f"({run.spec.attributable_input}), and were {'given' if explanations is not None else 'not given'}"
        )
    everything = run.test_examples(data)
    chosen = evenly_spaced(len(everything), settings["max_instances"])
    examples = [everything[i] for i in chosen]
    records = read_explanations(explanations) if explanations is not None else None
    ops = [op for op in settings["ops"] if supports_op(run.spec, op)]
    if not ops:
        raise ValueError(
            f"model {run.spec.name!r}: none of the removal operators {settings['ops']} is defined for it (config key faithfulness.ops)"
        )
    erased, tested = [], []
    for op in ops:  # each operator a whole battery; the first is the one the claims read
        frame, violation = _battery(run, examples, everything, chosen, records, settings, seed, op)
        erased.append(frame.assign(operator=op))
        tested.append(violation.assign(operator=op))
    io.write_csv(out, pd.concat(erased, ignore_index=True), seal=True)
    if violation_out is not None:
        io.write_csv(violation_out, pd.concat(tested, ignore_index=True), seal=True)


def _battery(run, examples, everything, chosen, records, settings: dict, seed: int, op: str):
    """One operator's ERASER table and violation test of the chosen test instances."""
    names = tuple(settings["rankings"])
    if records is not None:  # aligned with the whole test set (D-ALIGN), then the chosen instances
        rankings = rankings_of(records, everything, names)
        rankings = {name: [scores[i] for i in chosen] for name, scores in rankings.items()}
        draws = (
            random_rankings([len(e.tokens) for e in examples], seed, settings["random_rankings"])
            if settings["random_rankings"]
            else None
        )
        frame = eraser(run.model, examples, rankings, draws, tuple(settings["bins"]), op, settings["max_tokens"])
        frame = with_bounds(frame, run.model, examples, settings, op)
        signed = {name: [SIGNED[name](records[i]) for i in chosen] for name in rankings if name in SIGNED}
        changes = removal_changes(run.model, examples, op, settings["max_tokens"])
        tested = violations(examples, signed, changes, seed, settings["random_rankings"])
        return (
            with_ig_convergence(frame, records, "ranking"),
            with_ig_convergence(tested, records, "explainer"),
        )
    frames, tested = [], []
    for unit in ranked_units(run.spec.attended, settings.get("han_units")):
        units = [attended_units(e, unit) for e in examples]
        rankings = unit_rankings(run.model, examples, units, op, settings["max_tokens"], unit)
        changes = rankings.pop(REMOVAL)
        rankings = {name: scores for name, scores in rankings.items() if name in names}
        if "attention" in rankings:  # HAN and FLAN attention's signs: every unit claimed to support
            attention = {"attention": rankings["attention"]}
            tested.append(violations(examples, attention, changes, seed, settings["random_rankings"], unit))
        draws = (
            random_rankings([len(u) for u in units], seed, settings["random_rankings"])
            if settings["random_rankings"]
            else None
        )
        frame = eraser(
            run.model, examples, rankings, draws, tuple(settings["bins"]), op, settings["max_tokens"], units, unit
        )
        frames.append(with_bounds(frame, run.model, examples, settings, op, units))
    return pd.concat(frames, ignore_index=True), (
        pd.concat(tested, ignore_index=True) if tested else violations_frame()
    )


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
