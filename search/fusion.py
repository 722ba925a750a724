"""Meaning beside words: one ranking from the word search and the meaning vectors, and how each row matched.

The rule (measured on the judged set, docs/bench.md):

* **When some session holds every word of the query** (the word result's ``match`` is
  ``all``), the words decide: their rows come first in their own order, exactly as
  without meaning, and sessions found by meaning alone follow them. A needle (an
  identifier, an error code, a two-character CJK pair) is never outranked by a session
  that does not hold it, and no word row changes place.
* **When no session holds every word** (``partial``: the query describes rather than
  quotes), the two rankings are fused by reciprocal rank (k = 60): a session's score is
  the sum of 1/(60 + rank) over the rankings it is in, so one found by both, or ranked
  first by either, rises.

Every row says how it matched (``Hit.match``): ``all`` (holds every term), ``partial``
(holds some) or ``meaning`` (holds none of the words: found by what it is about). The
query is embedded from its words only (its filters are not text), and the sessions meaning
may bring in pass the same filters as the word rows (``--provider``, ``since:``, a
negation …): a session with some event passing them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal

import msgspec

from voyager_sessions.core.isotime import iso
from voyager_sessions.core.model import Hit, SearchResult
from voyager_sessions.search import plan as planner
from voyager_sessions.search import sessions
from voyager_sessions.search.syntax import Not, ParsedQuery
from voyager_sessions.search.snippets import make_snippet

if TYPE_CHECKING:
    import numpy as np
    import tantivy

    from voyager_sessions.search.embed import Matrix, Model
    from voyager_sessions.search.engine import Searcher, SearchOptions

RRF_K = 60
#: How deep each ranking is read before fusing (more when the page asked for reaches further).
DEPTH = 50

Match = Literal["all", "partial", "meaning"]


def fuse(words: list[str], every_word: bool, meaning: list[str], *, k: int = RRF_K) -> list[str]:
    """The fused order of keys (sessions, or event rows keyed by their session) — see the module's rule.

    ``words``: the word ranking's keys, best first (a key may repeat: several events of one session);
    ``every_word``: its rows hold every term; ``meaning``: sessions by meaning, best first.
    Returns keys: every word key once per occurrence, then the meaning-only sessions.
    """
    word_sessions = set(words)
    extra = [s for s in meaning if s not in word_sessions]
    if every_word:
        return list(words) + extra
    m_rank = {s: i for i, s in enumerate(meaning)}
    scored: list[tuple[float, int, str]] = []
    for i, s in enumerate(words):
        score = 1.0 / (k + i + 1)
        if s in m_rank:
            score += 1.0 / (k + m_rank[s] + 1)
        scored.append((-score, len(scored), s))
    for s in extra:
        scored.append((-1.0 / (k + m_rank[s] + 1), len(scored), s))
    scored.sort()
    return [s for _, _, s in scored]


def meaning_text(terms: list[str]) -> str:
    """What of the query is embedded: its positive terms as typed, without quotes or a prefix star."""
    return " ".join(t.strip('"').rstrip("*") for t in terms if t and not t.startswith("-")).strip()


def search_with_meaning(
    searcher: Searcher,
    query: str,
    parsed: ParsedQuery,
    opts: SearchOptions,
    model: Model,
    matrix: Callable[[], Matrix],
) -> tuple[SearchResult, bool]:
    """``query`` ranked by words and meaning together (``opts`` as ``Searcher.search`` takes them), and whether
    meaning took part (not for a filter-only query, nor with ``sort: recent``: then the rows are the words').

    Of the word ranking, read as deep as :data:`DEPTH`, only the rows the fused page shows are read (their
    events, snippets and terms): the others count for their place only (at 10,000 sessions reading them was a
    third of a served search with meaning, docs/bench.md).
    """
    depth = max(DEPTH, opts.offset + opts.limit)
    # The query as typed (a CJK sentence the words matched as its pairs of characters is embedded whole).
    text = meaning_text(planner.make(parsed, opts).terms)
    if not text or opts.sort == "recent":
        # Nothing to embed (a filter-only query), or the order asked for is time: the words' rows, paged.
        words = searcher.search(query, msgspec.structs.replace(opts, limit=depth, offset=0), parsed=parsed)
        for h in words.hits:
            h.match = words.match
        words.hits = words.hits[opts.offset : opts.offset + opts.limit]
        words.offset = opts.offset
        return words, False
    ranked: list[list[tuple[str, float]]] = []  # the meaning ranking, once worked out
    vectors = matrix()
    # The query is embedded while the words are ranked (where no session has a vector, never: the model is not
    # loaded for nothing).
    embedding = _embed_beside(model, text) if len(vectors) else None

    def meaning() -> list[tuple[str, float]]:
        if not ranked:
            among = _passing(searcher, parsed, opts)
            if not len(vectors):
                ranked.append([])
            else:
                vector = embedding.result() if embedding is not None else model.query(text)
                ranked.append(vectors.rank(vector, depth, among))
        return ranked[0]

    def shown(words: SearchResult) -> set[str]:
        """The word rows the fused page shows (told the word ranking before its rows are read)."""
        return {r.session_id for r in _fused(words, meaning(), opts)[0] if isinstance(r, Hit)}

    word_opts = msgspec.structs.replace(opts, limit=depth, offset=0)
    if embedding is None:
        words = searcher.search(query, word_opts, parsed=parsed, rows=shown)
    else:
        with sessions.beside(embedding):
            words = searcher.search(query, word_opts, parsed=parsed, rows=shown)
    level = words.match
    for h in words.hits:
        h.match = level
    scores = dict(meaning())
    page, extra_total, complete = _fused(words, meaning(), opts)
    extra_ids = [r for r in page if isinstance(r, str)]
    holding = _holding_some(searcher, words.terms, parsed, opts, extra_ids) if extra_ids else set()
    made = _meaning_hits(searcher, extra_ids, scores, holding, opts)
    hits = [r if isinstance(r, Hit) else made[r] for r in page]
    result = SearchResult(
        schema_version=words.schema_version,
        query=words.query,
        total=words.total + extra_total,
        offset=opts.offset,
        hits=hits,
        match=level,
        terms=words.terms,
        total_exact=words.total_exact and complete,
    )
    return result, True


_embedders: ThreadPoolExecutor | None = None
_embedders_made = threading.Lock()


def _embed_beside(model: Model, text: str) -> Future[np.ndarray] | None:
    """``text``'s vector, being computed on a thread of its own while the caller ranks the words (the engine
    releases the GIL); None on one core (then it is computed when the ranking asks for it).

    The embedding (~16 ms of one core) and the word ranking were one after the other: at 10,000 sessions, in
    process on this 2-core machine under load 1.6, a search with meaning took 49 ms (median) that way and 39 ms
    with the embedding beside the words (docs/bench.md). Two threads: two searches at once each have one."""
    global _embedders
    if (os.cpu_count() or 1) < 2:
        return None
    if _embedders is None:
        with _embedders_made:
            if _embedders is None:
                _embedders = ThreadPoolExecutor(max_workers=2, thread_name_prefix="voyager-embed")
    return _embedders.submit(model.query, text)


def _fused(
    words: SearchResult, meaning: list[tuple[str, float]], opts: SearchOptions
) -> tuple[list[Hit | str], int, bool]:
    """The fused page (a word row, or the id of a session meaning alone brought in), how many sessions meaning
    adds in all, and whether every word row was known (see the module's rule)."""
    meaning_ids = [sid for sid, _ in meaning]
    word_keys = [h.session_id for h in words.hits]
    # All the word rows are known when they fit in the depth; otherwise the words fill further than meaning reaches.
    complete = words.total_exact and words.total <= len(words.hits)
    every_word = words.match == "all" and bool(words.hits)
    if every_word and not complete:
        meaning_ids = []
    order = fuse(word_keys, every_word, meaning_ids)
    by_key: dict[str, list[Hit]] = {}
    for h in words.hits:
        by_key.setdefault(h.session_id, []).append(h)
    rows: list[Hit | str] = []
    for key in order:
        queue = by_key.get(key)
        rows.append(queue.pop(0) if queue else key)
    extra_total = sum(1 for r in rows if isinstance(r, str))
    return rows[opts.offset : opts.offset + opts.limit], extra_total, complete


def _passing(searcher: Searcher, parsed: ParsedQuery, opts: SearchOptions) -> set[str] | None:
    """The sessions with an event passing the query's filters and negations and the options' (None: no filter)."""
    import tantivy

    events = planner.make(parsed, opts).events  # the query's and the options' filters and negations
    if not events:
        return None
    clauses = [(tantivy.Occur.Must, tantivy.Query.all_query())]
    for node in events:
        negated = isinstance(node, Not)
        q = searcher.compiler.node(node.node if isinstance(node, Not) else node)
        if q is not None:  # as the compiler does in a conjunction: a part with nothing searchable narrows nothing
            clauses.append((tantivy.Occur.MustNot if negated else tantivy.Occur.Must, q))
    return _sessions_of(searcher, tantivy.Query.boolean_query(clauses))


def _holding_some(
    searcher: Searcher, terms: list[str], parsed: ParsedQuery, opts: SearchOptions, ids: list[str]
) -> set[str]:
    """Which of ``ids`` hold some positive term of the query (they are then ``partial``, not ``meaning``)."""

    s = searcher.index.searcher()
    # The terms as the word search matched them (a CJK description: its pairs of characters).
    plan = planner.measure(planner.make(parsed, opts), s, holds=lambda n: searcher._holds(s, n))
    positive = plan.positive
    if not positive:
        return set()
    each = [q for q in map(searcher.compiler.node, positive) if q is not None]
    return _sessions_of(searcher, searcher.compiler.any_among(each, ids))


def _sessions_of(searcher: Searcher, q: tantivy.Query) -> set[str]:
    s = searcher.index.index.searcher()
    agg = s.aggregate(q, {"s": {"terms": {"field": "session", "size": 1_000_000}}})
    return {b["key"] for b in agg.get("s", {}).get("buckets", [])}


def _meaning_hits(
    searcher: Searcher, ids: list[str], scores: dict[str, float], holding: set[str], opts: SearchOptions
) -> dict[str, Hit]:
    """A row for each session meaning brought in: the session's first prompt (else first message) as its snippet."""
    records = searcher.catalog.sessions_by_id(ids)
    out: dict[str, Hit] = {}
    for sid in ids:
        said = searcher.index.said_events(sid, first=4, last=0)
        ev = next((e for e in said if e.kind == "user"), said[0] if said else None)
        rec = records.get(sid)
        s = rec.session if rec else None
        snippet, highlights = make_snippet(
            ev.text if ev else (s.title or "" if s else ""), [], width=opts.snippet_width
        )
        out[sid] = Hit(
            session_id=sid,
            provider=sid.partition(":")[0],
            seq=ev.seq if ev else 0,
            kind=ev.kind if ev else "user",
            origin=ev.origin if ev else "human",
            timestamp=iso(ev.ts) if ev else None,
            cwd=s.cwd if s else None,
            title=s.title if s else None,
            snippet=snippet,
            highlights=highlights,
            score=round(scores.get(sid, 0.0), 4),
            resume=s.resume if s else None,
            match="partial" if sid in holding else "meaning",
        )
        if opts.context > 0 and ev is not None:
            out[sid].context = searcher.index.session_events(
                sid, lo=max(0, ev.seq - opts.context), hi=ev.seq + opts.context
            )
    return out
