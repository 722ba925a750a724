"""Facets of a search: which sessions match it, and the weeks in which they have matching events.

A UI's counts (``voyager web``'s agent, project and week facets) need no ranking, no stored
document and no snippet, only *which* sessions match. Counting over the rows of a grouped
search cost a stored read and a snippet per session, so the counts covered only the best 500
sessions and still took ~400 ms at 1M events (bench ``web_search``). Here Tantivy's
aggregations answer it from fast fields alone, over every matching session:

* the matching sessions are those a grouped search (``--sessions``) would list: for a query
  of one term, the sessions of the events it matches (one terms aggregation on ``session``);
  for a query of several terms, the sessions holding each of them (``search.sessions.cover``,
  the very coverage the ranking uses, so the counts and the rows' ``total`` agree). Which of the
  two a query is, and its terms, come from the same plan the engine ranks by (``search.plan``);
* their weeks: one histogram aggregation on ``ts`` (weeks from Monday, UTC) with the sessions
  of each week under it, over the events that match (any term, for several). A session counts
  once in every week it has a matching event, which is what clicking that week then finds.

At 1M events both cost a few milliseconds (measured in ``bench`` ``web_search``). This module
compiles the plan with the engine's compiler but ranks nothing; ``engine`` stays the one place that
orders hits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from voyager_sessions.search import parts
from voyager_sessions.search import plan as planner
from voyager_sessions.search.syntax import ParsedQuery, QueryError

if TYPE_CHECKING:
    from voyager_sessions.search.engine import Searcher
    from voyager_sessions.search.plan import SearchOptions

#: A week in milliseconds (the unit of the ``ts`` field).
WEEK_MS = 7 * 86_400_000
#: Where weeks start: 1970-01-01 was a Thursday, so Mondays fall 4 days (mod 7) after the epoch.
MONDAY_MS = 4 * 86_400_000


class SessionFacets(msgspec.Struct, kw_only=True):
    """The sessions a search matches, and for each week (its Monday, ms since the epoch, UTC) those with a match in it."""

    sessions: list[str]
    weeks: dict[int, list[str]]
    #: ``all`` (or a query of one term) / ``partial`` (no session held every term: those holding some).
    match: str = "all"


def session_facets(engine: Searcher, query: str, opts: SearchOptions, parsed: ParsedQuery) -> SessionFacets:
    """Which sessions ``query`` (parsed as ``parsed``, with ``opts``' filters) matches, and their weeks.

    A QueryError when it is malformed, IndexDamaged when Tantivy cannot read the index.
    """
    from voyager_sessions.search import sessions
    from voyager_sessions.search.index import damaged

    plan = planner.make(parsed, opts)
    compiler = engine.compiler
    try:
        searcher = engine.index.searcher()
        match = "all"
        plan = planner.measure(plan, searcher, holds=lambda n: engine._holds(searcher, n))
        if plan.several:
            terms = compiler.terms(plan)
            cov = sessions.cover(searcher, terms, weights=False, breadths=plan.breadths)
            chosen: list[str] | None = cov.chosen
            match = cov.match
            q = compiler.any_of(terms)
        else:
            q = compiler.compile(plan.parsed)
            chosen = None
        spec = {
            "w": {
                "histogram": {"field": "ts", "interval": WEEK_MS, "offset": MONDAY_MS, "min_doc_count": 1},
                "aggs": {"s": {"terms": {"field": "session", "size": sessions.MAX_SESSIONS}}},
            }
        }
        if chosen is None:
            spec["s"] = {"terms": {"field": "session", "size": sessions.MAX_SESSIONS}}
        # Split by session key where one aggregation would hold too many buckets (search.parts): each part's
        # weeks list that part's sessions.
        results = parts.aggregate(searcher, q, spec)
    except QueryError:
        raise
    except ValueError as exc:  # what tantivy-py raises for an unreadable segment
        raise damaged(engine.index.path, exc) from None
    if chosen is None:
        chosen = [b["key"] for b in parts.buckets(results, "s")]
    keep = set(chosen)
    weeks: dict[int, list[str]] = {}
    for b in parts.buckets(results, "w"):
        ids = [s["key"] for s in b.get("s", {}).get("buckets", []) if s["key"] in keep]
        if ids and b.get("doc_count"):
            weeks.setdefault(int(b["key"]), []).extend(ids)
    return SessionFacets(sessions=chosen, weeks=dict(sorted(weeks.items())), match=match)
