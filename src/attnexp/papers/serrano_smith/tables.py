"""Serrano & Smith tables across models, and their claims (S&S §5–§6).

- `serrano_smith_erasure`: per run and top item choice, the fraction of negative ΔJS, the 2 × 2 flip
  table in percent and McNemar's test (the paper's flip tables).
- `serrano_smith_removal`: per run and ranking, % no-flip and the fraction / mass removed at the
  first flip (the numbers behind the removal box plots).
- `serrano_smith_flip_sooner`: per run, the share of instances where the gradient ranking flips
  the decision sooner than the attention ranking, beside the code-derived reference shares.

Claims (`attnexp.claims`), the findings on every seed of each model: §5, erasing the
highest-attention item rarely flips the decision (`serrano_smith.findings.rarely`, ours: S&S give no
number), flips it more often than erasing a random item, and mostly moves the output more than a random
item does (ΔJS > 0); §6, the paper's headline (gradient-ranked removal flips after a smaller fraction
than attention-ranked removal, also instance by instance); and per run the reference shares (reference
only: the values are derived from the authors' code). The §5 findings and the per-instance comparison
rest on the test instances of every seed (`attnexp.verdicts.Sample`, from the run's per-instance
tables); the box plots' median difference on one value per seed. A model that `serrano_smith.left_out`
keeps from training (D-SS-BUDGET) gets the same finding rows, `not comparable`, so that the scorecard
counts what the cut leaves out; so does a model with nothing to erase (every test instance has a
single item: one sentence for a HAN, one token for the rest), whose tables have no rows.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from attnexp import io
from attnexp.claims import MAJORITY, Setting, claim, finding, run_setting, share_span, write_claims
from attnexp.markdown import to_markdown
from attnexp.papers.serrano_smith.summary import flip_sooner, summarise_erasure, summarise_removal
from attnexp.spec import ModelSpec
from attnexp.verdicts import Sample, share

__all__ = [
    "read_runs",
    "erasure_table",
    "removal_table",
    "flip_sooner_table",
    "serrano_smith_claims",
    "left_out_claims",
    "write_tables",
]

PAPER = "Serrano & Smith 2019"
HEADLINE_SOURCE = "Serrano & Smith 2019, abstract and §6 (Figures: fraction removed before the decision flips) [P]"
HEADLINE_QUANTITIES = {
    "§6, removal box plots": "median fraction removed at the first flip: gradient minus attention ranking (< 0: gradient flips sooner)",
    "§6, per-instance comparison": "share of instances where the gradient ranking flips sooner minus where attention does",
}
ERASURE_TABLE = "§5, single-weight erasure"
ERASURE_SOURCE = (
    "Serrano & Smith 2019, abstract and §5 (decision flips and ΔJS of erasing the highest-attention item) [P]"
)
ERASURE_QUANTITIES = {
    "rarely": "share of instances whose decision erasing the highest-attention item flips",
    "random": "share of instances whose decision only the top item's erasure flips minus only a random item's",
    "delta_js": "share of instances where erasing the top item moves the output more than a random item (ΔJS > 0)",
}
FINDING_QUANTITIES = [(ERASURE_TABLE, q) for q in ERASURE_QUANTITIES.values()] + list(HEADLINE_QUANTITIES.items())
RARELY = "serrano_smith.findings.rarely"  # the config key of our threshold for S&S's "rarely"
LEFT_OUT = "not comparable: not trained, serrano_smith.left_out (D-SS-BUDGET)"
LEFT_OUT_SETTING = Setting(deviations=("D-SS-BUDGET",))


def nothing_to_erase(items: str) -> str:
    """The verdict of a model whose test instances each have one attended item (S&S §4 excludes
    them): whether a test instance has two or more is a property of the data, the same on every seed."""
    return f"not comparable: nothing to erase, every test instance has a single {items.removesuffix('s')} (S&S §4)"


def read_runs(erasure_paths, removal_paths, metrics_paths) -> list[dict]:
    """The per-run tables with what produced them (metrics.json: dataset, model, seed, spec,
    selection, embeddings, stand-ins). The three lists name the same runs in the same order."""
    if not len(erasure_paths) == len(removal_paths) == len(metrics_paths):
        raise ValueError(
            f"{len(erasure_paths)} erasure tables, {len(removal_paths)} removal tables, {len(metrics_paths)} models: expected one each per run"
        )
    runs = []
    for erasure, removal, metrics in zip(erasure_paths, removal_paths, metrics_paths):
        trained = io.read_json(metrics, sealed=True)
        provenance = trained["provenance"]
        runs.append(
            {
                "dataset": provenance["dataset"],
                "model": trained["model"],
                "seed": trained["seed"],
                "items": ModelSpec.from_record(trained["spec"]).attended,
                "setting": run_setting(trained),
                "accuracy": trained["test"]["accuracy"],
                "erasure": io.read_table(erasure, dtype={"id": str}),
                "removal": io.read_table(removal, dtype={"id": str}),
            }
        )
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
        rows.append(
            {
                "dataset": r["dataset"],
                "model": r["model"],
                "seed": r["seed"],
                "items": r["items"],
                **shares,
                "reference_dataset": reference if len(match) else None,
                "reference_gradient_sooner": float(match.iloc[0].gradient_flips_sooner) if len(match) else None,
            }
        )
    return pd.DataFrame(rows)


def _seeds_of(runs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """The runs of each (dataset, model), in seed order."""
    models: dict[tuple[str, str], list[dict]] = {}
    for r in sorted(runs, key=lambda r: (r["dataset"], r["model"], r["seed"])):
        models.setdefault((r["dataset"], r["model"]), []).append(r)
    return models


def _stands_for(dataset: str, reference_datasets: dict, fallback=None) -> str:
    """The S&S dataset ours stands for, where that is another one ("" otherwise)."""
    theirs = reference_datasets.get(dataset, fallback)
    return theirs if isinstance(theirs, str) and theirs != dataset else ""


def _top_erasure(erasure: pd.DataFrame) -> pd.DataFrame | None:
    """A run's single-weight erasures of its highest-attention item, one row per test instance (None: none)."""
    rows = erasure[erasure["top_by"] == "attention"] if "top_by" in erasure else erasure.iloc[:0]
    return rows if len(rows) else None


def _flip_share(erasure: pd.DataFrame) -> Sample | None:
    """The share of instances whose decision erasing the top item flips (`summarise_erasure`'s
    pct_both_flip + pct_only_top_flips, in [0, 1])."""
    top = _top_erasure(erasure)
    return None if top is None else share(top["flip_top"].astype(bool).to_numpy())


def _top_over_random(erasure: pd.DataFrame) -> Sample | None:
    """Only the top item's erasure flips minus only a random item's, as shares of the instances: the
    mean of flip_top − flip_random (pct_only_top_flips − pct_only_random_flips, in [0, 1])."""
    top = _top_erasure(erasure)
    if top is None:
        return None
    flips = top[["flip_top", "flip_random"]].astype(bool).to_numpy(dtype=float)
    return Sample({"difference": flips[:, 0] - flips[:, 1]}, lambda m: m["difference"])


def _moves_more(erasure: pd.DataFrame) -> Sample | None:
    """The share of instances whose ΔJS is not negative (1 − `summarise_erasure`'s negative_delta_js)."""
    top = _top_erasure(erasure)
    return None if top is None else share(~(top["delta_js"].astype(float).to_numpy() < 0))


def _gradient_sooner(removal: pd.DataFrame) -> Sample:
    """Per instance, +1 where the gradient ranking flips the decision sooner, −1 where attention does,
    0 on a tie (`summary.flip_sooner`'s rule: a ranking that flips beats one that never does); its mean
    is gradient_sooner − attention_sooner."""
    k = removal[removal.ranking.isin(["gradient", "attention"])].pivot(index="id", columns="ranking", values="removed")
    a, b = k["gradient"].astype(float), k["attention"].astype(float)
    gradient_wins = (a.notna() & (b.isna() | (a < b))).to_numpy(dtype=float)
    attention_wins = (b.notna() & (a.isna() | (b < a))).to_numpy(dtype=float)
    return Sample({"difference": gradient_wins - attention_wins}, lambda m: m["difference"])


def serrano_smith_claims(
    runs: list[dict],
    removal: pd.DataFrame,
    sooner: pd.DataFrame,
    published: pd.DataFrame,
    reference_datasets: dict | None = None,
    rarely: float = 0.1,
) -> list[dict]:
    """The claims of each model over its seeds (module docstring); `rarely`: our threshold for S&S's
    "rarely" (`serrano_smith.findings.rarely`), the share of instances whose decision erasing the
    top-attention item flips. `runs` carry their per-instance `erasure` and `removal` tables (the
    findings' instances); `removal`, `sooner`: the per-run summary tables.
    `reference_datasets`: our dataset -> the S&S dataset it stands for (config
    `serrano_smith.reference_datasets`), whether or not S&S's code gives a reference share for the model."""
    rows, reference_datasets = [], reference_datasets or {}
    for (dataset, model), seeds in _seeds_of(runs).items():
        if any(not len(r["erasure"]) for r in seeds):
            rows += _unmeasured_claims(
                dataset, model, len(seeds), nothing_to_erase(seeds[0]["items"]), seeds[0]["setting"]
            )
            continue

        def at(table: pd.DataFrame, r: dict) -> pd.DataFrame:
            return table[(table.dataset == dataset) & (table.model == model) & (table.seed == r["seed"])]

        removed = {r["seed"]: at(removal, r).set_index("ranking") for r in seeds}
        if not all({"gradient", "attention"} <= set(part.index) for part in removed.values()):
            continue
        shares = {r["seed"]: at(sooner, r).iloc[0] for r in seeds}
        # a stand-in dataset says which of S&S's it stands for (the scorecard names it as a miss's cause)
        theirs = _stands_for(dataset, reference_datasets, shares[seeds[0]["seed"]].reference_dataset)
        setting = replace(seeds[0]["setting"], stands_for=theirs)
        words = f"our {dataset} stands for S&S's {theirs}; " if theirs else ""

        def each(evidence) -> dict[int, object]:
            return {int(r["seed"]): evidence(r) for r in seeds}

        def median_gap(r: dict) -> float | None:
            gap = float(
                removed[r["seed"]].loc["gradient", "fraction_median"]
                - removed[r["seed"]].loc["attention", "fraction_median"]
            )
            return None if np.isnan(gap) else gap

        box, per_instance = HEADLINE_QUANTITIES
        erased = {"source": ERASURE_SOURCE, "setting": setting, "undefined": "no attention erasure"}
        headline = {"source": HEADLINE_SOURCE, "setting": setting}
        rows += [
            finding(
                PAPER,
                ERASURE_TABLE,
                dataset,
                model,
                ERASURE_QUANTITIES["rarely"],
                each(lambda r: _flip_share(r["erasure"])),
                threshold=rarely,
                side="below",
                rule=f"{words}erasing the highest-attention item rarely flips the decision (S&S: 'rarely')",
                parameter=RARELY,
                **erased,
            ),
            finding(
                PAPER,
                ERASURE_TABLE,
                dataset,
                model,
                ERASURE_QUANTITIES["random"],
                each(lambda r: _top_over_random(r["erasure"])),
                threshold=0,
                side="above",
                rule=f"{words}erasing the top item flips the decision more often than erasing a random item",
                **erased,
            ),
            finding(
                PAPER,
                ERASURE_TABLE,
                dataset,
                model,
                ERASURE_QUANTITIES["delta_js"],
                each(lambda r: _moves_more(r["erasure"])),
                threshold=0.5,
                side="above",
                rule=f"{words}erasing the top item mostly moves the output more than erasing a random item: the share exceeds 0.5",
                parameter=MAJORITY,
                span=share_span(0.5),
                **erased,
            ),
            finding(
                PAPER,
                box,
                dataset,
                model,
                HEADLINE_QUANTITIES[box],
                each(median_gap),
                threshold=0,
                side="below",
                rule=f"{words}the gradient ranking flips the decision after a smaller fraction of the items than attention (median over the flipping instances, one value per seed)",
                undefined="no instance flips under one of the rankings",
                **headline,
            ),
            finding(
                PAPER,
                per_instance,
                dataset,
                model,
                HEADLINE_QUANTITIES[per_instance],
                each(lambda r: _gradient_sooner(r["removal"])),
                threshold=0,
                side="above",
                rule=f"{words}the gradient ranking flips the decision sooner than attention on more instances than the reverse",
                **headline,
            ),
        ]
        for r in seeds:  # the code-derived reference shares: one number per model, per seed
            s = shares[r["seed"]]
            if not pd.isna(s.reference_gradient_sooner):
                source = published[published.dataset == s.reference_dataset].iloc[0].source
                rows.append(
                    claim(
                        PAPER,
                        "prob_predictor.py shares",
                        dataset,
                        model,
                        r["seed"],
                        f"share of instances where the gradient ranking flips sooner (reference: {s.reference_dataset})",
                        ours=float(s.gradient_sooner),
                        published=float(s.reference_gradient_sooner),
                        tolerance=None,
                        verdict="reference only",
                        source=source,
                        condition=words.removesuffix("; "),
                        setting=setting,
                    )
                )
    return rows


def _unmeasured_claims(dataset: str, model: str, n_seeds: int, verdict: str, setting: Setting) -> list[dict]:
    """The finding rows of a model the experiments could not measure, each `verdict` (`not comparable: …`),
    so that the scorecard counts what is missing and why."""
    return [
        claim(
            PAPER,
            table,
            dataset,
            model,
            None,
            quantity,
            ours=None,
            verdict=verdict,
            source=HEADLINE_SOURCE,
            setting=setting,
        )
        | {"seeds": n_seeds}
        for table, quantity in FINDING_QUANTITIES
    ]


def left_out_claims(left_out: list[dict]) -> list[dict]:
    """The claim rows of the models `serrano_smith.left_out` kept from training ({dataset, model,
    seed}): the findings per model, each `not comparable` (D-SS-BUDGET)."""
    seeds = {(r["dataset"], r["model"]): set() for r in left_out}
    for r in left_out:
        seeds[(r["dataset"], r["model"])].add(int(r["seed"]))
    return [
        row
        for (dataset, model), s in sorted(seeds.items())
        for row in _unmeasured_claims(dataset, model, len(s), LEFT_OUT, LEFT_OUT_SETTING)
    ]


def write_tables(
    erasure_paths,
    removal_paths,
    metrics_paths,
    published_path,
    *,
    reference_datasets: dict,
    out: dict,
    left_out: list[dict] = (),
    rarely: float = 0.1,
) -> dict[str, pd.DataFrame]:
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
    rows = serrano_smith_claims(runs, tables["removal"], tables["flip_sooner"], published, reference_datasets, rarely)
    rows += left_out_claims(list(left_out))
    write_claims(out["claims"], rows)
    return tables
