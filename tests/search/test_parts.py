"""search.parts: aggregations keyed by session on histories with more sessions than one aggregation may hold.

Tantivy refuses an aggregation of more than 65,000 buckets; at 100,000 sessions a common word is said in more
sessions than that, and several-term queries, ``--sessions`` counts and the web page's facets failed (reported
as a damaged index). Split by session key, the parts hold disjoint sessions and add up to the whole.
"""

from __future__ import annotations

import pytest

from tests.support.nocatalog import NoCatalog
from voyager_sessions.core.model import Event
from voyager_sessions.search import parts
from voyager_sessions.search.engine import Searcher, SearchOptions
from voyager_sessions.search.index import SearchIndex


def _index(path, sessions: int, per: int = 1) -> Searcher:
    index = SearchIndex(path)
    events = [
        Event(
            session=f"claude:p{s:06d}",
            seq=i,
            kind="user" if i == 0 else "assistant",
            origin="human" if i == 0 else "agent",
            text=("alpha beta" if s % 3 else "alpha gamma") + (" delta" if i else ""),
            ts=1_700_000_000.0 + s * 60 + i,
        )
        for s in range(sessions)
        for i in range(per)
    ]
    index.add_events(events)
    index.commit()
    return Searcher(index, NoCatalog(), ["claude"])


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return _index(tmp_path_factory.mktemp("parts") / "index", 300, per=2)


@pytest.mark.parametrize("query", ["alpha beta", "alpha delta", "beta gamma"])
@pytest.mark.parametrize("sessions", [False, True])
def test_parts_add_up_to_the_whole(small, monkeypatch, query, sessions):
    opts = SearchOptions(limit=1000, sessions=sessions)  # every hit: equal scores may be in another order
    whole = small.search(query, opts)
    monkeypatch.setattr(parts, "_parts", 8)
    split = small.search(query, opts)
    assert (split.total, split.match) == (whole.total, whole.match)
    assert sorted((h.session_id, h.seq, round(h.score, 4), h.hit_count) for h in split.hits) == sorted(
        (h.session_id, h.seq, round(h.score, 4), h.hit_count) for h in whole.hits
    )


def test_facets_add_up_to_the_whole(small, monkeypatch):
    from voyager_sessions.search import query as qlang
    from voyager_sessions.search.facets import session_facets

    for q in ["alpha", "alpha beta"]:
        whole = session_facets(small, q, SearchOptions(), qlang.parse(q))
        monkeypatch.setattr(parts, "_parts", 8)
        split = session_facets(small, q, SearchOptions(), qlang.parse(q))
        monkeypatch.setattr(parts, "_parts", 1)
        assert sorted(split.sessions) == sorted(whole.sessions) and split.match == whole.match
        assert {w: sorted(ids) for w, ids in split.weeks.items()} == {w: sorted(ids) for w, ids in whole.weeks.items()}


@pytest.mark.slow
def test_more_sessions_than_one_aggregation_may_hold(tmp_path, monkeypatch):
    """70,000 sessions saying the same words: one aggregation of them would make more than 65,000 buckets."""
    from voyager_sessions.search import query as qlang
    from voyager_sessions.search import tiers
    from voyager_sessions.search.facets import session_facets

    searcher = _index(tmp_path / "index", 70_000)
    holding = sum(1 for s in range(70_000) if s % 3)
    # The web page's facets count every session saying the word.
    monkeypatch.setattr(parts, "_parts", 1)
    found = session_facets(searcher, "alpha", SearchOptions(), qlang.parse("alpha"))
    assert len(found.sessions) == 70_000 and parts._parts >= 2  # it was split, and the next one starts split
    # Several words ranked in full (not taken for common words, whose shortcuts need no bucket per session).
    monkeypatch.setattr(parts, "_parts", 1)
    monkeypatch.setattr(tiers, "WIDE", 10**9)
    res = searcher.search("alpha beta", SearchOptions(limit=5))
    assert res.match == "all" and res.total == holding and res.total_exact and parts._parts >= 2
    grouped = searcher.search("alpha beta", SearchOptions(limit=5, sessions=True))
    assert grouped.total == holding and grouped.total_exact and len(grouped.hits) == 5
