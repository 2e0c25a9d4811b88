"""Serrano & Smith suite speed: the whole suite (single-weight erasure + removal until flip, every
ranking) per test instance, against one plain forward pass over the same test set and against a
straightforward per-instance reference loop (one instance, one erased set at a time, through
`model.decode`), which the tests use as the oracle.

    python benchmarks/serrano_smith_speed.py --data results/data/20news20 --model han-rnn --threads 2
    python benchmarks/serrano_smith_speed.py --checkpoint results/models/sst/lstm-tanh/seed10/model.pt --data results/data/sst

Without `--checkpoint` the model is freshly initialised from the dataset's vocabulary and the S&S
protocol's widths: the cost of every intervention is the same whatever the weights (every prefix of
every ranking is decoded), so timing needs no trained model. Prints a Markdown table (`--out`: also
writes it to a file).
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


from attnexp.experiments.cached import cached_batches, decode_heads  # noqa: E402
from attnexp.metrics import jsd  # noqa: E402
from attnexp.models.inputs import collate  # noqa: E402
from attnexp.models.outputs import probabilities  # noqa: E402
from attnexp.papers.serrano_smith import experiment as ss  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Reference loop: one instance, one erased set, one decode at a time


def _alone(model, example):
    """-> encoded, readout attention per head (H, L), output probabilities (C,)."""
    encoded = model.encode(collate([example], model.layout))
    logits, attention = model.decode(encoded)
    heads = attention[:, None] if encoded.heads is None else encoded.heads  # (1, H, L)
    return encoded, heads.detach()[0], probabilities(logits).detach()[0]


def _erased_probs(model, encoded, heads, erased: list[int]):
    """Erase items from every head, renormalise each head (all zeros when nothing is left)."""
    weights = heads.clone()
    weights[:, erased] = 0
    total = weights.sum(-1, keepdim=True)
    weights = torch.where(total > 0, weights / torch.where(total > 0, total, 1.0), 0.0)
    return probabilities(decode_heads(model, encoded, weights[None]))[0]


def reference_interventions(model, examples, settings: dict, seed: int) -> tuple[list[dict], list[dict]]:
    """Per instance with n > 1: the same rows as `run_interventions`, computed one at a time."""
    erasure, removal = [], []
    for index, example in enumerate(examples):
        with torch.no_grad():
            encoded, attention, p = _alone(model, example)  # attention (H, L)
        positions = encoded.mask[0].nonzero().squeeze(-1).tolist()
        n = len(positions)
        if n < 2:
            continue
        predicted = int(p.argmax())
        alpha = attention[None].clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(probabilities(decode_heads(model, encoded, alpha))[0, predicted], alpha)
        g = grad[0]  # (H, L)
        a = attention[:, positions].mean(0)  # the head mean
        keys = {
            "attention": a,
            "gradient": g[:, positions].sum(0),
            "attn_x_grad": (attention * g)[:, positions].sum(0),
            "attention_ascending": -a,
        }
        orders = {
            name: [positions[i] for i in torch.sort(key, descending=True, stable=True).indices.tolist()]
            for name, key in keys.items()
        }
        tops = np.array([positions.index(orders[name][0]) for name in ss.TOP_BY])
        randoms = ss.random_items(n, tops, settings["random_item"], seed, index)
        with torch.no_grad():
            for name, top, rand in zip(ss.TOP_BY, tops, randoms):
                q_top = _erased_probs(model, encoded, attention, [positions[top]])
                q_rand = _erased_probs(model, encoded, attention, [positions[rand]])
                erasure.append(
                    {
                        "id": example.id,
                        "top_by": name,
                        "top": positions[top],
                        "random": positions[rand],
                        "js_top": float(jsd(p, q_top)),
                        "js_random": float(jsd(p, q_rand)),
                        "flip_top": int(q_top.argmax()) != predicted,
                        "flip_random": int(q_rand.argmax()) != predicted,
                    }
                )
            rankings = [
                ("random", j, [positions[i] for i in perm])
                for j, perm in enumerate(ss.random_rankings(n, settings["permutations"], seed, index))
            ]
            rankings += [
                (name, 0, orders[name])
                for name in list(ss.RANKINGS)[1:]
                if name != "attention_ascending" or settings["attention_ascending"]
            ]
            for name, permutation, order in rankings:
                removed = None
                for k in range(1, n + 1):
                    if int(_erased_probs(model, encoded, attention, order[:k]).argmax()) != predicted:
                        removed = k
                        break
                removal.append({"id": example.id, "ranking": name, "permutation": permutation, "removed": removed})
    return erasure, removal


# ---------------------------------------------------------------------------------------------
# Timing


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _model(args):
    from dataset_files import dataset_files

    from attnexp.config import training_settings, validate_config
    from attnexp.data.splits import read_classes, read_vocab
    from attnexp.models import build_model, model_config
    from attnexp.runs import restore_run
    from attnexp.spec import parse_model_name

    data = dataset_files(args.data)
    if args.checkpoint:
        run = restore_run(args.checkpoint, data)
        return run.model, run.test_examples(data)
    import yaml

    from attnexp.runs import load_test_examples

    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    dataset = Path(args.data).name
    settings = training_settings(config, dataset, args.model)
    vocab, classes = read_vocab(data.vocab), read_classes(data)
    spec = parse_model_name(args.model, config["datasets"][dataset]["task"])
    n_out = 1 if len(classes) == 2 and spec.family == "flat" else len(classes)
    torch.manual_seed(0)
    model = build_model(
        spec, model_config(spec, len(vocab), n_out, 200 if spec.family == "hierarchical" else 300, settings)
    ).eval()
    return model, load_test_examples(data, vocab, [str(c) for c in classes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a preprocessed dataset folder, e.g. results/data/20news20")
    parser.add_argument("--model", default="han-rnn", help="model name (freshly initialised) when no --checkpoint")
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--instances", type=int, default=None, help="test instances timed (the first N; default all)")
    parser.add_argument("--reference-instances", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()

    import yaml

    from attnexp.config import validate_config

    settings = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))["serrano_smith"]
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    model, examples = _model(args)
    examples = examples[: args.instances] if args.instances else examples
    seed = settings["seed"]

    def forward():
        for _ in cached_batches(model, examples, settings["max_tokens"]):
            pass

    forward()  # warm-up (allocator, thread pool)
    _, t_forward = _timed(forward)
    (erasure, removal), t_suite = _timed(
        lambda: ss.run_interventions(model, examples, settings, seed, log=lambda _: None)
    )
    slow_set = examples[: args.reference_instances]
    _, t_reference = _timed(lambda: reference_interventions(model, slow_set, settings, seed))
    n_ref = len(slow_set)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    name = model.spec.name
    lines = [
        "| model | instances | forward ms/inst | S&S suite ms/inst | suite / forward | reference loop ms/inst | reference / suite | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
        f"| {name} ({Path(args.data).name}, {model.spec.attended}) | {len(examples)} | {1000 * t_forward / len(examples):.2f} | "
        f"{1000 * t_suite / len(examples):.2f} | {t_suite / t_forward:.2f}× | {1000 * t_reference / n_ref:.1f} (first {n_ref}) | "
        f"{(t_reference / n_ref) / (t_suite / len(examples)):.0f}× | {peak:.0f} |",
    ]
    from benchmark_output import emit  # here: tests load this file as a module, without benchmarks/ on the path

    emit(lines, args.out)


if __name__ == "__main__":
    main()
