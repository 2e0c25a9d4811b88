"""A deterministic, rule-based English tokenizer and sentence splitter.

The papers tokenise with spaCy (`en_core_web_sm`), whose models cannot be downloaded here. This module
follows spaCy's *tokenizer* rules closely for the cases that matter on our corpora:

- prefixes `" ' ( [ { < $ £ € #` and suffixes `. , ; : ! ? " ' ) ] } > %` are split off repeatedly;
- clitics are separate tokens: `don't` -> `do n't`, `can't` -> `ca n't`, `it's` -> `it 's`, and the
  spaCy special cases `gonna` -> `gon na`, `gotta` -> `got ta`;
- hyphens, slashes and `--` between letters are infixes (`co-writer` -> `co - writer`);
- a number glued to a unit is split (`28k` -> `28 k`, `10km` -> `10 km`);
- URLs, e-mail addresses and decimal numbers stay whole.

Known differences from spaCy: sentence boundaries come from punctuation rules, not from a dependency
parse; abbreviations are a fixed list; no tokenizer exceptions beyond the ones above. On the SST trees
this reproduces Jain & Wallace's spaCy output for >99.9 % of sentences (`tests/data/test_tokenize.py`).

Normalisation (lower-casing, digits -> `qqq`) is separate: `normalise`.
"""

from __future__ import annotations

import re

__all__ = [
    "tokenize",
    "split_sentences",
    "segment_sentences",
    "tokenize_document",
    "tokens_per_word",
    "normalise",
    "DIGIT_TOKEN",
]

DIGIT_TOKEN = "qqq"

# A URL or e-mail ends in a word character or "/": trailing punctuation is peeled off first, as in spaCy.
_URL = re.compile(r"^(?:https?://|www\.)\S*[\w/]$|^[\w.+-]+@[\w-]+\.[\w.-]*\w$", re.IGNORECASE)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,:]\d+)*$")
_PREFIX = re.compile(r"""^(?:``|\.\.\.+|-{2,}|[\"'`“‘(\[{<$£€#*])""")
_SUFFIX = re.compile(r"""(?:''|\.\.\.+|-{2,}|[\"'`”’)\]}>%,;:!?*])$""")
_CLITIC = re.compile(r"(?i)^(.+?)(n't|'s|'re|'ll|'ve|'d|'m|’s|n’t|’re|’ll|’ve|’d|’m)$")
_CLITICS = {"n't", "'s", "'re", "'ll", "'ve", "'d", "'m", "n’t", "’s", "’re", "’ll", "’ve", "’d", "’m"}
_SPECIAL = {"gonna": ("gon", "na"), "gotta": ("got", "ta"), "cannot": ("can", "not")}
_NUMBER_UNIT = re.compile(r"(?i)^(\d+(?:[.,]\d+)?)(k|m|km|kg|g|mb|gb|mph|am|pm|s|th|st|nd|rd)$")
_KEEP_UNIT = {"th", "st", "nd", "rd", "s"}  # ordinals and decades ("21st", "1990s") stay whole in spaCy
_INFIX = re.compile(r"(?<=[^\W\d_])(-+|/|–|—)(?=[^\W_])|(?<=\d)(-+|/)(?=[^\W\d_])|(?<=[a-z])\.(?=[A-Z])")
# Case-sensitive, like spaCy's exceptions: "No." is an abbreviation, "no." ends a sentence.
_ABBREVIATIONS = {
    "Mr.",
    "Mrs.",
    "Ms.",
    "Dr.",
    "Prof.",
    "St.",
    "Jr.",
    "Sr.",
    "vs.",
    "etc.",
    "e.g.",
    "i.e.",
    "Inc.",
    "Co.",
    "Corp.",
    "Ltd.",
    "Mt.",
    "No.",
    "U.S.",
    "U.K.",
    "a.m.",
    "p.m.",
    "Jan.",
    "Feb.",
    "Mar.",
    "Apr.",
    "Jun.",
    "Jul.",
    "Aug.",
    "Sep.",
    "Sept.",
    "Oct.",
    "Nov.",
    "Dec.",
    "MR.",
    "DR.",
    "ST.",
}


def _is_whole(chunk: str) -> bool:
    return bool(_URL.match(chunk) or _NUMBER.match(chunk)) or chunk in _ABBREVIATIONS or chunk.lower() in _CLITICS


def _split_chunk(chunk: str) -> list[tuple[str, bool]]:
    """Tokenise one whitespace-free chunk: peel prefixes, suffixes, clitics, then split infixes.
    Each token comes with `opens`: it was peeled off the front (an opening quote or bracket)."""
    prefixes: list[str] = []
    suffixes: list[str] = []
    while chunk:
        if _is_whole(chunk):
            break
        if m := _PREFIX.match(chunk):
            if m.end() == len(chunk):
                break
            prefixes.append(m.group())
            chunk = chunk[m.end() :]
            continue
        if m := _SUFFIX.search(chunk):
            if m.start() == 0:
                break
            suffixes.insert(0, m.group())
            chunk = chunk[: m.start()]
            continue
        # A final period is a suffix unless the chunk is an abbreviation or an initial ("J.").
        if chunk.endswith(".") and len(chunk) > 1 and not re.fullmatch(r"(?:[A-Za-z]\.)+", chunk):
            suffixes.insert(0, ".")
            chunk = chunk[:-1]
            continue
        if (m := _CLITIC.match(chunk)) and m.group(1) not in {"'", "’"}:
            suffixes.insert(0, m.group(2))  # "can't" -> "ca n't", as spaCy does
            chunk = m.group(1)
            continue
        break
    return [(p, True) for p in prefixes] + [(t, False) for t in _split_core(chunk) + suffixes]


def _split_core(chunk: str) -> list[str]:
    if not chunk:
        return []
    if chunk.lower() in _SPECIAL:
        first, second = _SPECIAL[chunk.lower()]
        return [chunk[: len(first)], chunk[len(first) :]] if second else [chunk]
    if (m := _NUMBER_UNIT.match(chunk)) and m.group(2).lower() not in _KEEP_UNIT:
        return [m.group(1), m.group(2)]
    if _URL.match(chunk):
        return [chunk]
    pieces: list[str] = []
    last = 0
    for m in _INFIX.finditer(chunk):
        pieces += [chunk[last : m.start()], m.group()]
        last = m.end()
    pieces.append(chunk[last:])
    return [p for p in pieces if p]


def _tokenize_with_roles(text: str) -> list[tuple[str, bool]]:
    return [pair for chunk in text.split() for pair in _split_chunk(chunk)]


def tokenize(text: str) -> list[str]:
    """Split text into tokens (case preserved)."""
    return [token for token, _ in _tokenize_with_roles(text)]


_SENTENCE_END = {".", "!", "?", "...", "…"}
_CLOSERS = {'"', "'", ")", "]", "}", "''", "”", "’"}


def split_sentences(tokens: list[str], opens: list[bool] | None = None) -> list[tuple[int, int]]:
    """Sentence spans [start, end) over `tokens`: a sentence ends after . ! ? (and any closing quotes or
    brackets) when the next token starts with an upper-case letter, a digit or an opening quote.
    `opens[i]` marks token i as opening punctuation (a straight quote is ambiguous without it)."""
    opens = opens or [False] * len(tokens)
    spans: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(tokens)
    while i < n:
        if (
            tokens[i] in _SENTENCE_END
            or (tokens[i].endswith("!") or tokens[i].endswith("?"))
            and len(tokens[i]) > 1
            and not tokens[i][0].isalnum()
        ):
            j = i + 1
            while j < n and tokens[j] in _CLOSERS | _SENTENCE_END and not opens[j]:
                j += 1
            if j >= n or tokens[j][:1].isupper() or tokens[j][:1].isdigit() or tokens[j][:1] in {'"', "“", "(", "'"}:
                spans.append((start, j))
                start = j
            i = j
            continue
        i += 1
    if start < n:
        spans.append((start, n))
    return spans


def segment_sentences(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The sentence spans with every span longer than `length` tokens cut into consecutive segments of
    `length` tokens (the last one shorter): text without sentence punctuation (one sentence per
    document) still gives a hierarchical model several items. Spans of at most `length` stay as they are."""
    if length < 1:
        raise ValueError(f"a segment needs at least 1 token, got {length}")
    return [(a, min(a + length, end)) for start, end in spans for a in range(start, max(end, start + 1), length)]


def tokenize_document(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of a whole document and its sentence spans. Blank lines are hard sentence boundaries."""
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        pairs = _tokenize_with_roles(paragraph)
        para_tokens = [token for token, _ in pairs]
        offset = len(tokens)
        spans += [(offset + a, offset + b) for a, b in split_sentences(para_tokens, [o for _, o in pairs])]
        tokens += para_tokens
    return tokens, spans


def normalise(token: str) -> str:
    """Jain & Wallace §4.1: lower-case; every token that contains a digit becomes `qqq`. Placeholder
    tokens such as MIMIC's de-identification mark `<DE>` are kept as they are."""
    if token.startswith("<") and token.endswith(">") and token[1:-1].isupper():
        return token
    return DIGIT_TOKEN if any(ch.isdigit() for ch in token) else token.lower()


def tokens_per_word(text: str) -> list[int]:
    """How many tokens each whitespace-separated word of `text` becomes, in order: a word-level
    annotation (a rationale over `text.split()`) maps onto the tokens of `tokenize_document(text)`."""
    return [len(_split_chunk(chunk)) for chunk in text.split()]
