"""Answering a search: parse, compile, rank, cut snippets, join session metadata.

:class:`Searcher` knows Tantivy and the query language and nothing else: the caller
hands it an open :class:`~voyager_sessions.search.index.SearchIndex`, a
:class:`SessionCatalog` (what it needs to know about sessions: their metadata for hits,
and which ones a ``session:``, ``cwd:``, ``repo:`` filter or a title names) and the
provider names the ``provider:`` filter accepts. The application layer
(:mod:`voyager_sessions.api`) wires it to the state store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

import msgspec

from voyager_sessions.model import SCHEMA_VERSION, Event, Hit, SearchResult, SessionRecord, iso
from voyager_sessions.search import query as qlang
from voyager_sessions.search.snippets import make_snippet

#: Score added to events of a session whose title contains the query's words.
TITLE_BOOST = 1.5

#: A title boost looks for at most this many of the query's words in titles.
TITLE_WORDS = 8

#: In --sessions mode, hits are grouped from this many best-scoring events.
SESSION_WINDOW = 5000


class SessionCatalog(Protocol):
    """What a search needs to know about sessions (the state store provides it)."""

    def resolve_session(self, ref: str, limit: int = 50) -> list[str]:
        """Ids of the sessions ``ref`` names: an id, a native id or a prefix of either."""
        ...

    def session_ids_where(self, *, cwd: str | None = None, repo: str | None = None) -> list[str]:
        """Ids of the sessions whose cwd (or repo) contains the text."""
        ...

    def session_ids_titled(self, words: list[str], limit: int = 1000) -> list[str]:
        """Ids of the sessions whose title contains every word."""
        ...

    def sessions_by_id(self, ids: Iterable[str]) -> Mapping[str, SessionRecord]:
        """The stored sessions among ``ids``."""
        ...


class SearchOptions(msgspec.Struct, kw_only=True):
    limit: int = 20
    offset: int = 0
    providers: list[str] = []
    kinds: list[str] = []
    repo: str | None = None
    cwd: str | None = None
    session: str | None = None
    since: str | None = None
    until: str | None = None
    sort: Literal["relevance", "recent"] = "relevance"
    sessions: bool = False
    context: int = 0
    snippet_width: int = 240


class Searcher:
    """An open index and a session catalog, ready for many queries (the bench and the server reuse one)."""

    def __init__(self, index, catalog: SessionCatalog, providers: Sequence[str]) -> None:
        self.index = index
        self.catalog = catalog
        self.providers = tuple(providers)
        self.compiler = qlang.Compiler(self.index.schema, self._resolve, self.providers)

    def _resolve(self, field: str, value: str) -> list[str]:
        if field == "session":
            return self.catalog.resolve_session(value, limit=100_000)
        if field == "cwd":
            return self.catalog.session_ids_where(cwd=value)
        return self.catalog.session_ids_where(repo=value)

    def parse(self, query: str, opts: SearchOptions, parsed: qlang.ParsedQuery | None = None) -> qlang.ParsedQuery:
        """``query`` (or ``parsed``, it parsed already: the application parses each request's query once) with ``opts``' filters."""
        parsed = qlang.parse(query) if parsed is None else parsed
        filters: list[qlang.Node] = []
        # A repeated --provider or --kind means any of them.
        for field, values in (("provider", opts.providers), ("kind", opts.kinds)):
            if values:
                alts = [qlang._filter(field, v) for v in values]
                filters.append(alts[0] if len(alts) == 1 else qlang.Or(tuple(alts)))
        for name in ("repo", "cwd", "session", "since", "until"):
            value = getattr(opts, name)
            if value:
                filters.append(qlang._filter(name, value))
        if filters:
            nodes = ((parsed.root,) if parsed.root is not None else ()) + tuple(filters)
            parsed.root = nodes[0] if len(nodes) == 1 else qlang.And(nodes)
        return parsed

    def search(self, query: str, opts: SearchOptions | None = None, *,
               parsed: qlang.ParsedQuery | None = None) -> SearchResult:
        """Answer ``query`` (``parsed``: it parsed already); a QueryError when it is malformed, IndexDamaged when Tantivy cannot read the index."""
        from voyager_sessions.search.index import damaged

        opts = opts or SearchOptions()
        parsed = self.parse(query, opts, parsed)
        q = self.compiler.compile(parsed)
        q = self._title_boost(q, parsed)
        try:
            return self._search(query, parsed, q, opts)
        except qlang.QueryError:
            raise
        except ValueError as exc:  # what tantivy-py raises for an unreadable segment
            raise damaged(self.index.path, exc) from None

    def _search(self, query: str, parsed: qlang.ParsedQuery, q, opts: SearchOptions) -> SearchResult:
        import tantivy

        searcher = self.index.searcher()
        phrases = [(tuple(t.terms()), t.prefix) for t in parsed.texts]
        if opts.sessions:
            return self._search_sessions(query, q, searcher, phrases, opts)
        # Never ask for more hits than there are documents: an offset of 10^11 would make
        # Tantivy allocate for that many (and abort the process); past the end is an empty page.
        want = min(opts.offset + opts.limit, max(searcher.num_docs, 1))
        if opts.sort == "recent" or not parsed.texts:
            res = searcher.search(q, limit=max(want, 1), count=True, order_by_field="ts", order=tantivy.Order.Desc)
            scored = [(0.0, addr) for _, addr in res.hits]
        else:
            res = searcher.search(q, limit=max(want, 1), count=True, weight_by_field="w")
            scored = list(res.hits)
        page = scored[opts.offset : want]
        events = [(score, _doc_event(searcher, addr)) for score, addr in page]
        if opts.sort != "recent" and parsed.texts:
            # Recency breaks ties between equally relevant events.
            events.sort(key=lambda se: (-round(se[0], 4), -(se[1].ts or 0.0)))
        hits = self._hits(events, phrases, opts)
        return SearchResult(schema_version=SCHEMA_VERSION, query=query, total=res.count, offset=opts.offset, hits=hits)

    def _title_boost(self, q, parsed: qlang.ParsedQuery):
        """Lift the events of sessions whose title says what was searched for (titles are what people see)."""
        import tantivy

        # The few longest words say most about a title (and a pasted log line of a thousand
        # words must not become a thousand-clause lookup).
        words = sorted({t.text for t in parsed.texts if not t.prefix and t.text.strip()}, key=len, reverse=True)[:TITLE_WORDS]
        ids = self.catalog.session_ids_titled(words) if words else []
        if not ids:
            return q
        boost = tantivy.Query.const_score_query(tantivy.Query.term_set_query(self.index.schema, "session", ids), TITLE_BOOST)
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Should, boost)])

    def _search_sessions(self, query, q, searcher, phrases, opts) -> SearchResult:
        res = searcher.search(q, limit=SESSION_WINDOW, count=True, weight_by_field="w")
        keys = searcher.fast_field_values("sk", [addr for _, addr in res.hits]) if res.hits else []
        best: dict[int, tuple[float, object]] = {}
        counts: dict[int, int] = {}
        for (score, addr), key in zip(res.hits, keys):
            counts[key] = counts.get(key, 0) + 1
            if key not in best:
                best[key] = (score, addr)
        order = list(best)
        if opts.sort == "recent":
            stamps = dict(zip(best, searcher.fast_field_values("ts", [a for _, a in best.values()])))
            order.sort(key=lambda k: -(stamps.get(k) or 0))
        page = order[opts.offset : opts.offset + opts.limit]
        events = [(best[k][0], _doc_event(searcher, best[k][1])) for k in page]
        hits = self._hits(events, phrases, opts)
        exact = res.count <= SESSION_WINDOW
        agg_counts = self._session_counts(searcher, q) if not exact else {}
        for h, k in zip(hits, page):
            h.hit_count = counts[k] if exact else agg_counts.get(h.session_id, counts[k])
        return SearchResult(schema_version=SCHEMA_VERSION, query=query, total=len(order) if exact else max(len(order), len(agg_counts)), offset=opts.offset, hits=hits)

    def _session_counts(self, searcher, q) -> dict[str, int]:
        try:
            agg = searcher.aggregate(q, {"s": {"terms": {"field": "session", "size": 100_000}}})
        except Exception:
            return {}
        return {b["key"]: b["doc_count"] for b in agg.get("s", {}).get("buckets", [])}

    def _hits(self, events: list[tuple[float, Event]], phrases, opts: SearchOptions) -> list[Hit]:
        sessions = self.catalog.sessions_by_id(ev.session for _, ev in events)
        hits = []
        for score, ev in events:
            rec = sessions.get(ev.session)
            s = rec.session if rec else None
            snippet, highlights = make_snippet(ev.text, phrases, width=opts.snippet_width)
            hit = Hit(
                session_id=ev.session,
                provider=ev.session.partition(":")[0],
                seq=ev.seq,
                kind=ev.kind,
                origin=ev.origin,
                timestamp=iso(ev.ts),
                cwd=s.cwd if s else None,
                title=s.title if s else None,
                snippet=snippet,
                highlights=highlights,
                score=round(float(score), 4),
                resume=s.resume if s else None,
                tool=ev.tool,
                exit_code=ev.exit_code,
            )
            if opts.context > 0:
                hit.context = self.index.session_events(ev.session, lo=max(0, ev.seq - opts.context), hi=ev.seq + opts.context)
            hits.append(hit)
        return hits


def _doc_event(searcher, addr) -> Event:
    from voyager_sessions.search.index import doc_to_event

    return doc_to_event(searcher.doc(addr))
