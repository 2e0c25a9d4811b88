"""Jain & Wallace (2019), "Attention is not Explanation": the experiments of §5 on a trained model,
and the files the rule scripts write from them.

- `correlations`: Kendall τ-b between attention, |gradient|, leave-one-out and |IG| per instance (§5.3;
  torch-free in `attnexp.papers.jain_wallace.correlations`, re-exported here).
- `permutation_rows`: α̂ permuted over the real tokens, only `decode` re-run (§5.4), here.
- `adversarial_rows`: K attention distributions far from α̂ (JSD) that keep the output (§5.5), found by
  Adam on free logits with the hidden states fixed (`attnexp.papers.jain_wallace.adversary`, whose
  search is re-exported here).
- The explanations against the planted cue positions of `synthetic` and the planted datasets are
  scored from the explanation files, torch-free, in `attnexp.papers.jain_wallace.ground_truth`.

Permutation and adversarial search never re-run the encoder: they decode cached hidden states
(projected through a linear output layer once, `attnexp.experiments.cached.readout`), vectorised over
permutations / candidates and batched over instances. They act on the readout
attention per head (`attnexp.experiments.cached`: H = 1 for the recurrent models, the `[CLS]` heads
of the Transformer), so every model goes through the same code: a permutation shuffles the tokens'
weights identically in every head, and the adversary searches per-head weights whose head mean — the
model's reported attention, the explanation under test — is far from α̂. Their randomness is drawn per
instance from (seed, instance index), so results do not depend on how instances are batched, and the
reference loops of `benchmarks/jain_wallace_speed.py` reproduce them exactly. The settings a job
passes (`settings`) are read here alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.experiments.cached import cached_batches, readout, real_positions
from attnexp.metrics import tvd
from attnexp.models.inputs import Encoded, Example
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData
from attnexp.papers.jain_wallace.adversary import (
    FusedAdam,
    LinearSearchGradient,
    adversarial_search,
    adversary_noise,
    eps_max_jsd,
    linear_search_gradient,
    search_objective,
)
from attnexp.papers.jain_wallace.correlations import (
    PAIRS,
    class_groups,
    correlations,
    summarise_correlations,
    write_correlations,
)
from attnexp.plan import require
from attnexp.runs import Run, restore_run
from attnexp.runtime import model_device, predict, set_determinism

if TYPE_CHECKING:  # the tables are built where asked for: the model jobs write their rows without pandas
    import pandas as pd

__all__ = [
    "PAIRS",
    "correlations",
    "class_groups",
    "summarise_correlations",
    "permutation_indices",
    "permuted_attention",
    "permutation_output_differences",
    "permutation_rows",
    "permutation_experiment",
    "adversary_noise",
    "adversarial_search",
    "search_objective",
    "linear_search_gradient",
    "LinearSearchGradient",
    "eps_max_jsd",
    "adversarial_rows",
    "adversarial_experiment",
    "FusedAdam",
    "write_correlations",
    "write_shifted_accuracy",
    "write_permutation",
    "write_adversarial",
]


# ---------------------------------------------------------------------------------------------
# Permutation (§5.4)


def permutation_indices(n: int, count: int, seed: int, index: int) -> np.ndarray:
    """(count, n) random permutations of 0..n-1 for the instance at `index` of the test split."""
    rng = np.random.default_rng([seed, 0, index])
    return rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1)


def permuted_attention(heads: torch.Tensor, mask: torch.Tensor, permutations: list[np.ndarray]) -> torch.Tensor:
    """heads (B, H, L), mask (B, L), per instance (P, n_b) permutations -> (P, B, H, L): the weights
    of the real positions shuffled among themselves, by the same permutation in every head; masked
    positions keep their exact zeros."""
    count = permutations[0].shape[0]
    B, H, L = heads.shape
    index = torch.arange(L, device=heads.device).expand(count, B, L).clone()  # (P, B, L)
    for b, (positions, perm) in enumerate(zip(real_positions(mask), permutations)):
        index[:, b, positions] = positions[torch.from_numpy(perm).to(heads.device)]
    return heads.expand(count, B, H, L).gather(-1, index[:, :, None, :].expand(count, B, H, L))


@torch.no_grad()
def permutation_output_differences(
    model: nn.Module, encoded: Encoded, heads: torch.Tensor, probs: torch.Tensor, permutations: list[np.ndarray]
) -> torch.Tensor:
    """heads (B, H, L) -> (P, B) output change TVD(p_perm, p) (= |Δŷ| for BC) of each permutation."""
    logits = readout(model, encoded).logits(permuted_attention(heads, encoded.mask, permutations))  # (P, B, C)
    return tvd(probabilities(logits), probs)


def permutation_rows(model: nn.Module, examples: list[Example], settings: dict, seed: int) -> list[dict]:
    """Per instance: Δŷ^med = median over permutations of the output change, max α̂, predicted class."""
    rows = [None] * len(examples)
    for batch in cached_batches(model, examples, settings["max_tokens"]):
        indices, encoded, attention, probs, lengths = (
            batch.indices,
            batch.encoded,
            batch.attention,
            batch.probs,
            batch.lengths,
        )
        perms = [permutation_indices(n, settings["permutations"], seed, int(i)) for n, i in zip(lengths, indices)]
        changes = permutation_output_differences(model, encoded, batch.heads, probs, perms)  # (P, B)
        medians = torch.quantile(changes.double(), 0.5, dim=0)  # the mean of the middle two, as np.median
        probs, attention, medians = probs.cpu(), attention.cpu(), medians.cpu()  # read per instance below
        for b, i in enumerate(indices):
            rows[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "predicted": int(probs[b].argmax()),
                "max_attention": float(attention[b].max()),
                "median_output_difference": float(medians[b]),
            }
    return rows


def permutation_experiment(model: nn.Module, examples: list[Example], settings: dict, seed: int) -> pd.DataFrame:
    """`permutation_rows` as a table, one row per instance."""
    import pandas as pd

    return pd.DataFrame(permutation_rows(model, examples, settings, seed))


# ---------------------------------------------------------------------------------------------
# Adversarial attention (§5.5; the search itself in `attnexp.papers.jain_wallace.adversary`)


def adversarial_rows(
    model: nn.Module, examples: list[Example], settings: dict, seed: int, log: Callable[[str], None] = print
) -> tuple[list[dict], list[dict]]:
    """Per instance: ε-max JSD, max α̂, predicted class; and the chosen candidate (D-JWEXPORT)."""
    classifier = model.spec.classifier  # J&W's ε and output scale differ for QA/NLI models
    eps = settings["adv_eps_bc"] if classifier else settings["adv_eps_qa"]
    search = {k: settings["adversary"][k] for k in ("steps", "lr", "amsgrad", "penalty", "margin")}
    rows, exported = [None] * len(examples), [None] * len(examples)
    done = 0
    for batch in cached_batches(model, examples, settings["max_tokens"]):
        indices, encoded, attention, probs, lengths = (
            batch.indices,
            batch.encoded,
            batch.attention,
            batch.probs,
            batch.lengths,
        )
        heads = batch.heads
        noise = [
            adversary_noise(n, settings["adversary"]["candidates"], seed, int(i), heads.shape[1])
            for n, i in zip(lengths, indices)
        ]
        candidates = adversarial_search(
            model, encoded, heads, probs, noise, output_scale=1.0 if classifier else 2.0, **search
        )
        divergence, chosen, change, feasible = eps_max_jsd(model, encoded, heads, probs, candidates, eps)
        # read per instance below: one copy each to the CPU (a no-op there)
        probs, attention, mask = probs.cpu(), attention.cpu(), encoded.mask.cpu()
        divergence, chosen, change, feasible = divergence.cpu(), chosen.cpu(), change.cpu(), feasible.cpu()
        for b, i in enumerate(indices):
            real = mask[b]
            rows[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "predicted": int(probs[b].argmax()),
                "max_attention": float(attention[b].max()),
                "eps_max_jsd": float(divergence[b]),
                "output_difference": float(change[b]),
                "feasible_candidates": int(feasible[b]),
            }
            exported[i] = {
                "id": examples[i].id,
                "length": lengths[b],
                "jsd": float(divergence[b]),
                "output_difference": float(change[b]),
                "attention": chosen[b][real].tolist(),
            }
        done += len(indices)
        log(f"adversary: {done}/{len(examples)} instances")
    return rows, exported


def adversarial_experiment(
    model: nn.Module, examples: list[Example], settings: dict, seed: int, log: Callable[[str], None] = print
) -> tuple[pd.DataFrame, list[dict]]:
    """`adversarial_rows` with the rows as a table."""
    import pandas as pd

    rows, exported = adversarial_rows(model, examples, settings, seed, log)
    return pd.DataFrame(rows), exported


# ---------------------------------------------------------------------------------------------
# From files to files: what the rule scripts call


def _restore(checkpoint, data: DataFiles, seed: int, threads: int, device: str) -> tuple[Run, list[Example]]:
    """The run on `device` (the config's `device` setting: auto | cpu | cuda) and its test examples."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "jain_wallace")
    return run, run.test_examples(data)


def write_shifted_accuracy(
    checkpoint, data: DataFiles, shifted_path, out, *, seed: int, threads: int, device: str = "cpu"
) -> dict:
    """A model's accuracy on its dataset's shifted test set (`attnexp.data.synthetic.shifted_test`: cues of
    both classes in every instance; `attnexp.data.planted.shifted_test`: labels independent of the original
    text), written as JSON: {accuracy, n}."""
    run, _ = _restore(checkpoint, data, seed, threads, device)
    examples = run.examples_of(data, io.read_jsonl(shifted_path, sealed=True))
    split = SplitData(examples)
    probs, _ = predict(run.model, split, 128, model_device(run.model))
    result = {"accuracy": round(float(np.mean(probs.argmax(axis=1) == split.labels())), 6), "n": len(examples)}
    io.write_json(out, result, seal=True)
    return result


def write_permutation(
    checkpoint, data: DataFiles, out, *, settings: dict, seed: int, threads: int, device: str = "cpu"
) -> None:
    run, examples = _restore(checkpoint, data, seed, threads, device)
    io.write_records_csv(out, permutation_rows(run.model, examples, settings, seed), seal=True)


def write_adversarial(
    checkpoint,
    data: DataFiles,
    out_table,
    out_attention,
    *,
    settings: dict,
    seed: int,
    threads: int,
    log=print,
    device: str = "cpu",
) -> None:
    run, examples = _restore(checkpoint, data, seed, threads, device)
    rows, exported = adversarial_rows(run.model, examples, settings, seed, log)
    io.write_records_csv(out_table, rows, seal=True)
    io.write_jsonl(out_attention, exported, seal=True)
