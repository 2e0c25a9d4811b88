"""CNN reading comprehension, Chen et al. (2016) preprocessed data (`cnn.tar.gz` from
https://cs.stanford.edu/~danqi/data/cnn.tar.gz), as used by Jain & Wallace (§4.2, notebook
`preprocess/CNN/CNN.ipynb`).

`cnn/{train,dev,test}.txt` hold one example per 4 lines: question, answer, passage, blank line (the
last blank line may be missing), as parsed by Chen et al.'s `load_data` (rc-cnn-dailymail). Question and passage are already tokenised, with `@entityN` and
`@placeholder` tokens, so they are split on whitespace and never re-tokenised. Label = the answer
entity string (e.g. "@entity12"); the whole passage is one sentence span. Official splits.

Config keys read: none. Ids are `{split}-{example index:06d}`.
"""

from __future__ import annotations

from attnexp.data.documents import Document


def _blocks(path):
    """(first line number, lines) of each 4-line block, streamed (train.txt is ~1 GB). A short last
    block (no final blank line) is kept; a block of only blank lines at the end is not."""
    block, first = [], 1
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not block:
                first = line_no
            block.append(line.rstrip("\r\n"))
            if len(block) == 4:
                yield first, block
                block = []
    if any(line.strip() for line in block):
        yield first, block


def _examples(path, split):
    docs = []
    for index, (line_no, block) in enumerate(_blocks(path)):
        question, answer, passage, separator = (block + ["", "", "", ""])[:4]
        if not (question.strip() and passage.strip() and len(answer.split()) == 1) or separator.strip():
            raise ValueError(
                f"{path}:{line_no}: expected an example as 4 lines (question, one answer entity, passage, "
                f"blank line), got {block!r:.200}"
            )
        tokens = passage.split()
        if answer.strip() not in tokens:  # Chen et al.'s loader asserts this too
            raise ValueError(f"{path}:{line_no}: the answer {answer.strip()!r} does not occur in the passage")
        docs.append(
            Document(f"{split}-{index:06d}", tokens, answer.strip(), [(0, len(tokens))], question=question.split())
        )
    return docs


def read(files, cfg):
    return {split: _examples(files.find(f"cnn/{split}.txt"), split) for split in ("train", "dev", "test")}
