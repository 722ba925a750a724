"""Counts in text output: "1 session", "2 sessions" (never "1 sessions", "(1 hits)").

Every text a person reads that says how many of something goes through :func:`count`. It
imports nothing, so the search path can use it at no start-up cost.
"""

from __future__ import annotations

#: Nouns whose plural is not the singular plus "s".
_IRREGULAR = {"match": "matches"}


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, singular for exactly one: ``count(1, "session")`` is "1 session"."""
    return f"{n} {noun if n == 1 else _IRREGULAR.get(noun, noun + 's')}"
