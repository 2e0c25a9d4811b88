"""Explanation files read back (`results/explain/{dataset}/{model}/seed{seed}/{method}.jsonl`, written
by `attnexp.explain`): one record per test instance, every method's vector checked against the
stored length, and token importance as the rank correlations use it. Torch-free, so that a job that
only reads explanations (jw_correlations) does not load torch; `attnexp.explain` re-exports all of it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnexp import io
from attnexp.plan import EXPLANATION_METHODS, SELF_ATTENTION_METHODS

__all__ = [
    "METHODS",
    "VECTORS",
    "SELF_ATTENTION_VECTORS",
    "SIGNED",
    "importance",
    "ig_converged",
    "unconverged_count",
    "read_explanations",
    "explanation_sets",
]

METHODS = EXPLANATION_METHODS
VECTORS = ("attention", "gradient", "loo", "ig")
SELF_ATTENTION_VECTORS = SELF_ATTENTION_METHODS  # models with self-attention in every layer (the Transformer)
SIGNED = ("gradient", "ig", "attattr")


def importance(record: dict, measure: str) -> np.ndarray:
    """A record's token importance by one measure, as magnitudes: |gradient| (J&W §5.1), |IG|
    (Sundararajan et al. 2017) and |attention attribution|; attention, LOO and rollout are non-negative already.
    What every rank correlation uses."""
    if measure not in METHODS:
        raise ValueError(f"unknown importance measure {measure!r}; expected one of {METHODS}")
    if measure not in record:
        raise ValueError(
            f"instance {record['id']!r} has no {measure!r} scores (its explanation file was not read, or the model has no self-attention)"
        )
    return np.abs(record[measure]) if measure in SIGNED else np.asarray(record[measure])


def ig_converged(record: dict) -> bool | None:
    """Whether an instance's integrated gradients met the completeness tolerance (`ig_converged` of the
    IG file); None for a record without the flag."""
    return None if record.get("ig_converged") is None else bool(record["ig_converged"])


def unconverged_count(flags) -> int | None:
    """How many of a column of `ig_converged` flags are false, as written (True/False/None) or as read
    back from CSV ("True"/"False"/empty); None where no row carries a flag (not an IG row)."""
    import pandas as pd

    read = pd.Series(flags, dtype=object).map({True: True, False: False, "True": True, "False": False}).dropna()
    return int((~read.astype(bool)).sum()) if len(read) else None


def _read_file(path: Path) -> list[dict]:
    """One explanation file -> records with every method's vector as an array of checked length."""
    records = []
    for record in io.read_jsonl(path, sealed=True):
        present = [m for m in METHODS if m in record]
        if not present:
            raise ValueError(f"{path}: instance {record.get('id')!r} has none of the explanation keys {METHODS}")
        for method in present:
            vector = np.asarray(record[method], dtype=np.float64)
            if len(vector) != record["length"]:
                raise ValueError(
                    f"{path}: instance {record['id']!r} has {len(vector)} {method} values for length {record['length']}"
                )
            if not np.isfinite(vector).all():
                raise ValueError(
                    f"{path}: instance {record['id']!r} has non-finite {method} values; delete the file and rerun"
                )
            record[method] = vector
        if "probs" in record:
            record["probs"] = np.asarray(record["probs"], dtype=np.float64)
        records.append(record)
    return records


def read_explanations(paths) -> list[dict]:
    """One run's explanation files (`{method}.jsonl`, one path or several) -> one record per test
    instance with every file's keys; the files must list the same instances with the same lengths in
    the same order."""
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    if not paths:
        raise ValueError("no explanation files given")
    if len({p.parent for p in paths}) > 1:
        raise ValueError(
            f"explanation files of different runs given together: {sorted({str(p.parent) for p in paths})}"
        )
    joined: list[dict] | None = None
    for path in paths:
        records = _read_file(path)
        if joined is None:
            joined = records
            continue
        if [(r["id"], r["length"]) for r in records] != [(r["id"], r["length"]) for r in joined]:
            raise ValueError(
                f"{path}: its instances (ids, lengths, order) differ from {paths[0]}'s: the files are not of one run's test set"
            )
        for into, record in zip(joined, records):
            into.update(record)
    return joined


def explanation_sets(paths) -> dict[Path, list[Path]]:
    """A flat list of explanation files of several runs -> run directory -> its files, in first-seen order."""
    sets: dict[Path, list[Path]] = {}
    for path in map(Path, paths):
        sets.setdefault(path.parent, []).append(path)
    return sets
