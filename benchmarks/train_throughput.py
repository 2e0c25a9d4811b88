"""Training throughput per encoder: tokens/s, peak memory and padding share, length-bucketed batches
(what `attnexp.train` does) against the straightforward loop (random batches, no bucketing).

Inputs: random word ids with the real length distributions of SST and IMDB training splits
(`results/data/{sst,imdb}/train.jsonl`; run `snakemake data` first; `--data` names other dataset
folders), J&W sizes (300-d embeddings, hidden 128, batch 32). Each configuration runs in a fresh
subprocess so its peak RSS is its own.

    python benchmarks/train_throughput.py [--batches 40] [--threads 2] [--data <run>/results/data/sst ...] [--encoders lstm cnn average] [--out benchmarks/train_throughput.md]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ENCODERS = ("lstm", "cnn", "average")
DATASETS = {
    "sst": "SST-length",
    "imdb": "IMDB-length",
}  # the default inputs, results/data/<name>, and their rows' label


def train_split(folder: Path) -> Path:
    path = folder / "train.jsonl"
    if not path.exists():
        sys.exit(f"error: {path} is missing: run `snakemake --cores 2 data` first")
    return path


def lengths_of(folder: Path) -> np.ndarray:
    return np.array([len(json.loads(line)["tokens"]) for line in train_split(folder).open(encoding="utf-8")])


def run_one(folder: Path, encoder: str, bucketed: bool, batches: int, threads: int) -> dict:
    """Train `batches` steps of lstm/cnn/average + tanh attention; return tokens/s and padding share."""
    import torch

    from attnexp.models.flat import FlatClassifier, FlatConfig
    from attnexp.models.inputs import Example, collate, length_bucketed_batches

    torch.manual_seed(0)
    torch.set_num_threads(threads)
    rng = np.random.RandomState(0)
    lengths = lengths_of(folder)
    examples = [
        Example(str(i), rng.randint(4, 20000, size=n), int(rng.rand() < 0.5), [(0, n)]) for i, n in enumerate(lengths)
    ]
    model = FlatClassifier(FlatConfig(vocab_size=20000, n_classes=1, encoder=encoder, attention="tanh"))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True)
    positions = np.array([e.length("sos_eos") for e in examples])
    if bucketed:
        order = length_bucketed_batches(positions, 32, rng)
    else:
        shuffled = rng.permutation(len(examples))
        order = [shuffled[i : i + 32] for i in range(0, len(shuffled), 32)]
    order = order[:batches]
    computed = real = 0
    start = time.perf_counter()
    for indices in order:
        batch = collate([examples[i] for i in indices], "sos_eos")
        computed += batch.tokens.numel()
        real += int(batch.lengths.sum())
        logits, _ = model(batch)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits.squeeze(-1), batch.labels.float(), reduction="sum"
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    seconds = time.perf_counter() - start
    return {
        "tokens_per_s": real / seconds,
        "padding_share": 1 - real / computed,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40, help="training steps per configuration")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[REPO / "results" / "data" / name for name in DATASETS],
        help="preprocessed dataset folders whose training lengths are used (default: results/data/sst and imdb)",
    )
    parser.add_argument("--encoders", nargs="+", choices=ENCODERS, default=list(ENCODERS))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "train_throughput.md")
    parser.add_argument("--one", nargs=3, metavar=("FOLDER", "ENCODER", "BUCKETED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # child process: one configuration, JSON on stdout
        folder, encoder, bucketed = args.one
        print(json.dumps(run_one(Path(folder), encoder, bucketed == "1", args.batches, args.threads)))
        return
    for folder in args.data:
        train_split(folder)  # a missing input stops here, not inside a child process
    rows = []
    for folder in args.data:
        label = DATASETS.get(folder.name, f"{folder.name}-length")
        for encoder in args.encoders:
            result = {}
            for bucketed in ("1", "0"):
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--batches",
                        str(args.batches),
                        "--threads",
                        str(args.threads),
                        "--one",
                        str(folder.resolve()),
                        encoder,
                        bucketed,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=REPO,
                )
                result[bucketed] = json.loads(out.stdout)
            b, r = result["1"], result["0"]
            rows.append(
                f"| {label} | {encoder} | {b['tokens_per_s']:,.0f} | {r['tokens_per_s']:,.0f} | "
                f"{b['tokens_per_s'] / r['tokens_per_s']:.2f}× | {b['padding_share']:.1%} | {r['padding_share']:.1%} | "
                f"{b['peak_rss_mb']:,.0f} | {r['peak_rss_mb']:,.0f} |"
            )
            print(rows[-1], flush=True)
    table = "\n".join(
        [
            f"Training throughput, {args.batches} steps of batch 32, {args.threads} CPU threads, 300-d embeddings, hidden 128, tanh attention.",
            "",
            "| inputs | encoder | tokens/s bucketed | tokens/s random batches | ratio | padding bucketed | padding random | peak RSS MB bucketed | peak RSS MB random |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    args.out.write_text(table + "\n", encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
