"""The best events of a broad query without scoring every event that matches it.

A query such as ``self.conn`` or ``インデックス`` can match a fifth of a history (190k of 1M
events). Ranked the plain way, Tantivy scores every match, and for a phrase that means
reading the positions of every term in every candidate: ~40 ms at 1M events, the tail of
the latency distribution. Yet a person reads the first twenty.

The ranking is BM25 times the event's kind weight (``log2(2 + w)``: a person's prompt 3×,
the agent's words 2×, tool calls 1.6×, tool output 1×), and BM25 is bounded:
``idf × (k1 + 1)`` for a term, the summed idf for a phrase (``tf / (tf + norm)`` < 1). So the
events are searched a kind tier at a time, heaviest first, and the search stops as soon
as the page's last score beats anything the remaining tiers could score (their weight
times the query's bound). The page is then exactly the page a full search returns (same
events, same scores; the tier filter adds 0 to a score) — this is MaxScore-style
early termination at the granularity of a kind, proven per query, never a sample.

What is given up: the count. A tier left unsearched is not counted, so ``total`` is then
the matches of the searched tiers, a lower bound, and the result says so
(``total_exact: false``; text output writes ``14307+``). Queries whose rarest term is in
fewer than :data:`WIDE` events take one pass as before (cheap, and exact): every needle
and every count a script relies on for a specific query stays exact.

The bound mirrors what :class:`~voyager_sessions.search.compiler.Compiler` builds (a term,
a phrase, an OR, filters, negations, the title boost); a node it does not know (a prefix
phrase) makes the bound unknown and the query takes one pass, as does a query carrying
the phrase bonus (several words in one event: its bound is too loose to ever stop early).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec
import tantivy

from voyager_sessions.core.model import KINDS
from voyager_sessions.search.plan import PART_SCORE, Stats, breadth, part_word, terms_of
from voyager_sessions.search.syntax import KIND_ALIASES, And, Filter, Node, Not, Or, Text
from voyager_sessions.search.index import KIND_WEIGHTS, SAID_KINDS, counted

#: BM25's k1: a term scores below ``idf * (K1 + 1)`` in any event.
K1 = 1.2
#: Below this many events for the rarest required term, one full pass is cheap: no tiers.
WIDE = 20_000
#: Scores are f32 in Tantivy: a margin so a rounding can never stop the search early.
SLACK = 1.001


def _tiers() -> list[tuple[int, tuple[str, ...]]]:
    """Kinds grouped by weight, heaviest first; kinds without a weight weigh 0 (as the index stores them)."""
    by: dict[int, list[str]] = {}
    for kind in KINDS:
        by.setdefault(KIND_WEIGHTS.get(kind, 0), []).append(kind)
    return [(w, tuple(by[w])) for w in sorted(by, reverse=True)]


TIERS = _tiers()


def in_said(kinds: tuple[str, ...]) -> bool:
    """Whether every kind of ``kinds`` has its words indexed in ``said`` too (the heaviest tier's kinds)."""
    return bool(kinds) and SAID_KINDS.issuperset(kinds)


def multiplier(weight: int) -> float:
    """What ``weight_by_field="w"`` multiplies a score by."""
    return math.log2(2.0 + weight)


def plan(root: Node | None, stats: Stats, *, phrase_terms: list[str] | None, title_boost: float) -> float | None:
    """The most any event can score for ``root`` (before the kind weight) as compiled with ``phrase_terms`` (the
    compiler's phrase bonus, if any) and a title boost of ``title_boost`` (0 when none); None when the query is
    not worth tiering (its rarest required term is in fewer than WIDE events) or cannot be bounded."""
    if root is None or stats.n is None or phrase_terms:
        # With the phrase bonus, the bound adds the phrase's best to every term's best: so far above what
        # events score that no tier is ever proven done (measured: 'query planner' searched all four, costing
        # a third more than one pass).
        return None
    b = _bound(root, stats)
    if b is None:
        return None
    if breadth(root, stats) < WIDE:
        return None
    return b + title_boost


def _bound(node: Node, stats: Stats) -> float | None:
    """The most ``node``'s compiled query adds to an event's score (None: unknown)."""
    if isinstance(node, Text):
        terms = terms_of(node)
        if not terms:
            return 0.0
        if node.prefix:
            return 1.0 if len(terms) == 1 else None  # a regex scores 1; a prefix phrase: unknown
        bound = (K1 + 1) * sum(stats.idf("body", t) for t in terms)
        part = part_word(node)
        if part is not None and stats.df("parts", part) > 0:  # the word, and the word as an identifier's part
            bound += PART_SCORE
        return bound
    if isinstance(node, Filter):
        if node.field == "provider" or (node.field == "kind" and len(KIND_ALIASES.get(node.value, ())) == 1):
            value = node.value if node.field == "provider" else KIND_ALIASES[node.value][0]
            return (K1 + 1) * stats.idf(node.field, value)
        return 1.0  # term sets and ranges score a constant 1
    if isinstance(node, Not):
        return 1.0  # everything (1) but it
    if isinstance(node, And):
        parts = [_bound(n, stats) for n in node.nodes if not isinstance(n, Not)]
        if any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None) if parts else 1.0
    if isinstance(node, Or):
        alts = [_bound(n, stats) for n in node.nodes]
        if any(a is None for a in alts):
            return None
        return sum(a for a in alts if a is not None)
    return None


class Ranked(msgspec.Struct):
    """The best ``want`` (score, address) pairs, best first, how many matches were counted, and whether that is
    all of them."""

    hits: list[tuple[float, tantivy.DocAddress]]
    count: int
    exact: bool


def ranked(
    searcher: tantivy.Searcher, *, bound: float, want: int, in_kinds: Callable[[tuple[str, ...], bool], tantivy.Query]
) -> Ranked:
    """The top ``want`` events of a query by score, searched a kind tier at a time until no later tier can beat
    the page. ``in_kinds(kinds, negate)`` is the query limited to those kinds (or to every other kind), adding
    nothing to a score."""
    hits: list[tuple[float, tantivy.DocAddress]] = []
    count = 0
    seen: tuple[str, ...] = ()
    for i, (_, kinds) in enumerate(TIERS):
        last = i == len(TIERS) - 1
        # The last tier is everything the others are not, so a kind the index holds but TIERS does not is searched.
        tier_q = in_kinds(seen, True) if last else in_kinds(kinds, False)
        res = searcher.search(tier_q, limit=max(want, 1), count=True, weight_by_field="w")
        count += counted(res)
        hits = sorted(hits + list(res.hits), key=lambda h: -h[0])[:want]
        seen += kinds
        if last:
            return Ranked(hits=hits, count=count, exact=True)
        rest = max(multiplier(w) for w, _ in TIERS[i + 1 :])
        if len(hits) >= want and hits[-1][0] > bound * rest * SLACK:
            return Ranked(hits=hits, count=count, exact=False)
    return Ranked(hits=hits, count=count, exact=True)  # pragma: no cover - the loop returns at the last tier
