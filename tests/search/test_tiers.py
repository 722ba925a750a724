"""search.tiers: a broad query ranked a kind tier at a time returns exactly the page one full pass returns.

The proof is per query (a score bound), so the test compares against the one-pass ranking on a corpus
where the early stop happens for some queries and not for others, with filters, ORs, negations and pages
past the first; and checks that a stopped search says its total is a lower bound (JSON and text).
"""

from __future__ import annotations

import json
import random

import pytest

from tests.support.nocatalog import NoCatalog
from tests.support.sessions import write_claude
from voyager_sessions.core.model import Event
from voyager_sessions.search import tiers
from voyager_sessions.search.engine import Searcher, SearchOptions
from voyager_sessions.search.index import SearchIndex

WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "lambda", "sigma", "omega", "数据", "库"]
KINDS = ["user", "assistant", "reasoning", "tool_call", "tool_result", "meta"]
ORIGIN = {"user": "human", "tool_result": "tool", "meta": "provider"}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    rng = random.Random(7)
    index = SearchIndex(tmp_path_factory.mktemp("tiers") / "index")
    events = []
    for s in range(40):
        for seq in range(60):
            kind = rng.choice(KINDS)
            # Prompts short, tool output long: the shape that lets the heavy tiers settle a page early.
            n = rng.randint(2, 8) if kind == "user" else rng.randint(5, 120)
            text = " ".join(rng.choice(WORDS) for _ in range(n))
            events.append(
                Event(
                    session=f"claude:s{s:03d}",
                    seq=seq,
                    kind=kind,
                    origin=ORIGIN.get(kind, "agent"),
                    text=text,
                    ts=1_700_000_000.0 + s * 1000 + seq,
                )
            )
    index.add_events(events)
    index.commit()
    return Searcher(index, NoCatalog(), ["claude", "codex"])


QUERIES = [
    "alpha",
    "kappa",
    '"alpha beta"',
    "数据库",
    "sigma OR omega",
    "gamma -delta",
    "lambda kind:tool",
    "omega provider:claude",
    "omeg*",
]


def _page(searcher, query: str, limit: int, offset: int, wide: int, monkeypatch):
    monkeypatch.setattr(tiers, "WIDE", wide)
    return searcher.search(query, SearchOptions(limit=limit, offset=offset))


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(("limit", "offset"), [(5, 0), (20, 0), (10, 10), (400, 0)])
def test_a_tiered_page_is_the_page_of_one_full_pass(searcher, monkeypatch, query, limit, offset):
    full = _page(searcher, query, limit, offset, wide=10**12, monkeypatch=monkeypatch)
    tiered = _page(searcher, query, limit, offset, wide=1, monkeypatch=monkeypatch)
    assert full.total_exact
    assert [h.score for h in tiered.hits] == [h.score for h in full.hits]
    # Events of equal score may be picked in another order at the page's edge; every event above it is the same.
    edge = min((h.score for h in full.hits), default=0.0)
    assert {(h.session_id, h.seq) for h in tiered.hits if h.score > edge} == {
        (h.session_id, h.seq) for h in full.hits if h.score > edge
    }
    if tiered.total_exact:
        assert tiered.total == full.total
    else:
        assert len(tiered.hits) <= tiered.total < full.total


def test_the_early_stop_happens_and_is_said(searcher, monkeypatch):
    """Not a vacuous comparison: on this corpus a short page stops before the last tier, a long one often cannot."""
    short = {q: not _page(searcher, q, 5, 0, wide=1, monkeypatch=monkeypatch).total_exact for q in QUERIES}
    assert sum(short.values()) >= len(QUERIES) // 2, short
    long = {q: not _page(searcher, q, 400, 0, wide=1, monkeypatch=monkeypatch).total_exact for q in QUERIES}
    assert not all(long.values()), long


def test_the_cli_says_a_lower_bound(home, run, monkeypatch):
    lines = []
    for i in range(30):
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "uuid": f"u{i}",
                    "sessionId": "s",
                    "timestamp": f"2026-11-20T10:{i:02d}:00Z",
                    "cwd": "/home/dev/shop",
                    "message": {"role": "user", "content": f"zephyr check {i}"},
                }
            )
            + "\n"
        )
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": f"a{i}",
                    "sessionId": "s",
                    "timestamp": f"2026-11-20T10:{i:02d}:30Z",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "zephyr " + "filler words here " * 40}],
                    },
                }
            )
            + "\n"
        )
    write_claude(home, lines, sid="11111111-2222-3333-4444-555555555555")
    run("scan")
    monkeypatch.setattr(tiers, "WIDE", 1)
    doc = run.json("search", "zephyr", "--json", "--limit", "5")
    assert doc["total_exact"] is False and doc["total"] == 30 and [h["kind"] for h in doc["hits"]] == ["user"] * 5
    res = run("search", "zephyr", "--limit", "5", "--flat")
    assert "1-5 of 30+ hits" in res.stderr
    monkeypatch.setattr(tiers, "WIDE", 10**12)
    doc = run.json("search", "zephyr", "--json", "--limit", "5")
    assert doc["total_exact"] is True and doc["total"] == 60


@pytest.mark.parametrize("query", ["alpha", "数据库", "sigma OR omega"])
def test_sessions_past_the_window_are_counted_by_aggregation(searcher, monkeypatch, query):
    """``--sessions`` groups the best SESSION_WINDOW events; past it, the page's hit counts come from an
    aggregation over those sessions' events (and agree with a window that holds everything), and the total is
    the sessions the window holds: a lower bound, said so."""
    from voyager_sessions.search import engine

    opts = SearchOptions(sessions=True, limit=10)
    whole = searcher.search(query, opts)
    monkeypatch.setattr(engine, "SESSION_WINDOW", 5)
    cut = searcher.search(query, opts)
    assert whole.total_exact and not cut.total_exact and 0 < cut.total <= whole.total
    counts = {h.session_id: h.hit_count for h in whole.hits}
    assert all(h.hit_count == counts[h.session_id] for h in cut.hits if h.session_id in counts)
    assert any(h.session_id in counts for h in cut.hits)


def _count(searcher, q) -> int:
    return searcher.index.searcher().search(q, limit=1, count=True).count


@pytest.mark.parametrize("query", [q for q in QUERIES if "*" not in q and "kind:" not in q])
def test_the_first_tier_is_searched_among_what_people_said(searcher, query):
    """``said`` holds the heaviest kinds' words and nothing else, so the first tier's prefilter (every term the
    query requires, in ``said``) keeps each of that tier's matches and drops every other kind's event."""
    import tantivy

    from voyager_sessions.search import query as qlang

    parsed = qlang.parse(query)
    said = searcher.compiler.presence(parsed.root, "said")
    assert said is not None
    q = searcher.compiler.compile(parsed)
    schema = searcher.index.schema
    first = tantivy.Query.term_set_query(schema, "kind", list(tiers.TIERS[0][1]))
    assert tiers.in_said(tiers.TIERS[0][1]) and not any(tiers.in_said(k) for _, k in tiers.TIERS[1:])
    in_tier = tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Must, first)])
    kept = tantivy.Query.boolean_query([(tantivy.Occur.Must, in_tier), (tantivy.Occur.Must, said)])
    assert _count(searcher, in_tier) > 0 and _count(searcher, kept) == _count(searcher, in_tier)
    others = tantivy.Query.boolean_query([(tantivy.Occur.Must, said), (tantivy.Occur.MustNot, first)])
    assert _count(searcher, others) == 0
    # It narrows: fewer events hold the words in ``said`` than in the body.
    body = searcher.compiler.presence(parsed.root, "body")
    assert _count(searcher, said) < _count(searcher, body)


@pytest.mark.parametrize(
    ("query", "narrows"),
    [("omeg*", False), ("alpha OR omeg*", False), ("-alpha", False), ("kind:tool", False), ("alpha omeg*", True)],
)
def test_a_prefilter_only_where_every_match_must_hold_its_terms(searcher, query, narrows):
    """A prefix, a negation or a filter says nothing about which words an event holds: no prefilter from them
    (an OR with one such alternative none at all), and the rest of a query still narrows."""
    from voyager_sessions.search import query as qlang

    assert (searcher.compiler.presence(qlang.parse(query).root, "said") is not None) is narrows
