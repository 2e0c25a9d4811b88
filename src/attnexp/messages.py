"""How error messages name things: the closest valid name to a mistyped one."""

from __future__ import annotations

import difflib

__all__ = ["close_match"]


def close_match(name: str, valid, noun: str = "datasets") -> str:
    """ "; did you mean 'x'? (datasets: a, b, …)" for an unknown name, for error messages."""
    valid = sorted(valid)
    close = difflib.get_close_matches(name, valid, n=1)
    return (f"; did you mean {close[0]!r}?" if close else "") + f" ({noun}: {', '.join(valid)})"
