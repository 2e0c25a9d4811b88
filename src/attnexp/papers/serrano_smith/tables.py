"""Serrano & Smith tables across models, and their claims (S&S §5–§6).

- `serrano_smith_erasure`: per run and top item choice, the fraction of negative ΔJS, the 2 × 2 flip
  table in percent and McNemar's test (the paper's flip tables).
- `serrano_smith_removal`: per run and ranking, % no-flip and the fraction / mass removed at the
  first flip (the numbers behind the removal box plots).
- `serrano_smith_flip_sooner`: per run, the share of instances where the gradient ranking flips
  the decision sooner than the attention ranking, beside the code-derived reference shares.

Claims (`attnexp.claims`), per run: the paper's headline (gradient-ranked removal flips after a
smaller fraction than attention-ranked removal), the reference shares (reference only: the values
are derived from the authors' code), and their ordering (FLAN above HAN for the same encoder). A
model that `serrano_smith.left_out` keeps from training (D-SS-BUDGET) gets the same claim rows,
`not comparable`, so that the scorecard counts what the cut leaves out.
"""

from __future__ import annotations


from dataclasses import replace

import pandas as pd

from attnexp import io
from attnexp.claims import Setting, claim, run_setting, write_claims
from attnexp.markdown import to_markdown
from attnexp.papers.serrano_smith.experiment import flip_sooner, summarise_erasure, summarise_removal
from attnexp.spec import ModelSpec

__all__ = ["read_runs", "erasure_table", "removal_table", "flip_sooner_table", "serrano_smith_claims", "left_out_claims", "write_tables"]

PAPER = "Serrano & Smith 2019"
HEADLINE_SOURCE = "Serrano & Smith 2019, abstract and §6 (Figures: fraction removed before the decision flips) [P]"
HEADLINE_QUANTITIES = {
    "§6, removal box plots": "median fraction removed at the first flip: gradient minus attention ranking (< 0: gradient flips sooner)",
    "§6, per-instance comparison": "share of instances where the gradient ranking flips sooner minus where attention does",
}
ORDERING_TABLE = "prob_predictor.py shares (ordering)"
ORDERING_QUANTITY = "gradient-sooner share, FLAN minus HAN (> 0: FLAN's gradient flips sooner more often)"
LEFT_OUT = "not comparable: not trained, serrano_smith.left_out (D-SS-BUDGET)"
LEFT_OUT_SETTING = Setting(deviations=("D-SS-BUDGET",))


def read_runs(erasure_paths, removal_paths, metrics_paths) -> list[dict]:
    """The per-run tables with what produced them (metrics.json: dataset, model, seed, spec,
    selection, embeddings, stand-ins). The three lists name the same runs in the same order."""
    if not len(erasure_paths) == len(removal_paths) == len(metrics_paths):
        raise ValueError(f"{len(erasure_paths)} erasure tables, {len(removal_paths)} removal tables, {len(metrics_paths)} models: expected one each per run")
    runs = []
    for erasure, removal, metrics in zip(erasure_paths, removal_paths, metrics_paths):
        trained = io.read_json(metrics, sealed=True)
        provenance = trained["provenance"]
        runs.append({
            "dataset": provenance["dataset"], "model": trained["model"], "seed": trained["seed"], "items": ModelSpec.from_record(trained["spec"]).attended,
            "setting": run_setting(trained),
            "accuracy": trained["test"]["accuracy"],
            "erasure": io.read_table(erasure, dtype={"id": str}), "removal": io.read_table(removal, dtype={"id": str}),
        })
    return sorted(runs, key=lambda r: (r["dataset"], r["model"], r["seed"]))


def _per_run(runs: list[dict], table: str, summarise) -> pd.DataFrame:
    """`summarise` of each run's `table`, the run's keys in front."""
    keys = ["dataset", "model", "seed", "items"]
    parts = [summarise(r[table]).assign(**{k: r[k] for k in keys}) for r in runs if len(r[table])]
    if not parts:
        return pd.DataFrame(columns=keys)
    summary = pd.concat(parts, ignore_index=True)
    return summary[keys + [c for c in summary.columns if c not in keys]]


def erasure_table(runs: list[dict]) -> pd.DataFrame:
    return _per_run(runs, "erasure", summarise_erasure)


def removal_table(runs: list[dict]) -> pd.DataFrame:
    return _per_run(runs, "removal", summarise_removal)


def flip_sooner_table(runs: list[dict], published: pd.DataFrame, reference_datasets: dict) -> pd.DataFrame:
    """Per run: gradient-sooner / attention-sooner / tie shares, beside the reference share of the
    S&S dataset our dataset stands for (`reference_datasets`) for the same model."""
    rows = []
    for r in runs:
        if not len(r["removal"]):
            continue
        shares = flip_sooner(r["removal"])
        reference = reference_datasets.get(r["dataset"])
        match = published[(published.dataset == reference) & (published.model == r["model"])]
        rows.append({
            "dataset": r["dataset"], "model": r["model"], "seed": r["seed"], "items": r["items"], **shares,
            "reference_dataset": reference if len(match) else None,
            "reference_gradient_sooner": float(match.iloc[0].gradient_flips_sooner) if len(match) else None,
        })
    return pd.DataFrame(rows)


def serrano_smith_claims(runs: list[dict], removal: pd.DataFrame, sooner: pd.DataFrame, published: pd.DataFrame, reference_datasets: dict | None = None) -> list[dict]:
    """The claims of each run (module docstring). `reference_datasets`: our dataset -> the S&S dataset
    it stands for (config `serrano_smith.reference_datasets`), whether or not S&S's code gives a
    reference share for the run's model."""
    rows, reference_datasets = [], reference_datasets or {}
    for r in runs:
        part = removal[(removal.dataset == r["dataset"]) & (removal.model == r["model"]) & (removal.seed == r["seed"])].set_index("ranking")
        if not {"gradient", "attention"} <= set(part.index):
            continue
        difference = float(part.loc["gradient", "fraction_median"] - part.loc["attention", "fraction_median"])
        s = sooner[(sooner.dataset == r["dataset"]) & (sooner.model == r["model"]) & (sooner.seed == r["seed"])].iloc[0]
        # a stand-in dataset says which of S&S's it stands for (the scorecard names it as a miss's cause)
        theirs = reference_datasets.get(r["dataset"], s.reference_dataset)
        stands_for = isinstance(theirs, str) and theirs != r["dataset"]
        condition = f"our {r['dataset']} stands for S&S's {theirs}" if stands_for else ""
        setting = replace(r["setting"], stands_for=theirs if stands_for else "")
        box, per_instance = HEADLINE_QUANTITIES
        rows.append(claim(
            PAPER, box, r["dataset"], r["model"], r["seed"], HEADLINE_QUANTITIES[box],
            difference, verdict="holds" if difference < 0 else "does not hold", source=HEADLINE_SOURCE, condition=condition, setting=setting,
        ))
        rows.append(claim(
            PAPER, per_instance, r["dataset"], r["model"], r["seed"], HEADLINE_QUANTITIES[per_instance],
            float(s.gradient_sooner - s.attention_sooner), verdict="holds" if s.gradient_sooner > s.attention_sooner else "does not hold",
            source=HEADLINE_SOURCE, condition=condition, setting=setting,
        ))
        if not pd.isna(s.reference_gradient_sooner):
            source = published[published.dataset == s.reference_dataset].iloc[0].source
            rows.append(claim(
                PAPER, "prob_predictor.py shares", r["dataset"], r["model"], r["seed"],
                f"share of instances where the gradient ranking flips sooner (reference: {s.reference_dataset})",
                float(s.gradient_sooner), float(s.reference_gradient_sooner), None, "reference only", source, condition, setting,
            ))
    rows += _ordering_claims(sooner, published)
    return rows


def _ordering_claims(sooner: pd.DataFrame, published: pd.DataFrame) -> list[dict]:
    """FLAN-x above HAN-x in the gradient-sooner share, for each encoder x with both models, as in
    the reference shares of the dataset ours stands for."""
    rows = []
    for (dataset, seed), part in sooner.groupby(["dataset", "seed"], sort=True):
        shares = part.set_index("model")
        for encoder in ("rnn", "conv", "none"):
            han, flan = f"han-{encoder}", f"flan-{encoder}"
            if han not in shares.index or flan not in shares.index:
                continue
            ours = float(shares.loc[flan, "gradient_sooner"] - shares.loc[han, "gradient_sooner"])
            reference = shares.loc[flan, "reference_dataset"]
            ref = published[published.dataset == reference].set_index("model") if isinstance(reference, str) else pd.DataFrame()
            published_difference = float(ref.loc[flan, "gradient_flips_sooner"] - ref.loc[han, "gradient_flips_sooner"]) if {han, flan} <= set(ref.index) else None
            rows.append(claim(
                PAPER, ORDERING_TABLE, dataset, f"{flan} vs {han}", int(seed), ORDERING_QUANTITY,
                ours, published_difference, None, "holds" if ours > 0 else "does not hold",
                published.iloc[0].source if published_difference is not None else HEADLINE_SOURCE,
                (f"our {dataset} stands for S&S's {reference}" if reference != dataset else f"reference: {reference}")
                if published_difference is not None else "no reference share for this dataset",
                Setting(stands_for=reference if published_difference is not None and reference != dataset else ""),
            ))
    return rows


def left_out_claims(left_out: list[dict], trained: list[dict]) -> list[dict]:
    """The claim rows of the runs `serrano_smith.left_out` kept from training ({dataset, model, seed}),
    each `not comparable` (D-SS-BUDGET): the two headline claims per model, and the FLAN-over-HAN
    ordering of each encoder whose HAN or FLAN model is left out while the dataset has the other
    trained or left out. `trained`: the runs that were trained ({dataset, model, seed})."""
    rows = [
        claim(PAPER, table, r["dataset"], r["model"], int(r["seed"]), quantity, None, verdict=LEFT_OUT, source=HEADLINE_SOURCE, setting=LEFT_OUT_SETTING)
        for r in sorted(left_out, key=lambda r: (r["dataset"], r["seed"]))
        for table, quantity in HEADLINE_QUANTITIES.items()
    ]
    missing = {(r["dataset"], r["model"], int(r["seed"])) for r in left_out}
    present = missing | {(r["dataset"], r["model"], int(r["seed"])) for r in trained}
    for dataset, seed in sorted({(d, s) for d, _, s in missing}):
        for encoder in ("rnn", "conv", "none"):
            han, flan = (dataset, f"han-{encoder}", seed), (dataset, f"flan-{encoder}", seed)
            if {han, flan} <= present and {han, flan} & missing:
                rows.append(claim(PAPER, ORDERING_TABLE, dataset, f"{flan[1]} vs {han[1]}", seed, ORDERING_QUANTITY, None, verdict=LEFT_OUT, source=HEADLINE_SOURCE,
                                  setting=LEFT_OUT_SETTING))
    return rows


def write_tables(erasure_paths, removal_paths, metrics_paths, published_path, reference_datasets: dict, out: dict,
                 left_out: list[dict] = ()) -> dict[str, pd.DataFrame]:
    """Every S&S summary table as CSV and Markdown, and the claims (with `left_out_claims` for the
    runs in `left_out`); returns the tables."""
    runs = read_runs(erasure_paths, removal_paths, metrics_paths)
    published = pd.read_csv(published_path)
    tables = {
        "erasure": erasure_table(runs),
        "removal": removal_table(runs),
        "flip_sooner": flip_sooner_table(runs, published, reference_datasets),
    }
    titles = {
        "erasure": "# Serrano & Smith §5: single-weight erasure\n\nPer run and choice of the top item: the fraction of instances with ΔJS < 0, the flip contingency table (% of instances: top item / random item flips the decision) and McNemar's exact test.\n\n",
        "removal": "# Serrano & Smith §6: removal until the decision flips\n\nPer run and ranking: % of instances that never flip, and over the flipping ones the fraction of items (and attention mass) removed at the first flip. `random` pools every permutation.\n\n",
        "flip_sooner": "# Serrano & Smith §6: which ranking flips the decision sooner\n\nShare of instances where removing by the gradient ranking flips the decision after fewer items than by attention (or flips where attention never does), beside the code-derived reference share of the S&S dataset ours stands for (from the authors' code; sanity targets only).\n\n",
    }
    for name, table in tables.items():
        io.write_csv(out[f"{name}_csv"], table, seal=True)
        io.write_text(out[f"{name}_md"], titles[name] + to_markdown(table.round(4)))
    rows = serrano_smith_claims(runs, tables["removal"], tables["flip_sooner"], published, reference_datasets) + left_out_claims(list(left_out), runs)
    write_claims(out["claims"], rows)
    return tables
