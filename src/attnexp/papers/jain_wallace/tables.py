"""Jain & Wallace tables across models: Table 2 beside the published values (the paper's Table 2),
every model's correlation summary, and the ground-truth table of the generated datasets.

Table 2 compares like with like (D-TARGETS): only test-selected models get a verdict, and a cell is
`within` when our mean τ is within `tolerance[encoder]["mean"]` of J&W's and our Sig. Frac. within
`tolerance[encoder]["sig_frac"]`: per encoder, the largest gap between J&W's two repository states
(`tolerances`). Published rows are matched to ours by label, not class id (D-SNLI).

The authors' repository also committed the mean τ over all test instances of their dev-selected
BiLSTM + tanh retrain for each pair, τ(|gradient|, LOO) included (`references/jain_wallace_mean_tau.csv`).
Those are compared with the BiLSTM's `tolerance["lstm"]["mean"]` whatever our selection: the tolerance is the largest gap
between the authors' own test- and dev-selected models in a mean τ.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from attnexp import io
from attnexp.claims import Setting, claim, numeric_verdict, run_setting, write_claims
from attnexp.data.documents import read_records
from attnexp.explanations import explanation_sets, read_explanations
from attnexp.markdown import to_markdown
from attnexp.metrics import SCIPY_VERSION
from attnexp.papers.jain_wallace.correlations import summarise_correlations
from attnexp.papers.jain_wallace.findings import correlation_claims, finding_claims
from attnexp.papers.jain_wallace.ground_truth import ground_truth_table, summarise_ground_truth
from attnexp.plan import RunKey
from attnexp.spec import ModelSpec

__all__ = [
    "TABLE2_COLUMNS",
    "table2",
    "table2_markdown",
    "table2_claims",
    "overall_means",
    "mean_tau_claims",
    "write_tables",
    "acceptance",
    "write_ground_truth",
]

# Table 2 columns: (measure pair, encoder of the `<encoder>-tanh` model)
TABLE2_COLUMNS = {
    "gradient_lstm": ("attention~gradient", "lstm"),
    "gradient_average": ("attention~gradient", "average"),
    "loo_lstm": ("attention~loo", "lstm"),
    "loo_average": ("attention~loo", "average"),
}
MARKS = {"within": "✓", "outside": "✗", "not_comparable": "≠ selection"}


def _verdict(ours, published, select_on: str, tolerance: dict) -> str | None:
    """`tolerance`: the column's encoder's {mean, sig_frac}."""
    if select_on != "test":
        return "not_comparable"  # J&W selected on the test set (D-SEL, D-TARGETS)
    if pd.isna(ours.mean):
        return None
    close = (
        abs(ours.mean - published["mean"]) <= tolerance["mean"]
        and abs(ours.sig_frac - published["sig_frac"]) <= tolerance["sig_frac"]
    )
    return "within" if close else "outside"


def table2(summaries: list[dict], published: pd.DataFrame, tolerance: dict) -> pd.DataFrame:
    """Long format, one row per dataset x group x column with ours beside J&W's value.
    `summaries`: per model {dataset, model, seed, spec (its record), select_on, embeddings, stand_ins
    (optional, default "none"), loo_op, classes (label of each class index), summary (`summarise_correlations`)}."""
    rows = []
    for run in sorted(summaries, key=lambda r: (r["dataset"], r["model"], r["seed"])):
        spec = run["spec"]
        if spec["attention"] != "tanh":
            continue
        for column, (pair, column_encoder) in TABLE2_COLUMNS.items():
            if spec["encoder"] != column_encoder:
                continue
            for s in run["summary"][run["summary"]["pair"] == pair].itertuples():
                label = s.group if s.group == "Overall" else str(run["classes"][int(s.group)])
                pub = published[
                    (published.dataset == run["dataset"]) & (published.label == label) & (published.column == column)
                ]
                row = {
                    "dataset": run["dataset"],
                    "group": s.group,
                    "label": label,
                    "column": column,
                    "model": run["model"],
                    "seed": run["seed"],
                    "select_on": run["select_on"],
                    "embeddings": run["embeddings"],
                    "stand_ins": run.get("stand_ins", "none"),
                    "loo_op": run["loo_op"],
                    "scipy": SCIPY_VERSION,
                    "n": s.n,
                    "n_undefined": s.n_undefined,
                    "mean": round(s.mean, 4),
                    "std": round(s.std, 4),
                    "sig_frac": round(s.sig_frac, 4),
                    "published_class": None,
                    "published_mean": None,
                    "published_std": None,
                    "published_sig_frac": None,
                    "source": None,
                    "verdict": None,
                }
                if len(pub):
                    p = pub.iloc[0]
                    row |= {
                        "published_class": p["class"],
                        "published_mean": p["mean"],
                        "published_std": p["std"],
                        "published_sig_frac": p["sig_frac"],
                        "source": p["source"],
                        "verdict": _verdict(s, p, run["select_on"], tolerance[column_encoder]),
                    }
                rows.append(row)
    return pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "group",
            "label",
            "column",
            "model",
            "seed",
            "select_on",
            "embeddings",
            "stand_ins",
            "loo_op",
            "scipy",
            "n",
            "n_undefined",
            "mean",
            "std",
            "sig_frac",
            "published_class",
            "published_mean",
            "published_std",
            "published_sig_frac",
            "source",
            "verdict",
        ],
    )


def table2_markdown(table: pd.DataFrame, tolerance: dict) -> str:
    """The paper's layout: rows dataset x predicted class, cells "mean ± std | Sig. Frac." for ours,
    then J&W's value and the verdict."""
    sources = {s: i + 1 for i, s in enumerate(dict.fromkeys(table["source"].dropna()))}
    rows = []
    for (dataset, _group, seed), part in table.groupby(["dataset", "group", "seed"], sort=True):
        first = part.iloc[0]
        row = {
            "dataset": dataset,
            "class": first.label,
            "seed": seed,
            "select_on": first.select_on,
            "embeddings": first.embeddings,
            "loo_op": first.loo_op,
        }
        for column in TABLE2_COLUMNS:
            cell = part[part.column == column]
            if cell.empty:
                row[column] = None
                continue
            c = cell.iloc[0]
            text = f"{c['mean']:.2f} ± {c['std']:.2f} | {c['sig_frac']:.2f}"
            if not pd.isna(c.published_mean):
                mark = MARKS.get(c.verdict, "?")
                text += f" (J&W {c.published_mean:.2f} ± {c.published_std:.2f} | {c.published_sig_frac:.2f}[{sources[c.source]}] {mark})"
            row[column] = text
        rows.append(row)
    header = (
        "# Jain & Wallace Table 2: Kendall τ of attention vs gradient / leave-one-out, `tanh` attention\n\n"
        'Cells: ours "mean ± std | Sig. Frac." by predicted class (our label), then J&W\'s published value. '
        f"✓ = means within {tolerance['lstm']['mean']} (BiLSTM) / {tolerance['average']['mean']} (Average) and Sig. Frac. within "
        f"{tolerance['lstm']['sig_frac']} / {tolerance['average']['sig_frac']}, the spread of J&W's own two repository states "
        "(D-TARGETS, jain_wallace_tolerances.md); "
        f'"≠ selection" = our checkpoint was not selected on the test set as J&W\'s were. scipy {SCIPY_VERSION} (D-TAU).\n\n'
    )
    notes = "\n".join(f"[{i}] {s}" for s, i in sources.items())
    return header + to_markdown(pd.DataFrame(rows)) + ("\n" + notes + "\n" if notes else "")


def table2_claims(table: pd.DataFrame, tolerance: dict) -> list[dict]:
    """Every Table 2 cell with a published value as two claim rows (mean and Sig. Frac., each with
    its encoder's D-TARGETS tolerance); dev-selected runs are `not comparable` (D-SEL)."""
    rows = []
    for c in table.dropna(subset=["published_mean"]).itertuples():
        pair, encoder = TABLE2_COLUMNS[c.column]
        # what the scorecard reads a miss's cause from: selection, embeddings, stand-in files, a non-J&W LOO operation
        loo_deviates = pair == "attention~loo" and c.loo_op != "delete"
        loo_op = f"{c.loo_op} (D-LOO-OP; J&W: delete)" if loo_deviates else c.loo_op
        why = None if c.select_on == "test" else f"our checkpoint was selected on {c.select_on}, J&W's on test (D-SEL)"
        setting = Setting(c.select_on, c.embeddings, c.stand_ins).deviating(
            "D-LOO-OP" if loo_deviates else None, "D-SEL" if why else None
        )
        for quantity, ours, published, tol in (
            ("mean", c.mean, c.published_mean, tolerance[encoder]["mean"]),
            ("sig_frac", c.sig_frac, c.published_sig_frac, tolerance[encoder]["sig_frac"]),
        ):
            rows.append(
                claim(
                    "Jain & Wallace 2019",
                    "Table 2",
                    c.dataset,
                    c.model,
                    int(c.seed),
                    f"{quantity} tau({pair.replace('~', ', ')}), class {c.label}",
                    ours=float(ours),
                    published=float(published),
                    tolerance=tol,
                    verdict=numeric_verdict(float(ours), float(published), tol, why),
                    source=c.source,
                    condition=f"loo_op={loo_op}; scipy {c.scipy}",
                    setting=setting,
                )
            )
    return rows


def overall_means(correlations: pd.DataFrame) -> dict[str, float]:
    """Mean τ per pair over every test instance with a defined τ (all classes together)."""
    defined = correlations.dropna(subset=["tau"])
    return {pair: float(part["tau"].mean()) for pair, part in defined.groupby("pair", sort=True)}


def mean_tau_claims(runs: list[dict], published: pd.DataFrame, tolerance: float) -> list[dict]:
    """One claim per run and pair with a committed mean τ of J&W's (`published`: dataset, model, pair,
    mean, select_on, epochs, hidden_size, source). `runs`: {dataset, model, seed, epochs, hidden_size, select_on, embeddings,
    stand_ins, loo_op, means (`overall_means`)}."""
    rows = []
    for run in sorted(runs, key=lambda r: (r["dataset"], r["model"], r["seed"])):
        theirs = published[(published.dataset == run["dataset"]) & (published.model == run["model"])]
        for p in theirs.itertuples():
            if p.pair not in run["means"]:
                continue
            loo_deviates = "loo" in p.pair and run["loo_op"] != "delete"
            loo_op = f"{run['loo_op']} (D-LOO-OP; J&W: delete)" if loo_deviates else run["loo_op"]
            # the retrain behind a committed mean may differ from our model in epochs or size (bAbI's: hidden size 32)
            longer = not pd.isna(p.epochs) and int(p.epochs) != run["epochs"]
            resized = (
                not pd.isna(p.hidden_size)
                and run.get("hidden_size") is not None
                and int(p.hidden_size) != run["hidden_size"]
            )
            epochs = f", {int(p.epochs)} epochs where ours trained {run['epochs']} (D-BABI)" if longer else ""
            epochs += (
                f", hidden size {int(p.hidden_size)} where ours has {run['hidden_size']} (D-BABI)" if resized else ""
            )
            setting = Setting(run["select_on"], run["embeddings"], run["stand_ins"]).deviating(
                "D-LOO-OP" if loo_deviates else None, "D-BABI" if longer or resized else None
            )
            ours = round(run["means"][p.pair], 4)
            rows.append(
                claim(
                    "Jain & Wallace 2019",
                    "mean tau, all test instances",
                    run["dataset"],
                    run["model"],
                    int(run["seed"]),
                    f"mean tau({p.pair.replace('~', ', ')}), all classes",
                    ours=ours,
                    published=float(p.mean),
                    tolerance=tolerance,
                    source=p.source,
                    condition=f"loo_op={loo_op}; J&W's value: {p.select_on}-selected{epochs}; scipy {SCIPY_VERSION}",
                    setting=setting,
                )
            )
    return rows


def write_tables(
    correlation_paths,
    metrics_paths,
    published_path,
    *,
    significance: float,
    tolerance: dict,
    loo_op: str,
    out: dict,
    mean_tau_path=None,
    permutation_paths=(),
    adversarial_paths=(),
    findings: dict | None = None,
) -> pd.DataFrame:
    """Every model's correlation summary (`jain_wallace_correlations`), Table 2 beside J&W's numbers
    (CSV and Markdown) and its claim rows, then the claims on J&W's committed mean τ (`mean_tau_path`)
    and, given `findings` (`jain_wallace.findings`), the claims on J&W's correlation findings (each
    run's mean τ per pair, `findings.correlation_claims`) and, from the permutation and adversarial
    tables, on their permutation and adversarial findings (`findings.finding_claims`). The path lists
    name the same runs in the same order. Returns the summary (for the encoder figure)."""
    if len(correlation_paths) != len(metrics_paths):
        raise ValueError(f"{len(correlation_paths)} correlation tables for {len(metrics_paths)} trained models")
    experiments = list(zip(permutation_paths, adversarial_paths))
    if findings is not None and (
        len(permutation_paths) != len(metrics_paths) or len(adversarial_paths) != len(metrics_paths)
    ):
        raise ValueError(
            f"{len(permutation_paths)} permutation and {len(adversarial_paths)} adversarial tables for {len(metrics_paths)} trained models"
        )
    summaries, parts, means, finding_runs = [], [], [], []
    for i, (path, metrics_path) in enumerate(zip(correlation_paths, metrics_paths)):
        trained = io.read_json(metrics_path, sealed=True)
        run = {
            "dataset": trained["provenance"]["dataset"],
            "model": trained["model"],
            "seed": trained["seed"],
            "epochs": trained["settings"]["epochs"],
            "hidden_size": trained["settings"].get("hidden_size"),
        }
        correlations = io.read_table(path)
        summary = summarise_correlations(correlations, ModelSpec.from_record(trained["spec"]).classifier, significance)
        setting = run_setting(trained)
        provenance = {
            "select_on": setting.select_on,
            "embeddings": setting.embeddings,
            "stand_ins": setting.stand_ins,
            "loo_op": loo_op,
        }
        summaries.append(
            run | provenance | {"spec": trained["spec"], "classes": trained["classes"], "summary": summary}
        )
        means.append(run | provenance | {"means": overall_means(correlations)})
        parts.append(summary.assign(**run, **provenance))
        if findings is not None:
            permutation, adversarial = (io.read_table(p, sealed=True) for p in experiments[i])
            spec = ModelSpec.from_record(trained["spec"])
            finding_runs.append(
                run
                | {
                    "setting": setting,
                    "encoder": spec.encoder,
                    "attention": spec.attention,
                    "correlations": correlations,
                    "permutation": permutation,
                    "adversarial": adversarial,
                }
            )
    columns = [
        "dataset",
        "model",
        "seed",
        "select_on",
        "embeddings",
        "loo_op",
        "pair",
        "group",
        "n",
        "n_undefined",
        "mean",
        "std",
        "sig_frac",
        "n_ig_unconverged",
    ]
    summary = pd.concat(parts, ignore_index=True)[columns]
    io.write_csv(out["summary_csv"], summary, seal=True)
    io.write_text(
        out["summary_md"],
        f"# Kendall τ between explanations, every J&W model (scipy {SCIPY_VERSION})\n\n"
        + to_markdown(summary.round(3)),
    )
    table = table2(summaries, pd.read_csv(published_path, dtype={"class": str, "label": str}), tolerance)
    io.write_csv(out["table2_csv"], table, seal=True)
    io.write_text(out["table2_md"], table2_markdown(table, tolerance))
    rows = table2_claims(table, tolerance)
    if mean_tau_path is not None:
        rows += mean_tau_claims(means, pd.read_csv(mean_tau_path), tolerance["lstm"]["mean"])
    if findings is not None:
        rows += finding_claims(finding_runs, findings) + correlation_claims(finding_runs, findings)
    write_claims(out["claims"], rows)
    return summary


def acceptance(metrics_path, gate: float | None) -> tuple[float, float, bool]:
    """A model's dev and test accuracy (its metrics.json, at the selected epoch) and whether it passes
    the gate (planted models need 0.97, where Zhou et al. 2022's models stop training; None: no gate,
    generated data). The gate reads dev accuracy alone, as Zhou et al.'s stopping rule."""
    trained = io.read_json(metrics_path, sealed=True)
    try:
        dev, test = float(trained["dev"]["accuracy"]), float(trained["test"]["accuracy"])
    except (KeyError, TypeError):
        raise ValueError(
            f"{metrics_path}: expected the selected epoch's accuracy at keys dev.accuracy and test.accuracy"
        ) from None
    return dev, test, gate is None or dev >= gate


def write_ground_truth(
    explanation_paths,
    test_paths,
    metrics_paths,
    out_csv,
    out_md,
    *,
    gates: dict | None = None,
    max_dev_test_gap: float | None = None,
    shifted_paths=(),
) -> pd.DataFrame:
    """The ground-truth table over every model of the generated and planted datasets; returns it.
    shifted_paths: each model's accuracy on its dataset's shifted test set (`shifted_test.json`; generated
    and planted datasets), shown beside test accuracy (NaN where a dataset has none).
    metrics_paths: each model's metrics.json, in the explanations' order; gates: dataset -> the dev
    accuracy a model needs (absent or None: no gate). A model below its gate is kept in the table,
    marked `accepted: False`, and reported as failed; test accuracy stands beside dev, and a model whose
    test accuracy lies more than `max_dev_test_gap` below its dev accuracy is flagged (`dev_test_gap`)."""
    tests = {Path(p).parts[-2]: read_records(p) for p in test_paths}  # results/data/{dataset}/test.jsonl
    metrics = {RunKey.of_file(p): p for p in metrics_paths}
    shifted = {RunKey.of_file(p): io.read_json(p, sealed=True)["accuracy"] for p in shifted_paths}
    parts = []
    for directory, paths in explanation_sets(explanation_paths).items():
        run = RunKey.of_file(paths[0])
        if run not in metrics:
            raise ValueError(
                f"{directory}: no metrics.json of {run.path('results/models')} to read its dev accuracy from"
            )
        dev, test, accepted = acceptance(metrics[run], (gates or {}).get(run.dataset))
        gap = max_dev_test_gap is not None and dev - test > max_dev_test_gap
        summary = summarise_ground_truth(ground_truth_table(read_explanations(paths), tests[run.dataset]))
        parts.append(
            summary.assign(
                **run._asdict(),
                dev_accuracy=dev,
                test_accuracy=test,
                shifted_test_accuracy=shifted.get(run, float("nan")),
                dev_test_gap=gap,
                accepted=accepted,
            )
        )
    table = pd.concat(parts, ignore_index=True)
    table = table[
        ["dataset", "model", "seed", "dev_accuracy", "test_accuracy", "shifted_test_accuracy", "dev_test_gap"]
        + ["accepted", "method", "group"]
        + ["n", "n_undefined_mass"]
        + ["n_ig_unconverged"]
        + [c for c in table.columns if c.endswith(("_mean", "_std"))]
    ]
    io.write_csv(out_csv, table, seal=True)
    overall = table[table.group == "Overall"]
    ranked = overall.sort_values(["dataset", "model", "seed", "auprc_mean"], ascending=[True, True, True, False])
    failed = overall[~overall.accepted].drop_duplicates(["dataset", "model", "seed"])
    failures = "".join(
        f"- **failed**: {r.dataset} / {r.model} / seed {r.seed}: dev accuracy {r.dev_accuracy:.3f} is below the "
        f"gate {gates[r.dataset]:.2f}; its rows are not evidence about the methods.\n"
        for r in failed.itertuples()
    ) + "".join(
        f"- **dev/test gap**: {r.dataset} / {r.model} / seed {r.seed}: test accuracy {r.test_accuracy:.3f} lies "
        f"{r.dev_accuracy - r.test_accuracy:.3f} below dev accuracy {r.dev_accuracy:.3f} (more than "
        f"`jain_wallace.planted_max_dev_test_gap` = {max_dev_test_gap}): its selected epoch fits the dev split "
        "better than the test split.\n"
        for r in overall[overall.dev_test_gap].drop_duplicates(["dataset", "model", "seed"]).itertuples()
    )
    io.write_text(
        out_md,
        "# Explanations against the planted cues\n\n"
        "Per model, methods ranked by AUPRC (higher is better; first_hit: lower is better). "
        "mass_ratio = mass / chance. A planted dataset's model is accepted only at its dev-accuracy gate "
        "(`jain_wallace.planted_min_dev_accuracy`, on dev accuracy alone); test accuracy stands beside it. "
        "shifted_test_accuracy is the accuracy on a shifted test set. On the generated task every instance there "
        "holds cues of both classes: which classes' cues occur says nothing, only how many, so a model that learnt "
        "the shortcut falls towards 0.5 while a model that counts keeps its test accuracy. On a planted dataset it "
        "is the base's test split planted again with labels drawn independently of the original text: a model "
        "that read the text's sentiment rather than the planted cues falls there (with uniform `lr_probs`, as by "
        "default, the text predicts nothing anyway and the two accuracies should agree).\n\n"
        + (failures + "\n" if failures else "")
        + to_markdown(ranked.round(3)),
    )
    return table
