"""A preprocessed dataset's splits as model inputs: the examples of each split with the imposed
attention of a guided model (`SplitData`), loaded from the split files (`load_splits`, every guide
checked against its instance by id and length, D-ALIGN), and batches of a split in a given order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnexp.data.documents import DataFiles
from attnexp.data.splits import read_split
from attnexp.models.inputs import Example, collate, to_examples

__all__ = ["SplitData", "load_splits", "batches_of"]


@dataclass
class SplitData:
    """Examples of one split plus the imposed attention of a guided model (by instance id)."""

    examples: list[Example]
    guides: dict[str, np.ndarray] | None = None

    def labels(self) -> np.ndarray:
        return np.array([e.label for e in self.examples])


def _check_guides(examples: list[Example], guides: dict[str, np.ndarray], split: str) -> None:
    """Another model's attention must match the split instance by instance, id and length (D-ALIGN):
    the first instance that does not is named."""
    for e in examples:
        if e.id not in guides:
            raise ValueError(f"the guide attention has no {split} instance {e.id!r}")
        if len(guides[e.id]) != len(e.tokens):
            raise ValueError(
                f"the guide attention of {split} instance {e.id!r} has {len(guides[e.id])} weights, the instance has {len(e.tokens)} tokens"
            )
    extra = sorted(set(guides) - {e.id for e in examples})
    if extra:
        raise ValueError(f"the guide attention has {len(extra)} {split} instances the dataset lacks, e.g. {extra[0]!r}")


def load_splits(data: DataFiles, vocab: list[str], classes: list, guides: dict | None = None) -> dict[str, SplitData]:
    """train/dev/test as model inputs; another model's attention (`guides`, from
    `data.splits.read_guides`) must match every instance of every split."""
    splits = {}
    for split in ("train", "dev", "test"):
        examples = to_examples(read_split(data, split), vocab, classes)
        split_guides = None
        if guides is not None:
            split_guides = guides.get(split, {})
            _check_guides(examples, split_guides, split)
        splits[split] = SplitData(examples, split_guides)
    return splits


def batches_of(split: SplitData, order: list[np.ndarray], layout: str):
    """Batches of a split in the given order of index arrays."""
    for indices in order:
        yield collate([split.examples[i] for i in indices], layout, split.guides)
