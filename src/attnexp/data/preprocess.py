"""The preprocessing protocol shared by every dataset (Jain & Wallace §4.1, Serrano & Smith §3).

A reader (`attnexp.data.readers`) turns raw source files into tokenised `Document`s per split
(`attnexp.data.documents`, which also reads the split files back). This
module then applies what every dataset shares: normalisation (lower-case, digits -> `qqq`), the length
filter (D-LEN), the vocabulary from the training split (D-VOCAB), and the human-readable outputs:
`{split}.jsonl`, `vocab.txt` and `stats.json`.

Special tokens are not written into the token lists: `<SOS>`/`<EOS>` are added by the models'
batching (J&W §1), `<PAD>`/`<UNK>` are ids. `vocab.txt` lists them first so that line number = id.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from attnexp import io
from attnexp.data.documents import SPLITS, Document
from attnexp.data.readers import reader_for

__all__ = [
    "SPECIAL_TOKENS",
    "length_filter",
    "build_vocab",
    "dataset_stats",
    "write_dataset",
]

SPECIAL_TOKENS = ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]  # ids 0..3, J&W §1


def length_filter(docs: list[Document], lo: int | None, hi: int | None, missing_bound: str = "split_extreme"):
    """J&W §4.1.4: keep iff lo < n < hi (strict), n = number of tokens. With `missing_bound:
    split_extreme` (D-LEN, the original behaviour) a missing bound is the split's own min (max) n, so
    the documents of extreme length are dropped; with `none` a missing bound does not filter."""
    if missing_bound not in {"split_extreme", "none"}:
        raise ValueError(f"length_filter_missing_bound must be 'split_extreme' or 'none', got {missing_bound!r}")
    if not docs:
        return docs
    lengths = [len(d.tokens) for d in docs]
    if missing_bound == "split_extreme":
        lo = min(lengths) if lo is None else lo
        hi = max(lengths) if hi is None else hi
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    return [d for d, n in zip(docs, lengths) if lo < n < hi]


def build_vocab(train: list[Document], min_count: int, count: str = "document") -> list[str]:
    """Vocabulary from the training split (D-VOCAB): special tokens, then every word whose document
    frequency (J&W `min_df`) or total count (S&S) is >= `min_count`, by decreasing count, then A-Z."""
    if count not in {"document", "token"}:
        raise ValueError(f"count_by must be 'document' or 'token', got {count!r}")
    counts: Counter = Counter()
    for doc in train:
        words = doc.tokens + (doc.question or [])
        counts.update(set(words) if count == "document" else words)
    kept = [w for w, c in counts.items() if c >= min_count and w not in SPECIAL_TOKENS]
    return SPECIAL_TOKENS + sorted(kept, key=lambda w: (-counts[w], w))


def dataset_stats(name: str, splits: dict[str, list[Document]], vocab: list[str], sources: list[dict]) -> dict:
    def split_stats(docs):
        by_label = Counter(str(d.label) for d in docs)
        return {
            "n": len(docs),
            "by_label": {k: by_label[k] for k in sorted(by_label, key=_label_order)},
            "mean_length": round(float(np.mean([len(d.tokens) for d in docs])), 4) if docs else 0.0,
        }

    stats = {
        "dataset": name,
        "splits": {split: split_stats(splits[split]) for split in SPLITS},
        "vocab_size": len(vocab),
        "sources": [{"file": s["file"], "sha256": s["sha256"], "substitute": s["substitute"]} for s in sources],
    }
    names = {d.label: d.extra["label_name"] for docs in splits.values() for d in docs if "label_name" in d.extra}
    if names:  # a user's dataset: its own label values, in class-index order
        stats["classes"] = [names[i] for i in sorted(names)]
    return stats


def _label_order(label: str):
    return (0, int(label), "") if label.lstrip("-").isdigit() else (1, 0, label)


def write_dataset(out_dir: str | Path, splits: dict[str, list[Document]], vocab: list[str], stats: dict) -> None:
    """Write `{split}.jsonl`, `vocab.txt`, `stats.json` (with the sha256 of the others), each atomically."""
    out_dir = Path(out_dir)
    for split in SPLITS:
        io.write_jsonl(out_dir / f"{split}.jsonl", (d.to_record() for d in splits[split]))
    io.write_text(out_dir / "vocab.txt", "\n".join(vocab) + "\n")
    # the digests every reader checks (`read_records`, `data.splits.read_vocab`)
    files = {name: io.file_digest(out_dir / name) for name in [f"{split}.jsonl" for split in SPLITS] + ["vocab.txt"]}
    io.write_json(out_dir / "stats.json", stats | {"files": files})


class SplitSizeError(AssertionError):
    """Split sizes differ from the protocol's published numbers beyond the tolerance."""


def check_expected_sizes(name: str, stats: dict, expected: dict, tolerance: float) -> None:
    """Assert the published sizes (`expected[split][label]`, label "all" = whole split)."""
    problems = []
    for split, by_label in expected.items():
        ours = stats["splits"][split]
        for label, want in by_label.items():
            got = ours["n"] if label == "all" else ours["by_label"].get(label, 0)
            if abs(got - want) > tolerance * want:
                problems.append(f"{split} label {label}: expected {want} (tolerance {tolerance:.0%}), got {got}")
    if problems:
        raise SplitSizeError(f"dataset {name!r}: split sizes differ from the protocol:\n  " + "\n  ".join(problems))


def build_dataset(name: str, cfg: dict, files, sources: list[dict], out_dir, *, missing_bound: str, log=print) -> dict:
    """Read -> normalise -> length filter -> vocabulary -> check sizes -> write. Returns the stats."""
    splits = reader_for(name, cfg)(files, {**cfg, "name": name})
    if set(splits) != set(SPLITS):
        raise ValueError(f"reader for {name!r} returned splits {sorted(splits)}, expected {list(SPLITS)}")
    if cfg["protocol"] != "generated":  # generated types (`w0042`, `pos3`) are not text to normalise
        splits = {split: [d.normalised() for d in docs] for split, docs in splits.items()}
    if cfg.get("segment_length"):  # the hierarchical models' items: long sentences cut into segments
        splits = {split: [d.segmented(cfg["segment_length"]) for d in docs] for split, docs in splits.items()}
    for split in SPLITS:
        before = len(splits[split])
        if cfg["length_filter"] is not None:
            bounds = cfg["length_filter"]
            splits[split] = length_filter(splits[split], bounds["lo"], bounds["hi"], missing_bound)
        log(f"{name}/{split}: {before} read, {len(splits[split])} after the length filter")
    vocab = build_vocab(splits["train"], cfg["min_count"], cfg["count_by"])
    stats = dataset_stats(name, splits, vocab, sources)
    if cfg.get("segment_length"):
        stats["segment_length"] = cfg["segment_length"]
    elif splits["test"] and all(len(d.sentences) < 2 for d in splits["test"]):
        log(
            f"{name}: every test document is one sentence, so a hierarchical model (HAN) has nothing to erase "
            f"(S&S §4); datasets.{name}.segment_length cuts sentences into segments of that many tokens"
        )
    if cfg["protocol"] == "planted":  # the planted matrices and the seed (G is in each record)
        stats["planted"] = {**cfg["planted"], "seed": cfg["split_seed"]}
    affected = {split for s in sources for split in s.get("splits_affected", [])}
    if affected:
        log(f"{name}: stand-in files change the {sorted(affected)} splits; their published sizes are not asserted")
    expected = {split: sizes for split, sizes in cfg["expected"].items() if split not in affected}
    check_expected_sizes(name, stats, expected, cfg["size_tolerance"])
    write_dataset(out_dir, splits, vocab, stats)
    return stats
