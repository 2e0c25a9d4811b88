"""Training speed of one model (default SST `lstm-tanh`, the protocol of config.yaml) with the current
training step against earlier ones, trained in one process on the same data, epochs, seed and
checkpoint selection (`attnexp.train.loop.train_epochs`, the epochs of the variants alternating, so a busy
machine slows them alike):

- reference: the step before the fused GRU recurrence (`BiRNN` `per_direction`: one torch call per
  direction, a GRU one autograd cell at a time), torch's Bernoulli dropout, and HAN word-level chunks
  of a fixed 256 sentences padded to their longest;
- packed_for_loop: the step before the padded-batch recurrence and the fused optimiser
  (`optimizer_implementation: for_loop`, torch's per-parameter Adam loop; recurrent encoders on packed
  sequences), with the reference's dropout and chunks;
- previous: the step before the embedding's sparse backward and the HAN's sentences laid end to end
  (`embedding_backward: dense`: nn.Embedding's own (V, E) gradient per call, clipped with torch's
  clip_grad_norm_ rule; `han_layout: chunks`: conv/none word encoders in chunks, as the BiGRU);
- default: config.yaml and the models as they stand;
- lazy: the default with `embedding_update: lazy` (only the batch's embedding rows are updated, a
  deviation from the papers' Adam; a config option, not the default).

Reports seconds per epoch (training steps alone, and with the per-epoch dev/test evaluation that
`train_model` runs), the ratios to the reference (or the `--baseline` variant), the selected epoch and its dev/test accuracy, and
a per-step split (forward, backward, optimiser step; simple timers over `--profile-steps` batches,
the variants alternating batch by batch). Inputs: `results/data/<dataset>` and
`results/embeddings/<dataset>/vectors.npy` (`--results` names another results folder).

    python benchmarks/train_speed.py [--dataset sst] [--model lstm-tanh] [--epochs 8] [--threads 2] [--variants ...] [--baseline reference] [--results results] [--out benchmarks/train_speed.md]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
# variant -> settings overrides and model switches: `recurrence` (`BiRNN.implementation`, None: each
# cell's default), `dropout_draws` (`bernoulli`: torch's nn.Dropout in place of the S&S models' `Dropout`),
# `han_chunks` (`fixed`: word-level chunks of `sentence_chunk` sentences, whatever their padding),
# `embedding_backward` (`dense`: the embedding keeps nn.Embedding's dense backward), `han_layout`
# (`chunks`: a HAN's conv/none word encoder runs in chunks instead of sentences laid end to end)
VARIANTS = {
    "reference": {
        "recurrence": "per_direction",
        "dropout_draws": "bernoulli",
        "han_chunks": "fixed",
        "embedding_backward": "dense",
        "han_layout": "chunks",
    },
    "packed_for_loop": {
        "optimizer_implementation": "for_loop",
        "recurrence": "packed",
        "dropout_draws": "bernoulli",
        "han_chunks": "fixed",
        "embedding_backward": "dense",
        "han_layout": "chunks",
    },
    "previous": {"embedding_backward": "dense", "han_layout": "chunks"},
    "default": {},
    "lazy": {"embedding_update": "lazy"},
}
SWITCHES = ("recurrence", "dropout_draws", "han_chunks", "embedding_backward", "han_layout")


class DenseBackwardEmbedding(torch.nn.Embedding):
    """nn.Embedding that keeps its dense backward when training asks for sparse gradients."""

    @property
    def sparse(self) -> bool:
        return False

    @sparse.setter
    def sparse(self, value: bool) -> None:
        pass


def prepared(model, overrides: dict):
    """A copy of the model for one variant, switched as the variant says, and the variant's settings
    overrides."""
    from torch import nn

    from attnexp.models.encoders import Dropout, use_recurrence
    from attnexp.models.hierarchical import HierarchicalClassifier

    copied = copy.deepcopy(model)
    overrides = dict(overrides)
    switches = {k: overrides.pop(k, None) for k in SWITCHES}
    if switches["recurrence"] is not None:
        use_recurrence(copied, switches["recurrence"])
    if switches["dropout_draws"] == "bernoulli":
        for parent in list(copied.modules()):
            for name, child in parent.named_children():
                if isinstance(child, Dropout):
                    setattr(parent, name, nn.Dropout(child.p))
    hierarchical = [m for m in copied.modules() if isinstance(m, HierarchicalClassifier)]
    if switches["han_chunks"] == "fixed":
        for module in hierarchical:
            module.step_cost_words = float("inf")  # never cut before `sentence_chunk` sentences
    if switches["han_layout"] == "chunks":
        for module in hierarchical:
            module.lay_out_sentences = False
    if switches["embedding_backward"] == "dense" and isinstance(getattr(copied, "embedding", None), nn.Embedding):
        copied.embedding.__class__ = DenseBackwardEmbedding
    return copied, overrides


def setup(args):
    """-> (model, splits, settings, select_on, vectors source): the `fit` path up to training."""
    from dataset_files import dataset_files

    from attnexp.config import load_config, training_selection, training_settings
    from attnexp.data.splits import read_classes, read_vocab
    from attnexp.models.splits import load_splits
    from attnexp.plan import model_spec
    from attnexp.runtime import set_determinism
    from attnexp.train import build_and_initialise

    config = load_config()
    settings = training_settings(config, args.dataset, args.model)
    if args.epochs is not None:
        settings["epochs"] = args.epochs
    spec = model_spec(config, args.dataset, args.model)
    data = dataset_files(args.results / "data" / args.dataset)
    vectors_path = args.results / "embeddings" / args.dataset / "vectors.npy"
    set_determinism(args.seed, args.threads)
    vocab = read_vocab(data.vocab)
    classes = read_classes(data)
    splits = load_splits(data, vocab, classes, None)
    vectors = np.load(vectors_path) if vectors_path.exists() else None
    model, _ = build_and_initialise(spec, vocab, len(classes), vectors, settings)
    return (
        model,
        splits,
        settings,
        training_selection(config, args.dataset, args.model),
        vectors_path if vectors is not None else "random",
    )


def profile_steps(model, splits, settings, variants: dict, steps: int, seed: int) -> dict:
    """ms per training step in forward, zero_grad + backward, clipping and the embedding gradient, optimiser step: a fresh copy of the
    model per variant, the variants alternating batch by batch over the first `steps` batches."""
    from attnexp.models.inputs import length_bucketed_batches
    from attnexp.models.splits import batches_of
    from attnexp.train.objectives import class_weights, supervised_objective
    from attnexp.train.optimizers import build_optimizer
    from attnexp.train.parts import EmbeddingGradients

    train = splits["train"]
    objective = supervised_objective(class_weights(train.labels()) if model.decoder.out_features == 1 else None)
    lengths = np.array([e.length(model.layout) for e in train.examples])
    order = length_bucketed_batches(
        lengths, settings["batch_size"], np.random.RandomState(seed), settings["batch_noise"], settings["max_tokens"]
    )
    runs = {}
    with contextlib.ExitStack() as sparse:  # each copy's embedding gives sparse gradients, as in the training epochs
        for name, overrides in variants.items():
            copied, overrides = prepared(model, overrides)
            copied.train()
            gradients = EmbeddingGradients(copied, settings | overrides)
            sparse.enter_context(gradients.sparse())
            runs[name] = (copied, build_optimizer(copied, settings | overrides), gradients, np.zeros(4))
        batches = list(batches_of(train, order[:steps], model.layout))
        for i, batch in enumerate(batches):
            for name in list(runs) if i % 2 == 0 else list(runs)[::-1]:
                copied, optimizer, gradients, seconds = runs[name]
                t0 = time.perf_counter()
                loss = objective(copied, batch)
                t1 = time.perf_counter()
                optimizer.zero_grad(set_to_none=True)
                (loss if settings["loss_reduction"] == "sum" else loss / len(batch)).backward()
                t2 = time.perf_counter()
                gradients.after_backward(copied, settings["grad_clip"])
                t3 = time.perf_counter()
                optimizer.step()
                t4 = time.perf_counter()
                seconds += (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
    return {name: 1000 * seconds / len(batches) for name, (_, _, _, seconds) in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="sst")
    parser.add_argument("--model", default="lstm-tanh")
    parser.add_argument("--epochs", type=int, default=None, help="default: the protocol's (J&W: 8)")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (config train.threads: 2)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument(
        "--baseline", choices=list(VARIANTS), default="reference", help="the variant the speed-ups are to"
    )
    parser.add_argument("--profile-steps", type=int, default=60, help="batches of the per-step split (0: none)")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "train_speed.md")
    args = parser.parse_args()
    if args.baseline not in args.variants:
        parser.error(f"--variants must include {args.baseline} (the ratios are to it; --baseline names another)")
    from attnexp.train.loop import train_epochs

    model, splits, settings, select_on, vectors = setup(args)
    variants = {name: VARIANTS[name] for name in args.variants}
    device = torch.device("cpu")
    lines = {name: [] for name in variants}
    runs = {}
    for name, overrides in variants.items():
        copied, overrides = prepared(model, overrides)
        runs[name] = train_epochs(
            copied,
            splits,
            settings | overrides,
            select_on=select_on,
            seed=args.seed,
            device=device,
            log=lines[name].append,
        )
    results = {}
    for epoch in range(settings["epochs"]):
        for name in list(runs) if epoch % 2 == 0 else list(runs)[::-1]:  # who goes first alternates too
            if name in results:  # stopped early
                continue
            try:
                next(runs[name])
            except StopIteration as finished:
                results[name] = finished.value
            print(f"{name}: {lines[name][-1]}", flush=True)
    for name, run in runs.items():  # each run yielded its last epoch: let it return its result
        if name not in results:
            try:
                next(run)
            except StopIteration as finished:
                results[name] = finished.value
    split = (
        profile_steps(model, splits, settings, variants, args.profile_steps, args.seed) if args.profile_steps else None
    )
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    ref = results[args.baseline]
    ref_step = ref.timing["step_seconds"] / ref.timing["epochs_run"]
    ref_epoch = ref.timing["train_seconds"] / ref.timing["epochs_run"]
    rows = []
    for name, result in results.items():
        s = settings | variants[name]
        step = result.timing["step_seconds"] / result.timing["epochs_run"]
        epoch = result.timing["train_seconds"] / result.timing["epochs_run"]
        differs = max(
            (result.state_dict[k].float() - ref.state_dict[k].float()).abs().max().item() for k in ref.state_dict
        )
        rows.append(
            f"| {name} | {s['optimizer_implementation']} | {s['embedding_update']} | {s.get('embedding_backward') or 'rows'} | {s.get('recurrence') or 'default'} | {s.get('dropout_draws') or 'uniform'} | {s.get('han_chunks') or 'cost'} | {s.get('han_layout') or 'laid out'} | {step:.2f} | {ref_step / step:.2f}× | "
            f"{epoch:.2f} | {ref_epoch / epoch:.2f}× | {result.best_epoch} | {result.dev['accuracy']:.4f} | "
            f"{result.test['accuracy']:.4f} | {result.test['accuracy'] - ref.test['accuracy']:+.4f} | {differs:.1e} |"
        )
    # the run folder is the reader's own: named <run> (and the vectors relative to it)
    results = str(Path(args.results))
    command = "python benchmarks/train_speed.py " + " ".join(sys.argv[1:]).replace(results, "<run>/results")
    vectors = str(vectors).replace(results, "<run>/results")
    table = [
        f"Measured {time.strftime('%Y-%m-%d')} on a {os.cpu_count()}-core {platform.machine()} CPU machine: `{command}`",
        "",
        f"{args.dataset} `{args.model}`, {settings['protocol']} protocol ({settings['epochs']} epochs, batch {settings['batch_size']}, "
        f"Adam{' amsgrad' if settings['amsgrad'] else ''} lr {settings['lr']}, weight decay {settings['weight_decay']}, select on {select_on} {settings['select_metric']}), "
        f"seed {args.seed}, vectors {vectors}, {args.threads} CPU threads; the variants' epochs alternate in one process "
        f"(peak RSS {peak_rss:,.0f} MB, all variants together).",
        "",
        f"| variant | optimizer_implementation | embedding_update | embedding backward | recurrence | dropout | HAN chunks | HAN conv/none words | s/epoch training steps | speed-up | s/epoch with dev+test evaluation | speed-up | selected epoch | dev acc | test acc | test acc − {args.baseline} | max abs weight difference to {args.baseline} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    if split:
        table += [
            "",
            f"Per training step, ms (simple timers, the first {args.profile_steps} batches, variants alternating batch by batch):",
            "",
            "| variant | forward | zero_grad + backward | clipping, embedding gradient | optimiser step | total |",
            "|---|---|---|---|---|---|",
            *(
                f"| {name} | {f:.1f} | {b:.1f} | {c:.1f} | {o:.1f} | {f + b + c + o:.1f} |"
                for name, (f, b, c, o) in split.items()
            ),
        ]
    text = "\n".join(table)
    print(text)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
