"""Mohankumar et al. (2020)'s measures of the zoo, per trained model: test accuracy, conicity of the
attended states (`metrics.json`), and per test instance the Pearson correlation and the Jensen-Shannon
divergence between attention and |gradient| / |integrated gradients| (each normalised to sum to 1, as
their code compares them), mean ± sd over the instances (instances of one token have no correlation
and are left out of it).

Claims (`zoo_claims`), beside `references/mohankumar_2020.csv`:

- per seed, each published number (Mohankumar et al. Tables 2 and 4) against ours. The tolerance of a
  quantity is the largest gap between the paper and Bouwman et al. (2021)'s rerun of the authors' own
  code over the datasets the file holds: how far the same code moved when run again;
- the paper's findings, over the seeds (each seed's zoo model against the vanilla BiLSTM of the same
  seed, one value per seed: the table holds per-run summaries only): the diversity and orthogonal
  LSTMs' conicity lies below the vanilla LSTM's, their attention correlates better with gradients, and
  their accuracy stays within the performance tolerance (`claims.performance_tolerance`, ours: the paper
  says "comparable").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import pearsonr

from attnexp import io
from attnexp.claims import Setting, claim, finding, run_setting, write_claims
from attnexp.explanations import explanation_sets, ig_converged, importance, read_explanations, unconverged_count
from attnexp.markdown import to_markdown
from attnexp.metrics import jsd
from attnexp.papers.zoo import MEASURES, VANILLA, ZOO
from attnexp.plan import RunKey

__all__ = ["run_measures", "zoo_table", "tolerances", "zoo_claims", "write_tables"]

PAPER = ZOO.citation  # the claims' `paper` value, its descriptor's anchor
ZOO_DEVIATION = "D-ZOO-BI"


def _distribution(scores: np.ndarray) -> np.ndarray:
    total = scores.sum()
    return scores / total if total > 0 else np.full(len(scores), 1 / len(scores))


def run_measures(metrics_path: str | Path, explanation_paths: list[str | Path]) -> dict:
    """One trained model's row: accuracy, conicity, and per measure the mean and sd over its test
    instances of Pearson r and JSD between attention and the measure's magnitudes."""
    trained = io.read_json(metrics_path, sealed=True)
    if "conicity" not in trained:
        raise ValueError(f"{metrics_path}: no `conicity` (a flat model's metrics.json records its test conicity)")
    row = {"accuracy": trained["test"]["accuracy"], "conicity": trained["conicity"]["test"]}
    records = read_explanations(explanation_paths)
    for measure in MEASURES:
        pearson, divergence = [], []
        for record in records:
            attention, scores = np.asarray(record["attention"]), importance(record, measure)
            pair = (torch.from_numpy(_distribution(v).astype(np.float64)) for v in (attention, scores))
            divergence.append(float(jsd(*pair)))
            if len(attention) > 1 and np.ptp(attention) > 0 and np.ptp(scores) > 0:
                pearson.append(pearsonr(attention, scores).statistic)
        for name, values in (("pearson", pearson), ("jsd", divergence)):
            row[f"{name}_{measure}"] = float(np.mean(values)) if values else math.nan
            row[f"{name}_{measure}_sd"] = float(np.std(values)) if values else math.nan
    row["instances"] = len(records)
    # the IG columns use every instance as it is; this says how many missed the completeness tolerance
    unconverged = unconverged_count([ig_converged(r) for r in records])  # None: no record carries the flag
    row["ig_unconverged"] = math.nan if unconverged is None else unconverged / len(records)
    return row


def zoo_table(metrics_paths: list[str | Path], explanation_paths: list[str | Path]) -> pd.DataFrame:
    """Each run's metrics.json and its explanation files (attention, gradient, ig) -> one row per run."""
    by_run = {RunKey.of_file(paths[0]): paths for paths in explanation_sets(explanation_paths).values()}
    rows = []
    for path in metrics_paths:
        run = RunKey.of_file(path)
        if run not in by_run:
            raise ValueError(f"{path}: no explanation files of {run.dataset}/{run.model}/seed{run.seed} were given")
        rows.append({"dataset": run.dataset, "model": run.model, "seed": run.seed, **run_measures(path, by_run[run])})
    return pd.DataFrame(rows)


def tolerances(reference: pd.DataFrame) -> dict[str, float]:
    """Per quantity, the largest |published − rerun| of the reference file: how far Bouwman et al.'s
    rerun of the authors' code moved from the paper."""
    gaps = (reference["published"] - reference["rerun"]).abs()
    return {q: round(float(g.max()), 4) for q, g in gaps.groupby(reference["quantity"]) if g.notna().any()}


def zoo_claims(
    table: pd.DataFrame, reference: pd.DataFrame, settings: dict, performance_tolerance: float
) -> list[dict]:
    """The published numbers per seed, and the paper's findings over the seeds (module docstring).
    `settings`: (dataset, model, seed) -> the run's `Setting`."""
    tolerance = tolerances(reference)
    rows = []
    for r in reference.dropna(subset=["published"]).itertuples():
        runs = table[(table["dataset"] == r.dataset) & (table["model"] == r.model)]
        if runs.empty:
            continue
        for run in runs.itertuples():
            spread = "" if pd.isna(r.published_sd) else f" (published sd over instances {r.published_sd})"
            rows.append(
                claim(
                    PAPER,
                    "Table 2" if r.quantity in ("accuracy", "conicity") else "Table 4",
                    r.dataset,
                    r.model,
                    int(run.seed),
                    r.quantity,
                    ours=round(float(getattr(run, r.quantity)), 4),
                    published=float(r.published),
                    tolerance=tolerance.get(r.quantity),
                    source=r.source,
                    condition=f"{r.paper_model} of the paper; tolerance: the largest paper-rerun gap of this quantity{spread}",
                    setting=settings[(run.dataset, run.model, int(run.seed))].deviating(ZOO_DEVIATION),
                )
            )
    for dataset, group in table.groupby("dataset", sort=False):
        vanilla = group[group["model"] == VANILLA].set_index("seed")
        if vanilla.empty:
            continue
        for model, runs in group[group["model"] != VANILLA].groupby("model", sort=False):
            runs = runs.set_index("seed")
            seeds = [s for s in runs.index if s in vanilla.index]
            setting = settings[(dataset, model, int(seeds[0]))].deviating(ZOO_DEVIATION) if seeds else Setting()

            def compare(quantity: str, sign: int, shown: str, rule: str, threshold: float = 0, **keywords) -> dict:
                per_seed = {int(s): sign * float(runs.at[s, quantity] - vanilla.at[s, quantity]) for s in seeds}
                return finding(
                    PAPER,
                    "§5 (findings)",
                    dataset,
                    model,
                    shown,
                    per_seed,
                    threshold=threshold,
                    side="above",
                    rule=f"{rule} (each seed against {VANILLA} of the same seed)",
                    source="Mohankumar et al. 2020 §5.2 (conicity, accuracy) and §5.5 (agreement with gradients)",
                    setting=setting,
                    **keywords,
                )

            rows.append(
                compare(
                    "conicity",
                    -1,
                    f"conicity({VANILLA}) - conicity(model)",
                    "the model's attended states have a lower conicity than the vanilla LSTM's",
                )
            )
            rows.append(
                compare(
                    "pearson_gradient",
                    1,
                    f"pearson(attention, |gradient|): model - {VANILLA}",
                    "the model's attention agrees better with the gradient than the vanilla LSTM's",
                )
            )
            rows.append(
                compare(
                    "accuracy",
                    1,
                    f"test accuracy: model - {VANILLA}",
                    "the model's accuracy is comparable to the vanilla LSTM's: at most the performance tolerance below it",
                    threshold=-performance_tolerance,
                    parameter="claims.performance_tolerance",
                )
            )
    return rows


def _markdown(table: pd.DataFrame, tolerance: dict[str, float]) -> str:
    shown = table.copy()
    for key in ("accuracy", "conicity", "ig_unconverged"):  # 3 decimals, as every other table of the project
        shown[key] = ["" if math.isnan(v) else f"{v:.3f}" for v in shown[key].astype(float)]
    for measure in MEASURES:
        for name in ("pearson", "jsd"):
            key = f"{name}_{measure}"
            shown[key] = ["" if math.isnan(m) else f"{m:.3f} ± {s:.3f}" for m, s in zip(shown[key], shown[f"{key}_sd"])]
            shown = shown.drop(columns=f"{key}_sd")
    basis = ", ".join(f"{q} {t}" for q, t in tolerance.items())
    return (
        "# The zoo: Mohankumar et al. 2020's measures\n\n"
        "Per trained model: test accuracy, conicity of the attended states (the mean |cos| of each state with the "
        "instance's mean state, averaged over the test instances), and Pearson r and JSD between attention and "
        "|gradient| / |integrated gradients| (each normalised to sum to 1), mean ± sd over test instances; "
        "ig_unconverged: the share of those instances whose integrated gradients missed the completeness tolerance "
        "(`explain.ig_tolerance`; their scores are used as they are). "
        f"`{VANILLA}` is the paper's vanilla LSTM. Published values and the tolerance of each quantity (the largest "
        f"gap between the paper and Bouwman et al. 2021's rerun of the authors' code: {basis}) are in "
        "references/mohankumar_2020.csv; the comparisons are in results/tables/claims.csv.\n\n" + to_markdown(shown)
    )


def write_tables(
    metrics_paths: list[str | Path],
    explanation_paths: list[str | Path],
    reference_path: str | Path,
    out,
    performance_tolerance: float,
) -> pd.DataFrame:
    """The zoo's table (out["csv"], out["md"]) and claims (out["claims"])."""
    table = zoo_table(metrics_paths, explanation_paths)
    reference = io.read_table(reference_path, sealed=False)  # a committed reference file
    settings = {
        (run.dataset, run.model, run.seed): run_setting(io.read_json(path, sealed=True))
        for path in metrics_paths
        for run in [RunKey.of_file(path)]
    }
    io.write_csv(out["csv"], table, seal=True)
    io.write_text(out["md"], _markdown(table, tolerances(reference)))
    write_claims(out["claims"], zoo_claims(table, reference, settings, performance_tolerance))
    return table
