"""ERASER faithfulness (DeYoung et al. 2020) of every token ranking the project makes: the job
(`write_faithfulness`) runs, once per removal operator, the ERASER battery
(`attnexp.papers.faithfulness.eraser`) of the model's rankings (`attnexp.papers.faithfulness.rankings`)
with each instance's AOPC range (`with_bounds`), and the violation test
(`attnexp.papers.faithfulness.violations`). The settings a job passes (`settings`) are read here
alone; the parts are re-exported here.

Removal is each operator of `faithfulness.ops` in turn (`attnexp.explain.perturb`: delete, zero,
attention_mask, ...), a whole battery each, in the tables' `operator` column: Liu et al. 2022 show that
the operator moves attention's scores as much as the choice of explainer. An operator a model does not
support (attention masking of a HAN's sentences or inside the Transformer) is left out of its tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.explain.perturb import supports_op
from attnexp.explanations import ig_converged, read_explanations
from attnexp.models.inputs import Example
from attnexp.papers.faithfulness import RANDOM
from attnexp.papers.faithfulness.bounds import aopc_bounds, bin_size, boundable, unit_counts, widen
from attnexp.papers.faithfulness.eraser import BINS, eraser
from attnexp.papers.faithfulness.rankings import (
    RANDOM_RANKINGS,
    REMOVAL,
    SCORES,
    SIGNED,
    UNIT_RANKINGS,
    attended_units,
    han_token_attention,
    random_rankings,
    ranked_units,
    rankings_of,
    top_positions,
    unit_rankings,
)
from attnexp.papers.faithfulness.violations import removal_changes, violation_ratio, violations, violations_frame
from attnexp.plan import require
from attnexp.runs import restore_run
from attnexp.runtime import set_determinism

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
    *,
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
        frame, violation = _battery(
            run, examples, everything=everything, chosen=chosen, records=records, settings=settings, seed=seed, op=op
        )
        erased.append(frame.assign(operator=op))
        tested.append(violation.assign(operator=op))
    io.write_csv(out, pd.concat(erased, ignore_index=True), seal=True)
    if violation_out is not None:
        io.write_csv(violation_out, pd.concat(tested, ignore_index=True), seal=True)


def _random_draws(lengths: list[int], seed: int, settings: dict):
    """`settings.random_rankings` random orders of each instance's `lengths` units (None: no random baseline)."""
    return random_rankings(lengths, seed, settings["random_rankings"]) if settings["random_rankings"] else None


def _battery(run, examples, *, everything, chosen, records, settings: dict, seed: int, op: str):
    """One operator's ERASER table and violation test of the chosen test instances."""
    names = tuple(settings["rankings"])
    if records is not None:  # aligned with the whole test set (D-ALIGN), then the chosen instances
        rankings = rankings_of(records, everything, names)
        rankings = {name: [scores[i] for i in chosen] for name, scores in rankings.items()}
        draws = _random_draws([len(e.tokens) for e in examples], seed, settings)
        frame = eraser(
            run.model,
            examples,
            rankings,
            random=draws,
            bins=tuple(settings["bins"]),
            op=op,
            max_tokens=settings["max_tokens"],
        )
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
        draws = _random_draws([len(u) for u in units], seed, settings)
        frame = eraser(
            run.model,
            examples,
            rankings,
            random=draws,
            bins=tuple(settings["bins"]),
            op=op,
            max_tokens=settings["max_tokens"],
            units=units,
            unit=unit,
        )
        frames.append(with_bounds(frame, run.model, examples, settings, op, units))
    return pd.concat(frames, ignore_index=True), (
        pd.concat(tested, ignore_index=True) if tested else violations_frame()
    )
