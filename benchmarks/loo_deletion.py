"""Leave-one-out by deletion on recurrent encoders: the recurrent deletion that restarts each variant
from the full input's cached states (`attnexp.explain.recurrent_deletion`) against the generic batched
variants that re-run every shortened input (`attnexp.explain.perturb.variant_probabilities`), side by
side on the same random-weight model (J&W's sizes: 300-d embeddings, hidden 128, `tanh` attention) and
on documents with the lengths of a dataset's test split, the two alternating; with their largest
difference in the output probabilities.

    python benchmarks/loo_deletion.py --data results/data/imdb [--instances 20] [--encoders lstm lstm-ortho] [--threads 1] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from benchmark_output import emit  # noqa: E402
from dataset_files import dataset_files  # noqa: E402

from attnexp.data.documents import read_records  # noqa: E402
from attnexp.explain.perturb import variant_probabilities  # noqa: E402
from attnexp.explain.recurrent_deletion import deletion_probabilities  # noqa: E402
from attnexp.models import build_model  # noqa: E402
from attnexp.models.flat import FlatConfig  # noqa: E402
from attnexp.models.inputs import Example  # noqa: E402
from attnexp.papers.faithfulness.experiment import evenly_spaced  # noqa: E402
from attnexp.runtime import set_determinism  # noqa: E402
from attnexp.spec import parse_model_name  # noqa: E402

VOCAB = 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="results/data/imdb")
    parser.add_argument("--instances", type=int, default=20, help="test documents, evenly spaced")
    parser.add_argument("--encoders", nargs="+", default=["lstm", "lstm-ortho"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    set_determinism(10, args.threads)
    records = read_records(dataset_files(args.data).path("test"))
    records = [records[i] for i in evenly_spaced(len(records), args.instances)]
    rng = np.random.RandomState(0)
    examples = [
        Example(r["id"], rng.randint(4, VOCAB, size=len(r["tokens"])), 0, [(0, len(r["tokens"]))]) for r in records
    ]
    rows = []
    for encoder in args.encoders:
        torch.manual_seed(0)
        cfg = FlatConfig(
            vocab_size=VOCAB, n_classes=1, encoder=encoder, attention="tanh", embedding_dim=300, hidden_size=128
        )
        model = build_model(parse_model_name(f"{encoder}-tanh", "binary"), cfg).eval()
        fast = slow = difference = 0.0
        with torch.no_grad():
            for e in examples:  # the two paths alternate, document by document
                started = time.perf_counter()
                restarted = deletion_probabilities(model, [e])[0]
                fast += time.perf_counter() - started
                started = time.perf_counter()
                rerun = variant_probabilities(
                    model, [e], np.zeros(len(e.tokens), dtype=int), list(np.eye(len(e.tokens), dtype=bool)), "delete"
                )
                slow += time.perf_counter() - started
                difference = max(difference, float(np.abs(restarted - rerun).max()))
        rows.append((encoder, fast / len(examples), slow / len(examples), difference))
    lengths = np.array([len(e.tokens) for e in examples])
    lines = [
        f"{date.today().isoformat()}, {os.cpu_count()}-core {platform.machine()} CPU machine, {args.threads} torch "
        f"thread(s): `python benchmarks/loo_deletion.py --data {args.data} --instances {args.instances} "
        f"--encoders {' '.join(args.encoders)} --threads {args.threads}`",
        "",
        f"Leave-one-out by deletion of {len(examples)} test documents of `{args.data}` (median {np.median(lengths):.0f} "
        f"tokens, longest {lengths.max()}), random-weight `{{encoder}}-tanh` models, the two paths alternating per document.",
        "",
        "| encoder | recurrent deletion, s per document | re-run every variant, s per document | ratio | largest probability difference |",
        "|---|---|---|---|---|",
    ]
    for encoder, fast, slow, difference in rows:
        lines.append(f"| `{encoder}` | {fast:.3f} | {slow:.3f} | {slow / fast:.1f}× | {difference:.1e} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
