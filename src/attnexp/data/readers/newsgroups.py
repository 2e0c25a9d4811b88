"""20 Newsgroups (bydate version, as scikit-learn's `fetch_20newsgroups` serves it).

Headers, signature blocks (footers) and quoted replies are removed with the same rules as
scikit-learn's `remove=('headers', 'footers', 'quotes')`; files are decoded as latin-1, as scikit-learn
does. Empty documents are dropped.

- `20news` (Jain & Wallace): rec.sport.baseball = 0 vs rec.sport.hockey = 1 from train+test pooled
  (`subset='all'`); stratified 80/20 train/test, then train -> 80/20 train/dev (random_state 13478).
- `20news20` (multi-class documents for Serrano & Smith-style models): all 20 groups, label = the
  group's index in sorted order; official bydate test; train -> 90/10 train/dev.
"""

from __future__ import annotations

import re

from attnexp.data.documents import Document, split_off

BINARY_GROUPS = {"rec.sport.baseball": 0, "rec.sport.hockey": 1}
_QUOTE = re.compile(r"(writes in|writes:|wrote:|says:|said:|^In article|^Quoted from|^\||^>)")


def strip_header(text: str) -> str:
    """Everything after the first blank line (scikit-learn `strip_newsgroup_header`)."""
    _, _, after = text.partition("\n\n")
    return after


def strip_quoting(text: str) -> str:
    """Drop lines that quote another post (scikit-learn `strip_newsgroup_quoting`)."""
    return "\n".join(line for line in text.split("\n") if not _QUOTE.search(line))


def strip_footer(text: str) -> str:
    """Drop the signature block after the last line of dashes or blanks (`strip_newsgroup_footer`)."""
    lines = text.strip().split("\n")
    for line_num in range(len(lines) - 1, -1, -1):
        if lines[line_num].strip().strip("-") == "":
            break
    return "\n".join(lines[:line_num]) if line_num > 0 else text


def clean_post(raw: bytes) -> str:
    return strip_quoting(strip_footer(strip_header(raw.decode("latin-1"))))


def _posts(files, split: str, groups=None):
    """(id, group, text) of every post of a bydate split, sorted by group then numeric post id."""
    paths = files.glob(f"20news-bydate-{split}/*/*")
    if not paths:
        raise FileNotFoundError(f"no posts under 20news-bydate-{split}/ in the 20 Newsgroups sources")
    posts = []
    for path in paths:
        group = path.parent.name
        if groups is None or group in groups:
            posts.append((f"{split}/{group}/{path.name}", group, clean_post(path.read_bytes())))
    posts.sort(key=lambda post: (post[1], _numeric_name(post[0])))
    return posts


def _numeric_name(post_id: str) -> tuple[int, str]:
    """Posts are numbered files; sort them by number, as the bydate folders list them."""
    name = post_id.rsplit("/", 1)[1]
    return (int(name), "") if name.isdigit() else (0, name)


def _documents(posts, label_of):
    docs = (Document.from_text(post_id, text, label_of[group]) for post_id, group, text in posts)
    return [d for d in docs if d.tokens]


def read_binary(files, cfg):
    posts = _posts(files, "train", BINARY_GROUPS) + _posts(files, "test", BINARY_GROUPS)
    docs = _documents(posts, BINARY_GROUPS)
    rest, test = split_off(docs, cfg["test_fraction"], cfg["split_seed"])
    train, dev = split_off(rest, cfg["dev_fraction"], cfg["split_seed"])
    return {"train": train, "dev": dev, "test": test}


def read_all_groups(files, cfg):
    train_posts, test_posts = _posts(files, "train"), _posts(files, "test")
    label_of = {group: i for i, group in enumerate(sorted({g for _, g, _ in train_posts}))}
    train, dev = split_off(_documents(train_posts, label_of), cfg["dev_fraction"], cfg["split_seed"])
    return {"train": train, "dev": dev, "test": _documents(test_posts, label_of)}
