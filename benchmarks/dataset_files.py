"""A preprocessed dataset folder named on a benchmark's command line (`<run>/results/data/<dataset>`,
as the preprocess_dataset rule writes it) -> the files the library reads, the way a rule names them
among its inputs. Imported by the benchmarks after they put `src/` on the import path."""

from __future__ import annotations

from pathlib import Path

from attnexp.data.documents import SPLITS, DataFiles


def dataset_files(folder: str | Path) -> DataFiles:
    folder = Path(folder)
    return DataFiles(**{split: folder / f"{split}.jsonl" for split in SPLITS}, vocab=folder / "vocab.txt")
