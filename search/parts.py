"""Aggregations with a bucket per session, on histories with more sessions than one aggregation may hold.

Tantivy aborts an aggregation that would make more than 65,000 buckets (sub-aggregations'
included). A heavy user's common word is said in more sessions than that (100,000 sessions
make 76,000 buckets for ``index``), and every aggregation keyed by session (a several-term
query's coverage, ``--sessions`` counts, the web page's facets) then failed, reported as a
damaged index.

So such an aggregation is split by session key: ``sk`` is a hash of the session id, uniform
over ``[0, 2**63)``, so ``P`` equal ranges of it hold about ``1/P`` of the sessions each, and
no session is in two. A part adds a range on ``sk`` (a fast-field range: no term dictionary)
to the query. The first aggregation is one part; when Tantivy refuses it for its buckets, the
parts double until each fits, and the count that sufficed is the next aggregation's start (a
history only grows), so a large history pays the refusal once, not every search.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tantivy

#: The session keys' range: ``search.index.session_key`` is 63 bits.
KEY_SPACE = 1 << 63
#: Never more parts than this (2**16 parts of 65,000 buckets is more sessions than any history holds).
MAX_PARTS = 1 << 16

#: How many parts the last aggregation needed (a hint for the next one).
_parts = 1


def too_many_buckets(exc: BaseException) -> bool:
    """Whether Tantivy refused an aggregation for the number of buckets it would make."""
    return "bucket limit" in str(exc)


def aggregate(searcher: tantivy.Searcher, query: tantivy.Query, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The results of aggregation ``spec`` over the events of ``query``, one per part of the session-key space
    (a single one unless the buckets of one would be too many). Each session's buckets are all in one result."""
    global _parts
    parts = _parts
    while True:
        try:
            results = [searcher.aggregate(q, spec) for q in _split(query, parts)]
        except ValueError as exc:
            if not too_many_buckets(exc) or parts >= MAX_PARTS:
                raise
            parts *= 2
            continue
        _parts = max(_parts, parts)
        return results


def _split(query: tantivy.Query, parts: int) -> list[tantivy.Query]:
    """``query`` limited to each of ``parts`` equal ranges of session keys."""
    if parts == 1:
        return [query]
    import tantivy

    sch = schema()

    step = KEY_SPACE // parts
    out = []
    for i in range(parts):
        lo = i * step
        hi = KEY_SPACE - 1 if i == parts - 1 else lo + step - 1
        keys = tantivy.Query.range_query(sch, "sk", tantivy.FieldType.Unsigned, lo, hi)
        out.append(tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, keys)]))
    return out


@lru_cache(maxsize=1)
def schema() -> tantivy.Schema:
    """The index's schema (what a query built outside the engine is built against)."""
    from voyager_sessions.search.index import build_schema

    return build_schema()


def buckets(results: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The buckets of terms aggregation ``name`` across ``results`` (parts hold disjoint sessions: concatenated)."""
    out: list[dict[str, Any]] = []
    for res in results:
        out += (res.get(name) or {}).get("buckets", [])
    return out
