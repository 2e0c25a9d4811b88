"""Seed envelopes: how much each explainer agrees with itself across the W&P seed
models, so that "attention disagrees with X" is read against how much X disagrees with X.

Per test instance and measure (attention, |gradient|, LOO, |IG|: `attnexp.explain.importance`), the
Kendall τ-b between the base model's importance and each seed model's (the same architecture and
data, another training seed); the envelope is its median over the seed models (W&P §3.3 take the
median over seeds too). Beside it, the base model's own cross-method τ(attention, X) of J&W §5.3:
a cross-method τ inside X's envelope says attention disagrees with X no more than X does with itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from attnexp import io
from attnexp.explanations import VECTORS, importance, read_explanations
from attnexp.metrics import kendall_tau

__all__ = ["seed_agreement", "envelopes", "summarise_envelopes", "write_seed_envelope"]


def _check_aligned(base: list[dict], other: list[dict], name: str) -> None:
    """D-ALIGN: the same test instances, in the same order, with the same lengths."""
    if len(base) != len(other):
        raise ValueError(f"{name}: {len(other)} explanation records, the base model has {len(base)}")
    for a, b in zip(base, other):
        if a["id"] != b["id"] or a["length"] != b["length"]:
            raise ValueError(
                f"{name}: instance {b['id']!r} (length {b['length']}) where the base model has {a['id']!r} (length {a['length']})"
            )


def seed_agreement(base: list[dict], seeds: dict[int, list[dict]], measures: tuple[str, ...] = VECTORS) -> pd.DataFrame:
    """Explanation records of the base model and of each seed model -> one row per instance, measure
    and seed model: τ-b(base importance, seed-model importance) (NaN where a vector is constant)."""
    for seed, records in seeds.items():
        _check_aligned(base, records, f"seed model {seed}")
    rows = []
    for seed, records in seeds.items():
        for a, b in zip(base, records):
            for measure in measures:
                tau, _ = kendall_tau(importance(a, measure), importance(b, measure))
                rows.append({"id": a["id"], "length": a["length"], "measure": measure, "seed": seed, "tau": tau})
    return pd.DataFrame(rows, columns=["id", "length", "measure", "seed", "tau"])


def envelopes(agreement: pd.DataFrame, base: list[dict]) -> pd.DataFrame:
    """Per instance and measure: the median τ over the seed models (the envelope) and the base's own
    τ(attention, measure) (J&W's cross-method agreement; 1 for attention itself)."""
    median = agreement.groupby(["id", "measure"], sort=False)["tau"].median().rename("seed_median_tau").reset_index()
    cross = pd.DataFrame(
        [
            {"id": r["id"], "measure": m, "attention_tau": kendall_tau(importance(r, "attention"), importance(r, m))[0]}
            for r in base
            for m in agreement["measure"].unique()
        ]
    )
    return median.merge(cross, on=["id", "measure"], how="left")[["id", "measure", "seed_median_tau", "attention_tau"]]


def summarise_envelopes(table: pd.DataFrame) -> pd.DataFrame:
    """Per measure: the envelope's and the cross-method τ's mean ± sd over instances (NaN left
    out and counted), and the share of instances whose τ(attention, X) lies below X's envelope."""
    rows = []
    for measure, group in table.groupby("measure", sort=False):
        both = group.dropna(subset=["seed_median_tau", "attention_tau"])
        rows.append(
            {
                "measure": measure,
                "seed_median_tau": group["seed_median_tau"].mean(),
                "seed_median_tau_sd": group["seed_median_tau"].std(),
                "attention_tau": group["attention_tau"].mean(),
                "attention_tau_sd": group["attention_tau"].std(),
                "share_attention_below_envelope": float((both["attention_tau"] < both["seed_median_tau"]).mean())
                if len(both)
                else np.nan,
                "instances": len(both),
                "undefined": len(group) - len(both),
            }
        )
    return pd.DataFrame(rows)


def write_seed_envelope(base_paths: list[str | Path], seed_paths: dict[int, list[str | Path]], out: str | Path) -> None:
    """results/faithfulness/{base run}/seed_envelope.csv from the explanation files (`VECTORS`) of the
    base run and of each seed run."""
    base = read_explanations(base_paths)
    seeds = {seed: read_explanations(paths) for seed, paths in seed_paths.items()}
    io.write_csv(out, envelopes(seed_agreement(base, seeds), base), seal=True)
