"""Speed of the J&W experiments: the pipeline's vectorised, batched implementations against
straightforward per-instance reference loops, on a trained SST model and its test split.

- permutation: the library decodes all 100 permutations of a batch of instances at once; the
  reference encodes one instance and decodes one permutation at a time.
- adversarial search: the library optimises the K candidates of many instances in one batch; the
  reference optimises one instance at a time (its K candidates together: the objective couples them).
- leave-one-out: the library batches every deletion of many instances; the reference re-runs the
  model once per deleted token.

The reference loops live here and double as the tests' oracle (`tests/test_jain_wallace.py` checks
that both give the same numbers). Needs a trained model (`snakemake models`).

    python benchmarks/jain_wallace_speed.py [--instances 200] [--threads 2] [--model results/models/sst/lstm-tanh/seed10]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from attnexp.experiments import jain_wallace as jw  # noqa: E402
from attnexp.experiments.cached import decode_heads  # noqa: E402
from attnexp.explain.leave_one_out import leave_one_out  # noqa: E402
from attnexp.explain.perturb import erased_example  # noqa: E402
from attnexp.metrics import jsd, tvd  # noqa: E402
from attnexp.models.attention import masked_softmax  # noqa: E402
from attnexp.models.inputs import collate  # noqa: E402
from attnexp.runtime import probabilities  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Reference loops: one instance (and one permutation / deleted token) at a time


def _alone(model, example):
    """Encode one instance in a batch of its own -> (encoded, readout attention per head (1, H, L),
    probabilities (1, C)); H = 1 for a model with one attention distribution."""
    with torch.no_grad():
        encoded = model.encode(collate([example], model.layout))
        logits, attention = model.decode(encoded)
    heads = attention[:, None] if encoded.heads is None else encoded.heads
    return encoded, heads, probabilities(logits)


@torch.no_grad()
def reference_permutation(model, examples, permutations: int, seed: int) -> list[float]:
    """Median output change over `permutations` permutations, one decode per permutation."""
    medians = []
    for index, example in enumerate(examples):
        encoded, heads, probs = _alone(model, example)
        real = encoded.mask[0].nonzero().squeeze(-1)
        changes = []
        for perm in jw.permutation_indices(len(real), permutations, seed, index):
            permuted = heads.clone()
            permuted[0, :, real] = heads[0][:, real[torch.from_numpy(perm)]]  # the same shuffle in every head
            changes.append(float(tvd(probabilities(decode_heads(model, encoded, permuted)), probs)[0]))
        medians.append(float(np.median(changes)))
    return medians


def reference_adversarial(model, examples, settings: dict, seed: int, family: str) -> list[float]:
    """ε-max JSD per instance, searching each instance's K candidates (per head) on their own."""
    adversary = settings["adversary"]
    eps = settings["adv_eps_qa"] if family == "qa" else settings["adv_eps_bc"]
    scale = 2.0 if family == "qa" else 1.0
    for p in model.parameters():
        p.requires_grad_(False)
    results = []
    for index, example in enumerate(examples):
        encoded, heads, probs = _alone(model, example)
        attention = heads.mean(dim=1)  # (1, L) α̂
        mask = encoded.mask[0]  # (L,)
        (n, length), H = (int(mask.sum()), mask.shape[0]), heads.shape[1]
        z = torch.zeros(adversary["candidates"], H, length)
        z[:, :, mask] = torch.from_numpy(jw.adversary_noise(n, adversary["candidates"], seed, index, H))
        z = (np.log(1.0 / length) + 3.0 * z).requires_grad_(True)
        optimizer = torch.optim.Adam([z], lr=adversary["lr"], amsgrad=adversary["amsgrad"])
        for _ in range(adversary["steps"]):
            per_head = masked_softmax(z, mask)  # (K, H, L)
            alpha = per_head.mean(dim=1)  # (K, L)
            logits = decode_heads(model, encoded, per_head[:, None])  # (K, 1, C)
            change = scale * tvd(probabilities(logits)[:, 0], probs[0])  # (K,)
            loss = -jsd(alpha, attention[0]).sum() + adversary["penalty"] * torch.relu(change - adversary["margin"]).sum()
            loss = loss - jsd(alpha[:, None], alpha[None, :]).sum() / len(alpha) ** 2  # K x K pairs
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            per_head = masked_softmax(z, mask)
            alpha = per_head.mean(dim=1)
            change = tvd(probabilities(decode_heads(model, encoded, per_head[:, None]))[:, 0], probs[0])
            best = 0.0  # α̂ itself is always a candidate
            for k in range(len(alpha)):
                if change[k] <= eps:
                    best = max(best, float(jsd(alpha[k], attention[0])))
        results.append(best)
    for p in model.parameters():
        p.requires_grad_(True)
    return results


@torch.no_grad()
def reference_leave_one_out(model, examples, op: str = "delete") -> list[np.ndarray]:
    """Output change of each deleted token, one forward pass per token."""
    scores = []
    for example in examples:
        _, _, probs = _alone(model, example)
        changes = []
        for t in range(len(example.tokens)):
            variant = erased_example(example, np.arange(len(example.tokens)) == t, op)
            batch = collate([variant], model.layout)
            encoded = model.encode(batch)
            if op == "pad_masked":
                encoded.mask[0, t + 1] = False
            logits, _ = model.decode(encoded)
            changes.append(float(tvd(probabilities(logits), probs)[0]))
        scores.append(np.array(changes, dtype=np.float32))
    return scores


# ---------------------------------------------------------------------------------------------
# Timing


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="results/models/sst/lstm-tanh/seed10")
    parser.add_argument("--data", default="results/data/sst")
    parser.add_argument("--instances", type=int, default=200, help="test instances timed (the first N)")
    parser.add_argument("--reference-instances", type=int, default=50, help="instances the slow reference loops run on")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()

    from attnexp.config import validate_config
    from attnexp.runtime import restore_run, set_determinism

    import yaml

    settings = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))["jain_wallace"]
    set_determinism(10, args.threads)
    run = restore_run(Path(args.model) / "model.pt", args.data)
    model, examples = run.model, run.test_examples(args.data)
    fast_set, slow_set = examples[: args.instances], examples[: args.reference_instances]
    family = run.spec.family

    rows = []
    fast, t_fast = _timed(lambda: jw.permutation_experiment(model, fast_set, settings, 10))
    slow, t_slow = _timed(lambda: reference_permutation(model, slow_set, settings["permutations"], 10))
    gap = np.max(np.abs(fast["median_output_difference"].to_numpy()[: len(slow)] - np.array(slow)))
    rows.append(("permutation (100 per instance)", t_fast / len(fast_set), t_slow / len(slow_set), gap))

    (fast, _), t_fast = _timed(lambda: jw.adversarial_experiment(model, fast_set, settings, 10, log=lambda _: None))
    slow, t_slow = _timed(lambda: reference_adversarial(model, slow_set, settings, 10, family))
    gap = np.max(np.abs(fast["eps_max_jsd"].to_numpy()[: len(slow)] - np.array(slow)))
    rows.append(("adversarial search (K = 5, 500 steps)", t_fast / len(fast_set), t_slow / len(slow_set), gap))

    with torch.no_grad():
        full = np.stack([_alone(model, e)[2][0].numpy() for e in fast_set])
    fast, t_fast = _timed(lambda: leave_one_out(model, fast_set, full))
    slow, t_slow = _timed(lambda: reference_leave_one_out(model, slow_set))
    gap = max(float(np.max(np.abs(a - b))) for a, b in zip(fast, slow))
    rows.append(("leave-one-out (every token)", t_fast / len(fast_set), t_slow / len(slow_set), gap))

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"J&W experiments on `{args.model}` ({run.spec.name}), SST test split, {args.threads} CPU threads; "
        f"pipeline on {len(fast_set)} instances, reference loops on the first {len(slow_set)}. Peak RSS {rss:,.0f} MB.",
        "",
        "| experiment | pipeline ms/instance | reference ms/instance | speed-up | max abs difference |",
        "|---|---|---|---|---|",
    ]
    for name, fast_s, slow_s, gap in rows:
        lines.append(f"| {name} | {1000 * fast_s:,.2f} | {1000 * slow_s:,.1f} | {slow_s / fast_s:,.1f}× | {gap:.1e} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
