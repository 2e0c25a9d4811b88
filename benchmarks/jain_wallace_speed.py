"""Speed of the J&W experiments on a trained SST model and its test split: the pipeline against the
original code's strategy, and against per-instance oracle loops.

The suite (gradient, permutation x 100, adversarial search K = 5 x 500 steps, leave-one-out) runs
on the same instances:

- the pipeline, as its jobs run it: cached encoder states, all permutations / candidates of many
  instances per step, the linear output layer projected through the states once, the adversary's
  diversity term from the unordered pairs, BiLSTM leave-one-out re-running only the changed states;
- the original code's strategy (J&W's repository, `Binary_Classification.py`): test set sorted by
  length, batches of 32, one encoder pass per batch (the BiLSTM on packed sequences, as its
  `Encoder.py`), then every permutation / optimisation step a full decode of the batch, every deleted
  position one forward pass of the batch; same step counts, no early stopping. Twice: with the
  original code's decoder computation (attention re-run per permutation, the α ⊙ h product, `kld`
  with clamps, every row at every deleted position), and on this project's decoder (a stronger
  reference). The original already batches: a per-instance loop is not its speed.

The per-instance oracle loops (one instance, permutation or deleted token at a time) double as the
tests' oracle (`tests/papers/test_jain_wallace.py`, `tests/explain/test_explain.py`).
Needs a trained model (`snakemake models`).

    python benchmarks/jain_wallace_speed.py --instances 1725 [--reference-instances 40] [--threads 2] [--model results/models/sst/lstm-tanh/seed10]
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


from attnexp.experiments.cached import decode_heads  # noqa: E402
from attnexp.explain import explain_examples  # noqa: E402
from attnexp.explain.gradient import gradient_importance  # noqa: E402
from attnexp.explain.leave_one_out import leave_one_out  # noqa: E402
from attnexp.explain.perturb import erased_example  # noqa: E402
from attnexp.metrics import jsd, tvd  # noqa: E402
from attnexp.models.attention import masked_softmax  # noqa: E402
from attnexp.models.inputs import collate  # noqa: E402
from attnexp.models.outputs import probabilities  # noqa: E402
from attnexp.papers.jain_wallace import experiment as jw  # noqa: E402
from attnexp.runtime import frozen  # noqa: E402

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
    with frozen(model):  # the search differentiates the attention logits alone
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
                loss = (
                    -jsd(alpha, attention[0]).sum()
                    + adversary["penalty"] * torch.relu(change - adversary["margin"]).sum()
                )
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
# The original code's strategy (J&W's repository, model/Binary_Classification.py): the test set sorted
# by length, cut into batches of 32, and per batch one encoder pass, then every step on the whole batch
# through the full decoder; the same step counts, no early stopping.
#
# Two versions of each step:
# - `original`: the computation of the original code (model/modules/Decoder.py, modelUtils.py): every
#   permutation re-runs the attention layer before shuffling its output (`AttnDecoder.forward` with
#   `permute`); contexts are formed as the product α ⊙ h summed over positions (`get_output`, the
#   (B, K, L, H) product for the adversary's candidates); JSD through `kld` with its clamps, over all
#   K x K candidate pairs; leave-one-out deletes position t from every row of the batch, t = 1 .. the
#   batch's longest; the gradient pass also forms J&W's `XxE` product (the gradient against the summed
#   embedding matrix; computed for its cost, not compared). The original code itself, as a whole
#   process beside the pipeline: benchmarks/jain_wallace_whole_run.py.
# - `pipeline`: the same strategy on this project's decoder (the context as one batched contraction,
#   attention imposed rather than recomputed, JSD of `attnexp.metrics`, only the rows that have a
#   token t): a reference faster than the original code, for the conservative ratio.

ORIGINAL_BATCH = 32
DECODERS = ("original", "pipeline")


def packed_copy(model):
    """The model with its BiLSTM on packed sequences, as the original code's encoder runs it
    (`pack_padded_sequence`; the pipeline runs each direction over the padded batch instead)."""
    import copy

    from attnexp.models.encoders import use_packed_sequences

    return use_packed_sequences(copy.deepcopy(model))


def _original_batches(model, examples):
    """(indices, batch, encoded, heads (B, H, L), probs (B, C)) per batch of 32, sorted by length."""
    order = np.argsort([len(e.tokens) for e in examples], kind="stable")
    for start in range(0, len(order), ORIGINAL_BATCH):
        indices = order[start : start + ORIGINAL_BATCH]
        batch = collate([examples[i] for i in indices], model.layout)
        with torch.no_grad():
            encoded = model.encode(batch)
            logits, attention = model.decode(encoded)
        heads = attention[:, None] if encoded.heads is None else encoded.heads
        yield indices, batch, encoded, heads, probabilities(logits)


def _product_logits(model, hidden, attention):
    """The original decoder's output: context = Σ_t α_t h_t as the product α ⊙ h summed over
    positions, then the output layer. hidden (B, L, H), attention (..., B, L) -> logits (..., B, C)."""
    return model.decoder((attention[..., None] * hidden).sum(dim=-2))


def _kld(a, b):
    """modelUtils.kld: KL with both sides clamped to [0, 1] and 1e-10 inside the logarithms."""
    a, b = torch.clamp(a, 0, 1), torch.clamp(b, 0, 1)
    return (a * (torch.log(a + 1e-10) - torch.log(b + 1e-10))).sum(-1)


def _original_jsd(p, q):
    """modelUtils.jsd."""
    m = 0.5 * (p + q)
    return 0.5 * (_kld(p, m) + _kld(q, m))


def original_gradient(model, examples, decoder: str = "original") -> list[np.ndarray]:
    """gradient_mem: per batch one forward and one backward pass."""
    out = [None] * len(examples)
    for indices, batch, encoded, _, _ in _original_batches(model, examples):
        g = gradient_importance(model, batch)
        if decoder == "original":  # XxE: the gradient against the embedding matrix summed over the vocabulary
            (g[..., None] * model.embedding.weight.detach().sum(0)).sum(-1)
        for row, i in enumerate(indices):
            out[i] = g[row].numpy()[encoded.mask[row].numpy()]
    return out


@torch.no_grad()
def original_permutation(model, examples, permutations: int, seed: int, decoder: str = "original") -> list[float]:
    """permute_attn: per batch, `permutations` full decodes, each with every instance's weights shuffled."""
    medians = [None] * len(examples)
    for indices, _, encoded, heads, probs in _original_batches(model, examples):
        perms = [
            jw.permutation_indices(int(encoded.mask[b].sum()), permutations, seed, int(i))
            for b, i in enumerate(indices)
        ]
        permuted = jw.permuted_attention(heads, encoded.mask, perms)  # (P, B, H, L)
        changes = []
        for p in range(permutations):
            if decoder == "original":  # the attention layer re-run, its output shuffled, the product context
                model.attention(encoded.hidden, encoded.mask)
                logits = _product_logits(model, encoded.hidden, permuted[p, :, 0])
            else:
                logits = decode_heads(model, encoded, permuted[p])
            changes.append(tvd(probabilities(logits), probs))
        changes = torch.stack(changes)
        for b, i in enumerate(indices):
            medians[i] = float(np.median(changes[:, b].numpy()))
    return medians


def original_adversarial(
    model, examples, settings: dict, seed: int, family: str, decoder: str = "original", details: bool = False
) -> list:
    """adversarial_multi: per batch, K candidates of every instance optimised together for `steps`
    Adam steps, each step a full decode of all candidates and the K x K diversity term. Per instance
    the ε-max JSD; with `details`, (ε-max JSD, candidates within ε, the candidates' TVDs)."""
    adversary = settings["adversary"]
    eps = settings["adv_eps_qa"] if family == "qa" else settings["adv_eps_bc"]
    scale = 2.0 if family == "qa" else 1.0
    divergence = _original_jsd if decoder == "original" else jsd
    with frozen(model):  # the search differentiates the attention logits alone
        results = [None] * len(examples)
        for indices, _, encoded, heads, probs in _original_batches(model, examples):
            attention = heads.mean(dim=1)  # (B, L)
            mask = encoded.mask[:, None, :]  # (B, 1, L)
            K = adversary["candidates"]
            z = torch.zeros(K, *heads.shape)
            for b, i in enumerate(indices):
                real = encoded.mask[b]
                z[:, b][:, :, real] = torch.from_numpy(
                    jw.adversary_noise(int(real.sum()), K, seed, int(i), heads.shape[1])
                )
            z = (np.log(1.0 / heads.shape[-1]) + 3.0 * z).requires_grad_(True)
            optimizer = torch.optim.Adam([z], lr=adversary["lr"], amsgrad=adversary["amsgrad"])
            for _ in range(adversary["steps"]):
                per_head = masked_softmax(z, mask)  # (K, B, H, L)
                alpha = per_head.mean(dim=-2)
                if decoder == "original":  # the (K, B, L, H) product, as get_output's (B, K, L, H)
                    logits = _product_logits(model, encoded.hidden, alpha)
                else:
                    logits = decode_heads(model, encoded, per_head)
                change = scale * tvd(probabilities(logits), probs)  # (K, B)
                loss = (
                    -divergence(alpha, attention) + adversary["penalty"] * torch.relu(change - adversary["margin"])
                ).sum()
                loss = loss - divergence(alpha[:, None], alpha[None, :]).sum() / K**2
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            with torch.no_grad():
                per_head = masked_softmax(z, mask)
                change = tvd(probabilities(decode_heads(model, encoded, per_head)), probs)
                best = (
                    torch.where(change <= eps, jsd(per_head.mean(dim=-2), attention), torch.zeros(()))
                    .max(dim=0)
                    .values.clamp(min=0)
                )
            for b, i in enumerate(indices):
                results[i] = (
                    (float(best[b]), int((change[:, b] <= eps).sum()), change[:, b].tolist())
                    if details
                    else float(best[b])
                )
    return results


@torch.no_grad()
def original_leave_one_out(model, examples, decoder: str = "original") -> list[np.ndarray]:
    """remove_and_run: per batch and position t, token t deleted from every instance that has one,
    one forward pass of the batch. `original` runs every row at every t, as the original (which
    deletes column t from the whole batch); `pipeline` only the rows that have a token t."""
    scores = [None] * len(examples)
    for indices, _, _, _, probs in _original_batches(model, examples):
        group = [examples[i] for i in indices]
        changes = [np.zeros(len(e.tokens), dtype=np.float32) for e in group]
        for t in range(max(len(e.tokens) for e in group)):
            rows = [b for b, e in enumerate(group) if t < len(e.tokens)]
            variants = [erased_example(group[b], np.arange(len(group[b].tokens)) == t, "delete") for b in rows]
            if decoder == "original":  # the rows without a token t run too (their output is not read)
                variants += [group[b] for b in range(len(group)) if t >= len(group[b].tokens)]
            logits, _ = model.decode(model.encode(collate(variants, model.layout)))
            change = tvd(probabilities(logits[: len(rows)]), probs[rows]).numpy()
            for b, c in zip(rows, change):
                changes[b][t] = c
        for b, i in enumerate(indices):
            scores[i] = changes[b]
    return scores


# ---------------------------------------------------------------------------------------------
# Timing


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _gap(a, b) -> float:
    return max(
        float(np.max(np.abs(np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)))) for x, y in zip(a, b)
    )


def pipeline_suite(model, examples, settings: dict, explain: dict) -> dict:
    """The four J&W experiments as the pipeline runs them -> name -> (per-instance outputs, seconds)."""
    out = {}
    records, out["gradient"] = _timed(lambda: explain_examples(model, examples, explain, lambda _: None, ("gradient",)))
    out["gradient"] = ([r["gradient"] for r in records], out["gradient"])
    table, seconds = _timed(lambda: jw.permutation_experiment(model, examples, settings, 10))
    out["permutation"] = (table["median_output_difference"].tolist(), seconds)
    (table, _), seconds = _timed(lambda: jw.adversarial_experiment(model, examples, settings, 10, log=lambda _: None))
    out["adversarial"] = (table["eps_max_jsd"].tolist(), seconds)
    records, seconds = _timed(lambda: explain_examples(model, examples, explain, lambda _: None, ("loo",)))
    out["leave-one-out"] = ([r["loo"] for r in records], seconds)
    return out


def original_suite(model, examples, settings: dict, family: str, decoder: str) -> dict:
    out = {}
    for name, fn in (
        ("gradient", lambda: original_gradient(model, examples, decoder)),
        ("permutation", lambda: original_permutation(model, examples, settings["permutations"], 10, decoder)),
        ("adversarial", lambda: original_adversarial(model, examples, settings, 10, family, decoder)),
        ("leave-one-out", lambda: original_leave_one_out(model, examples, decoder)),
    ):
        out[name] = _timed(fn)
    return out


def peak_gemm_rates(size: int = 2048, repeats: int = 5) -> dict:
    """FLOP/s of a large single-precision matrix product on the configured threads, best of `repeats`,
    through each of torch's CPU libraries: MKL (what torch's `@` calls) and oneDNN (its
    `mkldnn._linear_pointwise`, the product of an inference linear layer). The faster is the rate no
    matrix product of the suite can beat. On a 2-core AMD EPYC machine they differed by 2.2×."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    products = {"MKL": lambda: a @ b}
    if torch.backends.mkldnn.is_available():
        weight = b.T.contiguous().to_mkldnn()  # (out, in), packed once
        products["oneDNN"] = lambda: torch.ops.mkldnn._linear_pointwise(a, weight, None, "none", [], "")
    return {name: 2 * size**3 / min(_timed(f)[1] for _ in range(repeats)) for name, f in products.items()}


def matrix_product_flops(model, examples) -> dict:
    """Multiply-adds x 2 of the matrix products each experiment of the pipeline must run on a BiLSTM
    with additive attention (hidden H per direction, embeddings E, attention width A), for n tokens
    per instance, m = n + 2 positions with <SOS>/<EOS>:

    - one encoder pass: every position, both directions, W_ih (4H x E) and W_hh (4H x H);
    - gradient: the pass and its backward to the inputs alone (W_hh^T and W_ih^T: as many again);
    - permutation, adversarial search: one pass each (each is its own job), then decode-only steps,
      whose element-wise work is not counted;
    - leave-one-out as `attnexp.explain.recurrent_deletion` runs it: the input projections once, the
      full input's W_hh recurrence, and per deletion the m - 1 restarted states' W_hh and attention
      half-projection (A x H)."""
    rnn = model.encoder.rnn
    H, E, A = rnn.hidden_size, rnn.input_size, model.attention.proj.out_features
    n = np.array([len(e.tokens) for e in examples], dtype=np.int64)
    positions = int((n + 2).sum())
    encoder = 2 * positions * 2 * (4 * H * E + 4 * H * H)
    restarted = int((n * (n + 1)).sum())
    loo = 2 * positions * 2 * (4 * H * E + 4 * H * H) + 2 * restarted * (4 * H * H + A * H)
    return {"gradient": 2 * encoder, "permutation": encoder, "adversarial": encoder, "leave-one-out": loo}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="results/models/sst/lstm-tanh/seed10")
    parser.add_argument("--data", default="results/data/sst")
    parser.add_argument("--instances", type=int, default=200, help="test instances timed (the first N)")
    parser.add_argument(
        "--reference-instances",
        type=int,
        default=0,
        help="instances the per-instance oracle loops run on (0: skip them)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()

    import yaml
    from dataset_files import dataset_files

    from attnexp.config import validate_config
    from attnexp.runs import restore_run
    from attnexp.runtime import set_determinism

    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    settings, explain = config["jain_wallace"], config["explain"]
    set_determinism(10, args.threads)
    data = dataset_files(args.data)
    run = restore_run(Path(args.model) / "model.pt", data)
    model, examples = run.model, run.test_examples(data)
    model.eval()
    fast_set, slow_set = examples[: args.instances], examples[: args.reference_instances]
    family = run.spec.family

    ours = pipeline_suite(model, fast_set, settings, explain)
    packed = packed_copy(model)
    references = {decoder: original_suite(packed, fast_set, settings, family, decoder) for decoder in DECODERS}
    n = len(fast_set)
    lines = [
        f"J&W suite on `{args.model}` ({run.spec.name}), the first {n} test instances of `{Path(args.data).name}`, {args.threads} CPU threads: "
        "the pipeline against the original code's strategy (test set sorted by length, batches of 32, one packed-BiLSTM "
        "encoder pass per batch, every step a full decode of the batch, the same step counts, no early stopping), "
        "with the original code's decoder computation and with this project's.",
        "",
        "| experiment | pipeline ms/instance | original strategy, original decoder ms/instance | speed-up | "
        "original strategy, pipeline decoder ms/instance | speed-up | max abs difference |",
        "|---|---|---|---|---|---|---|",
    ]
    original, lean = references["original"], references["pipeline"]
    for name in ours:
        (a, t_a), (b, t_b), (c, t_c) = ours[name], original[name], lean[name]
        gap = max(_gap(a, b), _gap(a, c))
        lines.append(
            f"| {name} | {1000 * t_a / n:,.2f} | {1000 * t_b / n:,.2f} | {t_b / t_a:,.1f}× | {1000 * t_c / n:,.2f} | {t_c / t_a:,.1f}× | {gap:.1e} |"
        )
    totals = [sum(t for _, t in suite.values()) for suite in (ours, original, lean)]
    lines.append(
        f"| **suite** | {1000 * totals[0] / n:,.2f} ({totals[0]:.1f} s) | {1000 * totals[1] / n:,.2f} ({totals[1]:.1f} s) | "
        f"**{totals[1] / totals[0]:,.1f}×** | {1000 * totals[2] / n:,.2f} ({totals[2]:.1f} s) | **{totals[2] / totals[0]:,.1f}×** | |"
    )

    if isinstance(getattr(model.encoder, "rnn", None), torch.nn.LSTM) and hasattr(model.attention, "proj"):
        # what no implementation of these algorithms beats: their matrix products at the machine's peak rate
        flops, rates = matrix_product_flops(model, fast_set), peak_gemm_rates()
        total, rate = sum(flops.values()), max(rates.values())
        floor, allowed, at_mkl = total / rate, totals[1] / 20, total / rates["MKL"]  # s; 20x the original strategy
        lines += [
            "",
            f"Arithmetic floor: the matrix products the pipeline's algorithms must run take {total / 1e9:,.0f} GFLOP "
            f"({', '.join(f'{k} {v / 1e9:,.0f}' for k, v in flops.items())}); at this machine's peak single-precision "
            f"rate ({rate / 1e9:,.0f} GFLOP/s, a 2048² product; {', '.join(f'{k} {v / 1e9:,.0f}' for k, v in rates.items())}) "
            f"that is {floor:.2f} s, before any element-wise work "
            f"(the adversary's 500 steps, the LSTM cells, softmaxes). The pipeline's suite takes {totals[0] / floor:.1f}× that floor; "
            f"a suite at the floor would be {totals[1] / floor:,.1f}× the original strategy (original decoder), "
            f"{totals[2] / floor:,.1f}× (pipeline decoder); 20× allows {allowed:.2f} s. "
            f"At the rate of torch's own CPU products (MKL) the products alone take {at_mkl:.2f} s, "
            f"leaving {allowed - at_mkl:.2f} s of that for every element-wise pass.",
        ]
    if slow_set:  # the per-instance oracle loops the tests check against
        rows = []
        fast, t_fast = _timed(lambda: jw.permutation_experiment(model, slow_set, settings, 10))
        slow, t_slow = _timed(lambda: reference_permutation(model, slow_set, settings["permutations"], 10))
        rows.append(
            (
                "permutation (100 per instance)",
                t_fast,
                t_slow,
                _gap([fast["median_output_difference"].to_numpy()], [slow]),
            )
        )
        (fast, _), t_fast = _timed(lambda: jw.adversarial_experiment(model, slow_set, settings, 10, log=lambda _: None))
        slow, t_slow = _timed(lambda: reference_adversarial(model, slow_set, settings, 10, family))
        rows.append(
            ("adversarial search (K = 5, 500 steps)", t_fast, t_slow, _gap([fast["eps_max_jsd"].to_numpy()], [slow]))
        )
        with torch.no_grad():
            full = np.stack([_alone(model, e)[2][0].numpy() for e in slow_set])
        fast, t_fast = _timed(lambda: leave_one_out(model, slow_set, full))
        slow, t_slow = _timed(lambda: reference_leave_one_out(model, slow_set))
        rows.append(("leave-one-out (every token)", t_fast, t_slow, _gap(fast, slow)))
        lines += [
            "",
            f"Per-instance oracle loops (one instance, permutation or deleted token at a time) on the first {len(slow_set)}:",
            "",
            "| experiment | pipeline ms/instance | per-instance loop ms/instance | speed-up | max abs difference |",
            "|---|---|---|---|---|",
        ]
        for name, t_fast, t_slow, gap in rows:
            lines.append(
                f"| {name} | {1000 * t_fast / len(slow_set):,.2f} | {1000 * t_slow / len(slow_set):,.1f} | {t_slow / t_fast:,.1f}× | {gap:.1e} |"
            )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak RSS {rss:,.0f} MB."]
    from benchmark_output import emit  # here: tests load this file as a module, without benchmarks/ on the path

    emit(lines, args.out)


if __name__ == "__main__":
    main()
