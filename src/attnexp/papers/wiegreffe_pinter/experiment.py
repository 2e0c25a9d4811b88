"""Wiegreffe & Pinter 2019, "Attention is not not Explanation": the
model-consistent adversary and the per-instance comparisons between trained runs.

Every W&P model is an ordinary cached training job (`attnexp.plan.wiegreffe_pinter_companions`):
the uniform twin (§3.2), the seed models (§3.3), the diagnostic MLPs (§3.4) and the adversaries
(§4). What they are compared on is each run's export (`runs.export_attention`: per instance of
every split its id, length, attention and probabilities), matched by id and length, never re-aligned
(D-ALIGN).

Read top to bottom:
- `Exported` / `read_export` / `check_aligned`: one split of one run's export.
- `compare`: per instance TVD of the outputs, JSD and KL of the attention, one padded tensor pass.
- `ModelConsistentAdversary`: §4's objective, TVD(ŷ_a, ŷ_b) − λ KL(α_a ‖ α_b) on the base's exported
  predictions and attention (no base forward pass, no gold labels), and its per-epoch monitor.
- `seed_variance`, `jw_adversary_variance`: Figure 2's per-instance tables (seed models; J&W's
  per-instance adversary, D-JWEXPORT).
- `adversary_frontier`: Figure 4 / Table 4 per λ.
- From files to files: what the rule scripts call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles, read_records
from attnexp.data.splits import split_labels
from attnexp.metrics import f1_per_class, jsd, kl, tvd
from attnexp.models.inputs import Batch
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData
from attnexp.runtime import predict

__all__ = [
    "Exported",
    "read_export",
    "read_exports",
    "check_aligned",
    "compare",
    "ModelConsistentAdversary",
    "seed_variance",
    "jw_adversary_variance",
    "adversary_epochs",
    "adversary_frontier",
    "reference_points",
    "test_labels",
    "example_instance",
    "write_seed_variance",
    "write_frontier",
    "example_records",
]


# ---------------------------------------------------------------------------------------------
# Exported runs (D-ALIGN)


@dataclass
class Exported:
    """One split of a run's export, in the split's order."""

    path: str
    ids: list[str]
    attention: list[np.ndarray]  # per instance: weights over its real tokens
    probs: np.ndarray  # (N, C)

    @property
    def lengths(self) -> list[int]:
        return [len(a) for a in self.attention]

    @property
    def positive(self) -> np.ndarray:
        """(N,) P(class 1) of a binary classifier."""
        return self.probs[:, 1]


def read_exports(path: str | Path, splits: tuple[str, ...]) -> dict[str, Exported]:
    """The `splits` records of an `export_attention` file, read once; a record whose stored length
    and weights disagree is an error naming it."""
    found = {split: ([], [], []) for split in splits}
    for record in io.read_jsonl(path, sealed=True):
        if record["split"] not in found:
            continue
        weights = np.asarray(record["attention"], dtype=np.float32)
        if len(weights) != record["length"]:
            raise ValueError(
                f"{path}: instance {record['id']!r} stores {len(weights)} weights for length {record['length']}"
            )
        ids, attention, probs = found[record["split"]]
        ids.append(record["id"])
        attention.append(weights)
        probs.append(record["probs"])
    for split, (ids, _, _) in found.items():
        if not ids:
            raise ValueError(f"{path}: no {split} instances")
    return {
        split: Exported(str(path), ids, attention, np.asarray(probs, dtype=np.float64))
        for split, (ids, attention, probs) in found.items()
    }


def read_export(path: str | Path, split: str) -> Exported:
    """One split of an `export_attention` file."""
    return read_exports(path, (split,))[split]


def check_aligned(
    reference_ids: list[str],
    reference_lengths: list[int],
    other_ids: list[str],
    other_lengths: list[int],
    reference: str,
    other: str,
) -> None:
    """The same instances in the same order with the same lengths, or a ValueError naming the first
    mismatch (D-ALIGN: never re-aligned silently)."""
    for i, (a, n, b, m) in enumerate(zip(reference_ids, reference_lengths, other_ids, other_lengths)):
        if a != b or n != m:
            raise ValueError(f"{other}: instance {i} is {b!r} of length {m}, but {reference} has {a!r} of length {n}")
    if len(reference_ids) != len(other_ids):
        raise ValueError(f"{other}: {len(other_ids)} instances, but {reference} has {len(reference_ids)}")


def _aligned(a: Exported, b: Exported) -> None:
    check_aligned(a.ids, a.lengths, b.ids, b.lengths, a.path, b.path)


def _padded(attention: list[np.ndarray]) -> torch.Tensor:
    """(N, L) float64, zeros past each instance's length."""
    out = torch.zeros(len(attention), max(len(a) for a in attention), dtype=torch.float64)
    for row, weights in zip(out, attention):
        row[: len(weights)] = torch.from_numpy(weights.astype(np.float64))
    return out


# ---------------------------------------------------------------------------------------------
# Per-instance comparison of two runs


def compare(a: Exported, b: Exported) -> pd.DataFrame:
    """Per instance: tvd = |ŷ_a − ŷ_b| (two-class TVD, D-TVD), jsd(α_a, α_b), kl_ab = KL(α_a ‖ α_b),
    kl_ba = KL(α_b ‖ α_a), natural log, 1e-10 inside the logarithms (D-KL)."""
    _aligned(a, b)
    alpha_a, alpha_b = _padded(a.attention), _padded(b.attention)
    probs_a, probs_b = torch.from_numpy(a.probs), torch.from_numpy(b.probs)
    return pd.DataFrame(
        {
            "id": a.ids,
            "length": a.lengths,
            "tvd": tvd(probs_a, probs_b).numpy(),
            "jsd": jsd(alpha_a, alpha_b).numpy(),
            "kl_ab": kl(alpha_a, alpha_b).numpy(),
            "kl_ba": kl(alpha_b, alpha_a).numpy(),
        }
    )


# ---------------------------------------------------------------------------------------------
# The model-consistent adversary (§4)


class ModelConsistentAdversary:
    """W&P §4: one model trained on the whole training set to keep the base model's predictions
    while moving its attention away from the base's,

        L_i = tvd_scale · |σ(z_a) − p_b| − λ · KL(α_a ‖ α_b)     (D-TVD, D-KL; `kl: base_adv` flips it)

    averaged over the batch (D-ADVW): `objective` returns the batch's sum and the training loop's
    `loss_reduction: mean` divides it; `loss_scale: classweight_sum` multiplies the mean by the
    batch's sum of class weights, as the repository does. The base's attention α_b rides in `batch.guide`
    (the training job loads the base's export as the guide, checked by id and length); its
    predictions p_b are looked up by id here. No gold label enters the loss."""

    def __init__(self, export_path: str | Path, settings: dict, pos_weight: float):
        self.settings = settings
        self.pos_weight = pos_weight
        self.base = read_exports(export_path, ("train", "test"))
        self.base_positive = {i: p for e in self.base.values() for i, p in zip(e.ids, e.positive)}

    def terms(
        self, logits: torch.Tensor, attention: torch.Tensor, base_positive: torch.Tensor, base_attention: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """logits (B, 1), attention and base_attention (B, L) -> per-instance TVD (B,), KL (B,)."""
        p = probabilities(logits)
        q = torch.stack([1 - base_positive, base_positive], dim=-1)
        divergence = (
            kl(attention, base_attention) if self.settings["kl"] == "adv_base" else kl(base_attention, attention)
        )
        return self.settings["tvd_scale"] * tvd(p, q), divergence

    def objective(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """The batch's summed loss (`loss_reduction: mean` divides it by the batch size)."""
        logits, attention = model(batch)
        base_positive = torch.tensor(
            [self.base_positive[i] for i in batch.ids], dtype=attention.dtype, device=attention.device
        )
        change, divergence = self.terms(logits, attention, base_positive, batch.guide)
        loss = (change - self.settings["lambda"] * divergence).sum()
        if self.settings["loss_scale"] == "classweight_sum":
            loss = loss * torch.where(batch.labels == 1, self.pos_weight, 1.0).sum()
        return loss

    @torch.no_grad()
    def monitor(self, model: nn.Module, splits: dict[str, SplitData], device: torch.device) -> dict:
        """Per epoch, on train and test: mean TVD, JSD and KL to the base, and positive-class F1
        against the gold labels (means per instance; the repository logs sums)."""
        record = {}
        for split, base in self.base.items():
            probs, attention = predict(model, splits[split], 128, device)
            ours = Exported(
                f"{split} predictions", [e.id for e in splits[split].examples], attention, probs.astype(np.float64)
            )
            table = compare(ours, base)
            divergence = table["kl_ab"] if self.settings["kl"] == "adv_base" else table["kl_ba"]
            f1 = f1_per_class(splits[split].labels(), probs.argmax(axis=1), 2)[1]
            record[split] = {"tvd": table["tvd"].mean(), "jsd": table["jsd"].mean(), "kl": divergence.mean(), "f1": f1}
        return {"adversary": record}


# ---------------------------------------------------------------------------------------------
# Figure 2: seed variance and J&W's per-instance adversary


def _base_columns(base: Exported) -> dict:
    return {
        "id": base.ids,
        "length": base.lengths,
        "predicted": (base.positive >= 0.5).astype(int),  # round(ŷ_base): W&P's class split
        "max_attention": [float(a.max()) for a in base.attention],  # of the base model (D-SEEDPLOT)
    }


def seed_variance(base: Exported, seeds: dict[int, Exported]) -> pd.DataFrame:
    """Per test instance (§3.3, D-SEEDPLOT): attention_jsd = median over the seed models of
    JSD(α_base, α_seed), output_tvd = mean over them of |ŷ_seed − ŷ_base|."""
    if not seeds:
        raise ValueError("seed variance needs at least one seed model")
    tables = [compare(base, other) for other in seeds.values()]
    jsds = np.stack([t["jsd"].to_numpy() for t in tables])
    tvds = np.stack([t["tvd"].to_numpy() for t in tables])
    return pd.DataFrame(
        {
            **_base_columns(base),
            "comparison": "seeds",
            "models": len(seeds),
            "attention_jsd": np.median(jsds, axis=0),
            "output_tvd": tvds.mean(axis=0),
        }
    )


def jw_adversary_variance(base: Exported, jw_records: list[dict], jw_path: str) -> pd.DataFrame:
    """The same columns for J&W's per-instance adversary: its ε-max candidate's JSD to α̂ and output
    change (D-JWEXPORT), matched to the base export by id and length."""
    check_aligned(
        base.ids, base.lengths, [r["id"] for r in jw_records], [r["length"] for r in jw_records], base.path, jw_path
    )
    return pd.DataFrame(
        {
            **_base_columns(base),
            "comparison": "jw_adversary",
            "models": 1,
            "attention_jsd": [r["jsd"] for r in jw_records],
            "output_tvd": [r["output_difference"] for r in jw_records],
        }
    )


# ---------------------------------------------------------------------------------------------
# Figure 4 / Table 4: the adversaries per λ


def adversary_epochs(metrics: dict) -> pd.DataFrame:
    """The per-epoch log of one adversary (metrics.json history): train loss and, on train and test,
    mean TVD, JSD, KL and F1, with the kept epoch marked."""
    rows = []
    for record in metrics["history"]:
        row = {
            "epoch": record["epoch"],
            "train_loss": record["train_loss"],
            "selected": record["epoch"] == metrics["selected_epoch"],
        }
        for split, values in record["adversary"].items():
            row.update({f"{split}_{k}": v for k, v in values.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def adversary_frontier(base: Exported, adversaries: dict[float, Exported], labels: np.ndarray) -> pd.DataFrame:
    """Per λ, on the test set: mean TVD(ŷ_a, ŷ_b), mean JSD(α_a, α_b), mean KL both ways, and the
    adversary's positive-class F1 against gold (Table 4, Figure 4)."""
    rows = [
        {"kind": "adversary", "lambda": lam, **_against_base(adversary, base, labels)}
        for lam, adversary in sorted(adversaries.items())
    ]
    return pd.DataFrame(rows)


def _against_base(other: Exported, base: Exported, labels: np.ndarray) -> dict:
    table = compare(other, base)
    return {
        "n": len(table),
        "tvd": table["tvd"].mean(),
        "jsd": table["jsd"].mean(),
        "kl_adv_base": table["kl_ab"].mean(),
        "kl_base_adv": table["kl_ba"].mean(),
        "f1": f1_per_class(labels, (other.positive >= 0.5).astype(int), 2)[1],
    }


def reference_points(base: Exported, uniform: Exported, variance: pd.DataFrame, labels: np.ndarray) -> pd.DataFrame:
    """Figure 4's reference points: the uniform model against the base (its attention is 1/n), and
    the means of Figure 2's blocks (seed models: median JSD and mean TVD per instance; J&W's
    per-instance adversary)."""
    rows = [{"kind": "uniform", **_against_base(uniform, base, labels)}]
    for kind, block in variance.groupby("comparison", sort=True):
        rows.append(
            {"kind": kind, "n": len(block), "tvd": block["output_tvd"].mean(), "jsd": block["attention_jsd"].mean()}
        )
    return pd.DataFrame(rows)


def example_instance(base: Exported, adversary: Exported, max_tokens: int) -> int | None:
    """Table 1's instance: among those of at most `max_tokens` tokens (and at least 2), the one where
    the adversary's attention differs most from the base's (ties: the first); None where no test
    instance has that many tokens (one-token documents, or only long ones)."""
    table = compare(adversary, base)
    eligible = table[(table["length"] <= max_tokens) & (table["length"] >= 2)]
    return None if eligible.empty else int(eligible["jsd"].idxmax())


# ---------------------------------------------------------------------------------------------
# From files to files: what the rule scripts call


def write_seed_variance(base_export, seed_exports: list[str], seeds: list[int], jw_attention, out) -> pd.DataFrame:
    """Figure 2's per-instance table: one block for the seed models, one for J&W's adversary."""
    base = read_export(base_export, "test")
    table = pd.concat(
        [
            seed_variance(base, {seed: read_export(path, "test") for seed, path in zip(seeds, seed_exports)}),
            jw_adversary_variance(base, io.read_jsonl(jw_attention, sealed=True), str(jw_attention)),
        ],
        ignore_index=True,
    )
    io.write_csv(out, table, seal=True)
    return table


def test_labels(data: DataFiles, base: Exported) -> np.ndarray:
    """Gold class indices of the test split (the training split's class order), matched to the export by id."""
    ids, labels = split_labels(data, "test")
    # by id only: the export's lengths were already checked against the data when it was made
    check_aligned(base.ids, [0] * len(base.ids), ids, [0] * len(ids), base.path, str(data.test))
    return labels


def write_frontier(
    base_export,
    uniform_export,
    *,
    adversary_exports: list[str],
    adversary_metrics: list[str],
    lambdas: list[float],
    variance_csv,
    data: DataFiles,
    out_frontier,
    out_epochs,
) -> pd.DataFrame:
    """Figure 4 / Table 4 per base run: one row per λ (with the kept epoch and the epochs run) and
    the reference rows; and every adversary's per-epoch log."""
    base = read_export(base_export, "test")
    labels = test_labels(data, base)
    adversaries = {lam: read_export(path, "test") for lam, path in zip(lambdas, adversary_exports)}
    logs = {lam: io.read_json(path, sealed=True) for lam, path in zip(lambdas, adversary_metrics)}
    curve = adversary_frontier(base, adversaries, labels)
    curve["selected_epoch"] = [logs[lam]["selected_epoch"] for lam in curve["lambda"]]
    curve["epochs_run"] = [len(logs[lam]["history"]) for lam in curve["lambda"]]
    variance = io.read_table(variance_csv, dtype={"id": str})
    table = pd.concat(
        [curve, reference_points(base, read_export(uniform_export, "test"), variance, labels)], ignore_index=True
    )
    epochs = pd.concat(
        [adversary_epochs(logs[lam]).assign(**{"lambda": lam}) for lam in sorted(logs)], ignore_index=True
    )
    io.write_csv(out_frontier, table, seal=True)
    io.write_csv(out_epochs, epochs[["lambda", *[c for c in epochs.columns if c != "lambda"]]], seal=True)
    return table


def example_records(
    base_export, adversary_export, test_split, max_tokens: int
) -> tuple[list[str], dict[str, np.ndarray], str | None]:
    """Table 1: the chosen test instance's tokens (from `test_split`, the test.jsonl of the data),
    base and adversary attention, and its id; nothing (no tokens, no rows, None) where no instance qualifies."""
    base, adversary = read_export(base_export, "test"), read_export(adversary_export, "test")
    i = example_instance(base, adversary, max_tokens)
    if i is None:
        return [], {}, None
    record = read_records(test_split)[i]
    if record["id"] != base.ids[i] or len(record["tokens"]) != base.lengths[i]:
        raise ValueError(f"{test_split}: instance {i} is {record['id']!r}, the export has {base.ids[i]!r}")
    return record["tokens"], {"base": base.attention[i], "adversary": adversary.attention[i]}, record["id"]
