"""bAbI tasks 1-3 (Weston et al. 2015, en-10k), as Jain & Wallace use them.

Each question is one instance: the passage is every statement of its story so far, joined with " . "
(each statement is one sentence span), the question is the question line, the label is the answer
word. Official train/test; dev = 15 % of train (random_state 16377, not stratified), held out of
training unless `train_includes_dev` (J&W's Table 2 models trained on all 10,000 questions and were
selected on test, D-BABI; dev then only reports). The mirror's qa3 stand-in is the 1k training file
(D-DATA), which `stats.json` records.
"""

from __future__ import annotations

from attnexp.data.documents import Document, split_off
from attnexp.data.tokenize import tokenize

TASK_FILES = {
    "babi1": "qa1_single-supporting-fact",
    "babi2": "qa2_two-supporting-facts",
    "babi3": "qa3_three-supporting-facts",
}


def parse_task_file(path, split: str) -> list[Document]:
    docs: list[Document] = []
    story: list[list[str]] = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        number, _, rest = line.partition(" ")
        if not number.isdigit():
            raise ValueError(f"{path}:{line_no}: expected '<id> <text>', got {line[:40]!r}")
        if number == "1":
            story = []
        if "\t" in rest:
            fields = rest.split("\t")
            if len(fields) != 3:
                raise ValueError(f"{path}:{line_no}: expected 'question?<TAB>answer<TAB>support', got {rest!r}")
            tokens, sentences = [], []
            for statement in story:
                if tokens:
                    tokens.append(".")
                sentences.append((len(tokens), len(tokens) + len(statement)))
                tokens += statement
            docs.append(
                Document(
                    id=f"{split}-{line_no:06d}",
                    tokens=tokens,
                    label=fields[1].strip().lower(),
                    sentences=sentences,
                    question=tokenize(fields[0].strip()),
                )
            )
        else:
            story.append(tokenize(rest.strip().rstrip(".")))
    return docs


def read(files, cfg):
    stem = TASK_FILES[cfg["name"]]
    questions = parse_task_file(files.find(f"{stem}_train.txt"), "train")
    train, dev = split_off(questions, cfg["dev_fraction"], cfg["split_seed"], stratify=False)
    if cfg.get("train_includes_dev"):
        train = questions
    return {"train": train, "dev": dev, "test": parse_task_file(files.find(f"{stem}_test.txt"), "test")}
