"""Cutting a readable excerpt around the best match, with highlight offsets.

Tantivy's own snippet generator highlights single terms, so for ``数据`` it would
light up every 数 and every 据 in the text. Here each positive query text becomes a
regular expression that requires its terms in order, as adjacency in the index means it:
separated only by whitespace, but by none beside a character from U+3000 up (whitespace
there leaves an empty position: ``search.analyzer.GAP``), and by some where the query's own
terms had an empty position between them. A word that also matches as part of an
identifier (``batch`` in ``invoice_batch_writer``, ``ram`` in ``MaxRAMPercentage``) is lit
there too. Offsets are ``[start, end)`` into the returned snippet, in characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from voyager_sessions.search.analyzer import SOLO_FROM
from voyager_sessions.search.analyzer import is_word_char as _is_word_char


class Phrase(NamedTuple):
    """A query text as a snippet looks for it: its terms in order, a prefix on the last one, whether it also matches
    as part of an identifier, and the terms' offsets when they are not consecutive."""

    terms: tuple[str, ...]
    prefix: bool = False
    part: bool = False
    offsets: tuple[int, ...] | None = None


#: A run of whitespace (``str.isspace``'s characters: the same set for ``re``'s ``\\s`` on text).
_WS = re.compile(r"\s+")


def _solo(term: str, end: int) -> bool:
    return ord(term[end]) >= SOLO_FROM


@lru_cache(maxsize=256)
def _pattern(terms: tuple[str, ...], offsets: tuple[int, ...] | None = None) -> re.Pattern[str]:
    # Terms in order as adjacency in the index means it: whitespace between them (any, or none), none beside a
    # character from U+3000 up, and some where the query's terms had an empty position between them.
    # Boundaries are checked by hand afterwards; a Unicode class in a lookaround under
    # IGNORECASE costs milliseconds to compile, on every new query.
    out = [re.escape(terms[0])]
    for i in range(1, len(terms)):
        if offsets is not None and offsets[i] - offsets[i - 1] > 1:
            out.append(r"\s+")
        elif not (_solo(terms[i - 1], -1) or _solo(terms[i], 0)):
            out.append(r"\s*")
        out.append(re.escape(terms[i]))
    return re.compile("".join(out))


#: Texts up to this many characters have their haystack cached (a page of a search shows a few dozen events).
CACHED_CHARS = 65_536


def _haystack(text: str) -> str:
    """``text`` as terms are matched in it: NFKC-normalized where that keeps every offset, lower-cased where that
    does. Cached for texts of reasonable size: a shown event is searched for each term of a query and once more
    for its snippet."""
    return _cached_haystack(text) if len(text) <= CACHED_CHARS else _make_haystack(text)


def _make_haystack(text: str) -> str:
    hay = text
    if not text.isascii():
        normalized = unicodedata.normalize("NFKC", text)
        # Full-width forms normalize one-to-one; only then do offsets carry over.
        if len(normalized) == len(text):
            hay = normalized
    lowered = hay.lower()
    if len(lowered) == len(hay):  # terms are lower-case; so is the text we match them in
        hay = lowered
    return hay


_cached_haystack = lru_cache(maxsize=64)(_make_haystack)


def _part_edge(text: str, s: int) -> bool:
    """Whether two parts of an identifier meet at ``s`` (beside ``_``, at a capital after a small letter or digit,
    or at an acronym's last capital before a capitalised word: ``Max|RAM|Percentage``)."""
    before, at = text[s - 1], text[s]
    if before == "_" or at == "_":
        return True
    if at.isupper() and (before.islower() or before.isdigit()):
        return True
    return before.isupper() and at.isupper() and s + 1 < len(text) and text[s + 1].islower()


def find_spans(text: str, phrases: Sequence[tuple[Any, ...]]) -> list[tuple[int, int]]:
    """All ``[start, end)`` spans in ``text`` where one of ``phrases`` (``Phrase``, or ``(terms, is_prefix)``)
    occurs."""
    if not phrases or not text:
        return []
    hay = _haystack(text)
    n = len(hay)
    spans: list[tuple[int, int]] = []
    for phrase in phrases:
        terms, prefix = phrase[0], phrase[1]
        part = len(phrase) > 2 and phrase[2]
        offsets = phrase[3] if len(phrase) > 3 else None
        if not terms:
            continue
        lead = _is_word_char(terms[0][0])
        trail = _is_word_char(terms[-1][-1])
        for m in _pattern(tuple(terms), offsets).finditer(hay):
            s, e = m.span()
            if e <= s:
                continue
            if lead and s > 0 and _is_word_char(hay[s - 1]) and not (part and _part_edge(text, s)):
                continue
            if trail:
                if prefix:
                    while e < n and _is_word_char(hay[e]):
                        e += 1
                elif e < n and _is_word_char(hay[e]) and not (part and _part_edge(text, e)):
                    continue
            spans.append((s, e))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def make_snippet(
    text: str,
    phrases: Sequence[tuple[Any, ...]],
    *,
    width: int = 240,
    spans: list[tuple[int, int]] | None = None,
) -> tuple[str, list[tuple[int, int]]]:
    """An excerpt of about ``width`` characters around the densest match, whitespace folded.

    Returns the excerpt and highlight spans into it. With no match (a filter-only
    query) the excerpt is the start of the text. ``spans``: ``find_spans(text, phrases)``, when the caller has it.
    """
    if spans is None:
        spans = find_spans(text, phrases)
    if spans:
        # The window that covers the most matches, anchored a little before the first.
        best_start, best_count = spans[0][0], 0
        j, n_spans = 0, len(spans)
        for i, (s, _) in enumerate(spans):
            while j < n_spans and spans[j][1] <= s + width:
                j += 1
            if j - i > best_count:
                best_start, best_count = s, j - i
        lo = max(0, best_start - width // 4)
    else:
        lo = 0
    hi = min(len(text), lo + width)
    if hi - lo < width:
        lo = max(0, hi - width)
    # Don't cut words in half where a nearby space allows.
    if lo > 0:
        sp = text.rfind(" ", max(0, lo - 20), lo)
        if sp >= 0:
            lo = sp + 1
    if hi < len(text):
        sp = text.find(" ", hi, min(len(text), hi + 20))
        if sp >= 0:
            hi = sp
    out: list[str] = []
    highlights: list[tuple[int, int]] = []
    prefix = "…" if lo > 0 else ""
    out.append(prefix)
    pos = len(prefix)  # length of the output so far
    # Runs of whitespace fold to one space, a piece at a time: the text between highlights, then a highlight.
    # A match starts and ends with a non-space character, so no run of whitespace spans two pieces.
    at = lo
    for s, e in spans:
        if s < lo or e > hi:
            continue
        gap = _WS.sub(" ", text[at:s])
        match = _WS.sub(" ", text[s:e])
        out += (gap, match)
        pos += len(gap)
        highlights.append((pos, pos + len(match)))
        pos += len(match)
        at = e
    out.append(_WS.sub(" ", text[at:hi]))
    if hi < len(text):
        out.append("…")
    return "".join(out), highlights
