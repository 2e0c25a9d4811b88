"""A preprocessed dataset folder named on a benchmark's command line (`<run>/results/data/<dataset>`,
as the preprocess_dataset rule writes it) -> the files the library reads, the way a rule names them
among its inputs; and a trained model's test instances from it. Imported by the benchmarks after they
put `src/` on the import path."""

from __future__ import annotations

from pathlib import Path

from attnexp.data.documents import SPLITS, DataFiles
from attnexp.papers.faithfulness.experiment import evenly_spaced
from attnexp.runs import Run, restore_run


def dataset_files(folder: str | Path) -> DataFiles:
    folder = Path(folder)
    return DataFiles(**{split: folder / f"{split}.jsonl" for split in SPLITS}, vocab=folder / "vocab.txt")


def evenly_spaced_test_examples(model: str | Path, folder: str | Path, instances: int) -> tuple[Run, list]:
    """The trained model in the folder `model` (its model.pt) on the dataset `folder`, and `instances`
    of its test examples, evenly spaced over the test file."""
    data = dataset_files(folder)
    run = restore_run(Path(model) / "model.pt", data)
    everything = run.test_examples(data)
    return run, [everything[i] for i in evenly_spaced(len(everything), instances)]
