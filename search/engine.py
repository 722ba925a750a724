"""Answering a search: parse, compile, rank, cut snippets, join session metadata.

:class:`Searcher` knows Tantivy and the query language and nothing else: the caller
hands it an open :class:`~voyager_sessions.search.index.SearchIndex`, a
:class:`SessionCatalog` (what it needs to know about sessions: their metadata for hits,
and which ones a ``session:``, ``cwd:``, ``repo:`` filter or a title names) and the
provider names the ``provider:`` filter accepts. The application layer
(:mod:`voyager_sessions.api`) wires it to the state store.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Literal, Protocol

import msgspec

from voyager_sessions.core.model import SCHEMA_VERSION, Event, Hit, SearchResult, SessionRecord, TermHit, iso
from voyager_sessions.search import query as qlang
from voyager_sessions.search.snippets import find_spans, make_snippet

if TYPE_CHECKING:
    from voyager_sessions.search import sessions

#: Score added to events of a session whose title contains the query's words.
TITLE_BOOST = 1.5

#: A title boost looks for at most this many of the query's words in titles.
TITLE_WORDS = 8

#: A query of 2 to this many terms matches sessions that hold each term (one aggregation a term); a longer
#: one (a pasted log line) is matched within one event, as a needle: its events hold it all or nothing does.
SESSION_TERMS = 16

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

    def latest_of(self, ids: Iterable[str]) -> Mapping[str, float]:
        """When each of the stored sessions among ``ids`` was last active (0 when unknown)."""
        ...

    def newest(self, ids: Collection[str], n: int) -> list[str]:
        """The ``n`` most recently active of ``ids`` (as ``latest_of`` says), newest first, equal ones by id."""
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

    def _option_filters(self, opts: SearchOptions) -> list[qlang.Node]:
        """The options' filters (``--provider``, ``--kind``, ``--repo`` …) as query nodes."""
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
        return filters

    def parse(self, query: str, opts: SearchOptions, parsed: qlang.ParsedQuery | None = None) -> qlang.ParsedQuery:
        """``query`` (or ``parsed``: it was parsed already) with ``opts``' filters."""
        return self._combine(qlang.parse(query) if parsed is None else parsed, self._option_filters(opts))

    @staticmethod
    def _combine(parsed: qlang.ParsedQuery, filters: list[qlang.Node]) -> qlang.ParsedQuery:
        """``parsed`` with the options' filters ANDed to its root (a new ParsedQuery: ``parsed`` is kept as typed)."""
        if not filters:
            return parsed
        nodes = ((parsed.root,) if parsed.root is not None else ()) + tuple(filters)
        return qlang.ParsedQuery(root=nodes[0] if len(nodes) == 1 else qlang.And(nodes), texts=parsed.texts)

    def search(
        self, query: str, opts: SearchOptions | None = None, *, parsed: qlang.ParsedQuery | None = None
    ) -> SearchResult:
        """Answer ``query`` (``parsed``: it was parsed already); a QueryError when it is malformed, IndexDamaged
        when Tantivy cannot read the index.

        A query of one term (a word, a phrase, a CJK run, an ``a OR b``), with any filters and
        negations, matches the events that hold it, as it always has. A query of several terms
        matches the *sessions* that hold each of them somewhere (``search.sessions``); its
        hits are those sessions' events that say the terms, any event holding every term first.
        """
        from voyager_sessions.search.index import damaged

        opts = opts or SearchOptions()
        typed = qlang.parse(query) if parsed is None else parsed
        filters = self._option_filters(opts)
        parsed = self._combine(typed, filters)
        strict = self.compiler.compile(parsed)
        titled = self._titled(parsed)
        q = self._title_boost(strict, parsed, titled)
        conj = qlang.conjuncts(typed.root, tuple(filters))
        # Each distinct term once (a pasted line repeats words), and only terms that can match anything.
        positive = list({qlang.describe(n): n for n in conj.positive if qlang.matchable(n)}.values())
        try:
            if 2 <= len(positive) <= SESSION_TERMS:
                breadths = self.breadths(self.index.searcher(), positive)
                said = [n for n, b in zip(positive, breadths) if b > 0]  # some event may say it
                if len(said) == 1:
                    # Every other term is said nowhere (a typo, a word never used): no session can hold more than
                    # this one, so every session saying it matches as well as any, and the query is that term's.
                    return self._one_of(query, said[0], positive, conj.events, opts)
                spread = _Spread(
                    positive=positive,
                    strict=strict,
                    boosted=q,
                    parsed=parsed,
                    plain=self.compiler.node(parsed.root),
                    terms=self._with_constraints([self.compiler.node(n) for n in positive], conj.events),
                    titled=titled,
                    breadths=breadths,
                )
                if opts.sessions:
                    return self._spread_sessions(query, spread, opts)
                return self._spread_events(query, spread, opts)
            result = self._search(query, parsed, q, opts, title_boosted=q is not strict)
            result.terms = [qlang.describe(n) for n in positive]
            if opts.sessions and len(positive) <= 1:
                _rows_say(result, result.terms)  # the row's event holds the one term (a filter-only query has none)
            return result
        except qlang.QueryError:
            raise
        except ValueError as exc:  # what tantivy-py raises for an unreadable segment
            raise damaged(self.index.path, exc) from None

    def _one_of(
        self, query: str, term: qlang.Node, positive: list[qlang.Node], events: tuple[qlang.Node, ...], opts
    ) -> SearchResult:
        """A query of several terms only ``term`` of which is said anywhere, answered as the query of ``term`` and
        the filters and negations alone: a partial match (``match``) naming every term.

        Ranked as the session-level match would rank it too (every session holds one term), but without a
        bucket per session: "databse migration" at 100,000 sessions took 0.8 s, the common word alone 30 ms."""
        root = qlang.And((term, *events)) if events else term
        parsed = qlang.ParsedQuery(root=root, texts=qlang.positive_texts(term))
        strict = self.compiler.compile(parsed)
        titled = self._titled(parsed)
        q = self._title_boost(strict, parsed, titled)
        result = self._search(query, parsed, q, opts, title_boosted=q is not strict)
        result.terms = [qlang.describe(n) for n in positive]
        result.match = "partial"
        if opts.sessions:
            _rows_say(result, [qlang.describe(term)])
        return result

    def _with_constraints(self, terms: list, events: tuple[qlang.Node, ...]) -> list:
        """Each term's query limited to the events that pass the filters and negations (compiled once)."""
        import tantivy

        constraint = self.compiler.node(qlang.And(events)) if events else None
        if constraint is None:
            return terms
        return [tantivy.Query.boolean_query([(tantivy.Occur.Must, t), (tantivy.Occur.Must, constraint)]) for t in terms]

    def _search(
        self, query: str, parsed: qlang.ParsedQuery, q, opts: SearchOptions, *, title_boosted: bool = False
    ) -> SearchResult:
        import tantivy

        searcher = self.index.searcher()
        phrases = [(tuple(t.terms()), t.prefix) for t in parsed.texts]
        if opts.sessions:
            return self._search_sessions(query, q, searcher, phrases, opts)
        # Never ask for more hits than there are documents: an offset of 10^11 would make
        # Tantivy allocate for that many (and abort the process); past the end is an empty page.
        want = min(opts.offset + opts.limit, max(searcher.num_docs, 1))
        exact = True
        if opts.sort == "recent" or not parsed.texts:
            res = searcher.search(q, limit=max(want, 1), count=True, order_by_field="ts", order=tantivy.Order.Desc)
            scored = [(0.0, addr) for _, addr in res.hits]
            count = res.count
        elif (ranked := self._tiered(searcher, parsed, q, want, title_boosted)) is not None:
            scored, count, exact = ranked.hits, ranked.count, ranked.exact
        else:
            res = searcher.search(q, limit=max(want, 1), count=True, weight_by_field="w")
            scored = list(res.hits)
            count = res.count
        page = scored[opts.offset : want]
        events = [(score, _doc_event(searcher, addr)) for score, addr in page]
        if opts.sort != "recent" and parsed.texts:
            # Recency breaks ties between equally relevant events.
            events.sort(key=lambda se: (-round(se[0], 4), -(se[1].ts or 0.0)))
        hits = self._hits(events, phrases, opts)
        return SearchResult(
            schema_version=SCHEMA_VERSION, query=query, total=count, offset=opts.offset, hits=hits, total_exact=exact
        )

    def _tiered(self, searcher, parsed: qlang.ParsedQuery, q, want: int, title_boosted: bool):
        """The top ``want`` events of a broad query, searched a kind tier at a time (``search.tiers``); None when
        the query is narrow (one pass is cheap) or its scores cannot be bounded."""
        import tantivy

        from voyager_sessions.search import tiers

        root = parsed.root
        if root is None:
            return None
        bound = tiers.plan(
            root,
            tiers.Stats(searcher),
            phrase_terms=qlang.phrase_bonus_terms(root),
            title_boost=TITLE_BOOST if title_boosted else 0.0,
        )
        if bound is None:
            return None
        schema = self.index.schema
        # The heaviest kinds' words are indexed again in ``said`` (terms only): their tier is searched among the
        # events whose ``said`` holds every term the query requires, so a phrase's positions are checked only there.
        said = self.compiler.presence(root, "said")

        def in_kinds(kinds: tuple[str, ...], negate: bool):
            ks = tantivy.Query.term_set_query(schema, "kind", list(kinds))
            if negate:
                return tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.MustNot, ks)])
            clauses = [(tantivy.Occur.Must, q), (tantivy.Occur.Must, tantivy.Query.const_score_query(ks, 0.0))]
            if said is not None and tiers.in_said(kinds):
                clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(said, 0.0)))
            return tantivy.Query.boolean_query(clauses)

        return tiers.ranked(searcher, bound=bound, want=want, in_kinds=in_kinds)

    @staticmethod
    def _title_words(parsed: qlang.ParsedQuery) -> list[str]:
        """The words a title must hold to be boosted."""
        # The few longest words say most about a title (and a pasted log line of a thousand
        # words must not become a thousand-clause lookup).
        return sorted({t.text for t in parsed.texts if not t.prefix and t.text.strip()}, key=len, reverse=True)[
            :TITLE_WORDS
        ]

    def _titled(self, parsed: qlang.ParsedQuery) -> list[str]:
        """The sessions whose title says the query's words (looked up once a search)."""
        words = self._title_words(parsed)
        return self.catalog.session_ids_titled(words) if words else []

    def _title_boost(self, q, parsed: qlang.ParsedQuery, ids: list[str] | None = None):
        """Lift the events of sessions whose title says what was searched for (titles are what people see);
        ``ids``: those sessions, when the search looked them up already."""
        import tantivy

        if ids is None:
            ids = self._titled(parsed)
        if not ids:
            return q
        boost = tantivy.Query.const_score_query(
            tantivy.Query.term_set_query(self.index.schema, "session", ids), TITLE_BOOST
        )
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Should, boost)])

    def _search_sessions(self, query, q, searcher, phrases, opts) -> SearchResult:
        """``--sessions`` for a query of one term: the sessions of its best SESSION_WINDOW events, each shown by
        its best event. Past the window (a common word), the page's sessions are counted by an aggregation over
        their events alone, and the total is the sessions the window holds, a lower bound (``total_exact``
        false): counting every matching session took a bucket per session, 100 ms at 100,000 sessions."""
        # Not counted: a window that is not full holds every match.
        res = searcher.search(q, limit=SESSION_WINDOW, count=False, weight_by_field="w")
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
        exact = len(res.hits) < SESSION_WINDOW
        if not exact and hits:
            page_counts = self._session_counts(searcher, self._restricted(q, [ev.session for _, ev in events]))
            for h, k in zip(hits, page):
                h.hit_count = page_counts.get(k, counts[k])
        else:
            for h, k in zip(hits, page):
                h.hit_count = counts[k]
        return SearchResult(
            schema_version=SCHEMA_VERSION,
            query=query,
            total=len(order),
            offset=opts.offset,
            hits=hits,
            total_exact=exact,
        )

    def _session_counts(self, searcher, q) -> dict[int, int]:
        """Matching events per session, keyed by session key (``sk``: an integer column aggregates ~30 % faster
        than the id's strings, and the window's sessions are known by their keys already)."""
        from voyager_sessions.search import parts
        from voyager_sessions.search.sessions import MAX_SESSIONS

        results = parts.aggregate(searcher, q, {"s": {"terms": {"field": "sk", "size": MAX_SESSIONS}}})
        return {b["key"]: b["doc_count"] for b in parts.buckets(results, "s")}

    # -- several terms: sessions that hold each of them (search.sessions) ---------------

    def _restricted(self, q, ids: Sequence[str]):
        """``q`` limited to the events of sessions ``ids``, scored as ``q`` alone (a term set scores 1, which the
        kind weight would then multiply: a person's words 3 points up, tool output 1)."""
        import tantivy

        among = tantivy.Query.term_set_query(self.index.schema, "session", list(ids))
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, q), (tantivy.Occur.Must, tantivy.Query.const_score_query(among, 0.0))]
        )

    def _among(self, q, cov: sessions.Coverage):
        """``q`` limited to the chosen sessions of ``cov``, naming the fewer: those in, or those out."""
        import tantivy

        if not cov.complete:  # only the narrowest term's sessions were looked at: name the chosen
            return self._restricted(q, cov.chosen)
        held = cov.held  # every session saying a term
        if len(held) == len(cov.chosen):
            return q
        if len(held) - len(cov.chosen) < len(cov.chosen):
            chosen = set(cov.chosen)
            out = [sid for sid in held if sid not in chosen]
            return tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, q),
                    (tantivy.Occur.MustNot, tantivy.Query.term_set_query(self.index.schema, "session", out)),
                ]
            )
        return self._restricted(q, cov.chosen)

    def _spread_events(self, query: str, sp: _Spread, opts: SearchOptions) -> SearchResult:
        """Event hits of a query of several terms: the events of the matching sessions that say any term.

        Events that hold every term (the query as one event would answer it) come first, in
        their usual order, so where such an event exists it still ranks first; then the other
        events of the sessions that hold every term. When no session does (``match: partial``),
        the events of every session that holds some, those of sessions holding more terms first.
        """
        import tantivy

        from voyager_sessions.search import sessions  # only several-term queries need it
        from voyager_sessions.search.tiers import WIDE

        searcher = self.index.searcher()
        terms = [qlang.describe(n) for n in sp.positive]
        want = min(opts.offset + opts.limit, max(searcher.num_docs, 1))
        breadths = sp.breadths
        if opts.sort != "recent" and min(breadths) >= WIDE:
            # Every term common: when the events holding them all fill the page, the page is theirs and the
            # sessions need not be aggregated (a bucket per session per term, the costliest part at scale);
            # the total is then a lower bound (those events), as a broad one-term search's is.
            held_hits, held_count = self._holding_all(searcher, sp, want)
            if len(held_hits) >= want:
                return self._page_of(searcher, query, [(0, s, a) for s, a in held_hits], held_count, sp, opts, terms)
            first = lambda: (held_hits, held_count)  # noqa: E731
        else:
            # The events holding every term (as one event answers the query) rank first when every term has a
            # session: searched while the sessions are aggregated (on the second core where there is one).
            first = sessions.later(lambda: self._holding_all(searcher, sp, want)) if opts.sort != "recent" else None
        cov = sessions.cover(searcher, sp.terms, weights=False, breadths=breadths)
        if not cov.chosen:
            return SearchResult(
                schema_version=SCHEMA_VERSION, query=query, total=0, offset=opts.offset, hits=[], terms=terms
            )
        any_term = tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in sp.terms])
        pool = self._among(any_term, cov)
        # Counting by aggregation (no scoring) is several times cheaper than a counting search. Where the chosen
        # sessions are most of those saying a term: one count of every event saying one, less the events of the
        # few sessions left out (no per-session buckets for the many). Else the chosen sessions' own (``pool``: a
        # common word beside a rare one counts in the rare one's few sessions).
        left_out = [sid for sid, n in cov.held.items() if n < len(sp.terms)] if cov.match == "all" else []
        if cov.match == "all" and cov.complete and len(left_out) < len(cov.chosen):
            total = sessions.count(searcher, any_term) - self._saying_any(searcher, any_term, left_out, cov)
        elif cov.match == "partial":
            total = sessions.count(searcher, any_term)  # every session saying a term is chosen
        else:
            per_session = sessions.evidence(searcher, pool).counts
            total = sum(per_session.get(sid, 0) for sid in cov.chosen)
        if opts.sort == "recent":
            res = searcher.search(pool, limit=max(want, 1), count=False, order_by_field="ts", order=tantivy.Order.Desc)
            scored = [(0, 0.0, addr) for _, addr in res.hits]
        elif cov.match == "all":
            assert first is not None
            first_hits, first_count = first()
            rest_q = tantivy.Query.boolean_query([(tantivy.Occur.Must, pool), (tantivy.Occur.MustNot, sp.plain)])
            scored = [(0, s, a) for s, a in first_hits] + self._tiers(
                searcher,
                [(self._title_boost(rest_q, sp.parsed, sp.titled), total - first_count)],
                skip=first_count,
                want=want,
                first_tier=1,
            )
        else:
            # Partial: the events of sessions holding more terms first, a level of held terms at a time, each
            # restricted to its sessions and counted only when the page reaches it (a partial match of common
            # words holds most sessions: 90,000 of 100,000 for three words, one said nowhere).
            levels = cov.levels()
            tiers: list[tuple[object, int | None]] = (
                [(self._title_boost(any_term, sp.parsed, sp.titled), total)]
                if len(levels) == 1
                else [
                    (lambda ids=ids: self._title_boost(self._restricted(any_term, ids), sp.parsed, sp.titled), None)
                    for ids in levels
                ]
            )
            scored = self._tiers(searcher, tiers, skip=0, want=want, first_tier=1)
        return self._page_of(searcher, query, scored, total, sp, opts, terms, match=cov.match, exact=True)

    def _page_of(
        self,
        searcher,
        query: str,
        scored: list,
        total: int,
        sp: _Spread,
        opts: SearchOptions,
        terms: list[str],
        *,
        match: Literal["all", "partial"] = "all",
        exact: bool = False,
    ) -> SearchResult:
        """The page of ``scored`` ((tier, score, address) on ``searcher``, ranked) a several-term event search
        returns."""
        page = scored[opts.offset : opts.offset + opts.limit]
        events = [(tier, score, _doc_event(searcher, addr)) for tier, score, addr in page]
        if opts.sort != "recent":
            # Recency breaks ties between equally relevant events (within a tier).
            events.sort(key=lambda e: (e[0], -round(e[1], 4), -(e[2].ts or 0.0)))
        phrases = [(tuple(t.terms()), t.prefix) for t in sp.parsed.texts]
        hits = self._hits([(score, ev) for _, score, ev in events], phrases, opts)
        return SearchResult(
            schema_version=SCHEMA_VERSION,
            query=query,
            total=total,
            offset=opts.offset,
            hits=hits,
            match=match,
            terms=terms,
            total_exact=exact,
        )

    def _saying_any(self, searcher, any_term, ids: list[str], cov: sessions.Coverage) -> int:
        """How many events of sessions ``ids`` (each holding some of the terms of ``cov``) say any term: a session
        holding one term says it in as many events as ``cov`` counted; the others are counted by aggregation."""
        from voyager_sessions.search import sessions

        n = 0
        several = []
        for sid in ids:
            if cov.held[sid] == 1:
                n += next(ev.counts[sid] for ev in cov.per_term if sid in ev)
            else:
                several.append(sid)
        if several:
            n += sum(sessions.evidence(searcher, self._restricted(any_term, several)).counts.values())
        return n

    def _holding_all(self, searcher, sp: _Spread, want: int) -> tuple[list, int]:
        """The best ``want`` events holding every term of ``sp`` (a broad query's by tiers) and how many were
        counted (all of them, or at least ``want`` when the tiers stopped early: the page needs no more)."""
        ranked = self._tiered(searcher, sp.parsed, sp.boosted, want, sp.boosted is not sp.strict)
        if ranked is not None:
            return ranked.hits, ranked.count
        res = searcher.search(sp.boosted, limit=max(want, 1), count=True, weight_by_field="w")
        return list(res.hits), res.count

    @staticmethod
    def _tiers(searcher, tiers: list[tuple[object, int | None]], *, skip: int, want: int, first_tier: int) -> list:
        """Ranked events of ``tiers`` (query, how many it matches) in turn, placed after ``skip`` others, up to
        rank ``want``: a tier is searched only when the page reaches it. A tier's query may be a function that
        builds it (built only when reached), and its size None (counted while it is searched). Returns (tier,
        score, address)."""
        out: list = []
        start = skip
        for t, (q, n) in enumerate(tiers, start=first_tier):
            if start >= want:
                break
            if callable(q):
                q = q()
            if n is None:
                res = searcher.search(q, limit=want - start, count=True, weight_by_field="w")
                n = res.count
            elif n > 0:
                res = searcher.search(q, limit=min(n, want - start), count=False, weight_by_field="w")
            if n > 0:
                out += [(t, s, a) for s, a in res.hits]
            start += n
        return out

    def _spread_sessions(self, query: str, sp: _Spread, opts: SearchOptions) -> SearchResult:
        """``--sessions`` for a query of several terms: sessions ranked by how well they hold the terms.

        Each row is the session's best event (one holding every term where there is one), its
        score the session's (``search.sessions.score``), ``hit_count`` its events that say any
        term, and ``matched_terms`` each term it holds with the event that says it best.
        """
        from voyager_sessions.search import sessions  # only several-term queries need it
        from voyager_sessions.search.tiers import WIDE

        searcher = self.index.searcher()
        terms = [qlang.describe(n) for n in sp.positive]
        breadths = sp.breadths
        broad = [b >= WIDE for b in breadths]
        if opts.sort != "recent" and all(broad) and not sp.titled:
            fast = self._together_first(query, searcher, sp, opts, terms)
            if fast is not None:
                return fast
        cov = sessions.cover(searcher, sp.terms, weights=True, broad=broad, together=sp.plain, breadths=breadths)
        if not cov.chosen:
            return SearchResult(
                schema_version=SCHEMA_VERSION, query=query, total=0, offset=opts.offset, hits=[], terms=terms
            )
        together = cov.together
        want = opts.offset + opts.limit
        # Only the sessions that can reach the page are scored: the newest, or (a partial match, where sessions
        # holding more terms come first whatever their score) the levels of held terms the page reaches. At
        # 100,000 sessions a partial match of common words holds most of them.
        ranked = cov.chosen
        if opts.sort == "recent":
            ranked = self.catalog.newest(cov.chosen, want)  # the page's part of the order
        elif cov.match == "partial":
            ranked = []
            for level in cov.levels():
                if len(ranked) >= want:
                    break
                ranked += level
        scored = cov if ranked is cov.chosen else msgspec.structs.replace(cov, chosen=ranked)
        scores = sessions.score(scored, searcher.num_docs, together=set(together), titled=set(sp.titled))
        if opts.sort == "recent":
            order = ranked
        else:
            # Sessions holding more terms first (they all hold every term unless the match is partial), then by
            # score to 4 places, then the most recent. Sorted by the unrounded score (rounding keeps its order,
            # so sessions of equal rank end up side by side), and ranked to 4 places only around the page.
            held = cov.held

            def rank(sid: str) -> tuple[int, float]:
                return (-held[sid], -round(scores[sid], 4))

            if cov.match == "all":
                order = sorted(ranked, key=scores.__getitem__, reverse=True)
            else:
                order = sorted(ranked, key=lambda sid: (held[sid], scores[sid]), reverse=True)
            order = self._recent_first_among_ties(order, rank, window=(opts.offset, want))
        page = order[opts.offset : opts.offset + opts.limit]
        return self._session_rows(query, searcher, sp, opts, terms, cov, scores, page, total=len(cov.chosen))

    def _together_first(self, query: str, searcher, sp: _Spread, opts: SearchOptions, terms: list[str]):
        """``--sessions`` for several words each said in a large share of all events, none of them in a title.

        Scored as said wherever they are said (``search.sessions.cover``), every session holding them all
        scores the same but for the bonus of one event saying them together, so the sessions where one does
        come first, newest first. When they fill the page, the page is shown from them alone: one aggregation
        instead of a bucket per session per word (at 100,000 sessions, 0.6 s); the total is then those
        sessions, a lower bound (``total_exact`` false). None when they do not fill it.
        """
        from voyager_sessions.search import sessions

        k = len(sp.terms)
        # The sessions saying them together, and (for the idf) how many events say each word: side by side.
        found = sessions.each(
            lambda j: sessions.evidence(searcher, sp.plain) if j == 0 else sessions.count(searcher, sp.terms[j - 1]),
            range(k + 1),
        )
        together = found[0]
        dfs = [n for n in found[1:] if isinstance(n, int)]
        assert isinstance(together, sessions.TermEvidence) and len(dfs) == k
        want = opts.offset + opts.limit
        if len(together.counts) < want:
            return None
        page = self.catalog.newest(together.counts, want)[opts.offset :]
        held = dict.fromkeys(page, 1)
        cov = sessions.Coverage(
            per_term=[
                sessions.TermEvidence(counts=held, weight=sessions.BROAD_WEIGHT, presence=True) for _ in sp.terms
            ],
            held=dict.fromkeys(page, len(sp.terms)),
            chosen=page,
            match="all",
            together={sid: together.counts[sid] for sid in page},
            dfs=dfs,
        )
        scores = sessions.score(cov, searcher.num_docs, together=set(page), titled=set())
        return self._session_rows(
            query, searcher, sp, opts, terms, cov, scores, page, total=len(together.counts), exact=False
        )

    def _session_rows(
        self,
        query: str,
        searcher,
        sp: _Spread,
        opts: SearchOptions,
        terms: list[str],
        cov: sessions.Coverage,
        scores: dict[str, float],
        page: list[str],
        *,
        total: int,
        exact: bool = True,
    ) -> SearchResult:
        """The rows of a page of sessions ``page`` of a several-term ``--sessions`` search."""
        import tantivy

        from voyager_sessions.search import sessions

        together = cov.together
        if not page:
            return SearchResult(
                schema_version=SCHEMA_VERSION,
                query=query,
                total=total,
                offset=opts.offset,
                hits=[],
                match=cov.match,
                terms=terms,
                total_exact=exact,
            )
        # Per term, the event of each page session that says it best (by the event ranking: BM25 x kind weight):
        # one small search a (session, term), cheaper than ranking all their events at once.
        # hit_count: the page's sessions' events that say any term (counted over those sessions only), aggregated
        # while the best events are looked up (on the second core where there is one).
        counted = sessions.later(
            lambda: sessions.evidence(
                searcher,
                self._restricted(tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in sp.terms]), page),
                weights=False,
            )
        )
        phrases_all = [(tuple(t.terms()), t.prefix) for t in sp.parsed.texts]
        term_phrases = [[(tuple(t.terms()), t.prefix) for t in qlang.positive_texts(n)] for n in sp.positive]
        rows: list[tuple[float, Event]] = []
        matched: list[list[TermHit]] = []  # per row, in the order of rows
        for sid in page:
            # The row shows the session's best event holding every term where there is one (then each term is
            # shown there: one event for a person to read, and no search a term), else the event of those that
            # say a term best that says the most terms, then the best-scoring one.
            best: dict[int, tuple[float, Event]] = {}  # per term: the event that says it best, looked up when needed

            def best_for(i: int, sid: str = sid, best: dict[int, tuple[float, Event]] = best):
                if i not in best and sid in cov.per_term[i]:
                    b = self._best_in(searcher, sp.terms[i], sid)
                    if b is not None:
                        best[i] = (b[0], _doc_event(searcher, b[1]))
                return best.get(i)

            ev: Event | None = None
            if sid in together and (b := self._best_in(searcher, sp.plain, sid)) is not None:
                ev = _doc_event(searcher, b[1])
            else:
                said = [se for i in range(len(sp.terms)) if (se := best_for(i)) is not None]
                if said:
                    _, ev = max(
                        said, key=lambda se: (sum(1 for ph in term_phrases if find_spans(se[1].text, ph)), se[0])
                    )
            if ev is None:
                continue  # nothing of it left to show (cannot happen on one searcher; never a crash)
            rows.append((scores[sid], ev))
            th = []
            for i in range(len(sp.terms)):
                if sid not in cov.per_term[i]:
                    continue
                # A term the row's own event says is shown there: one event fewer for a person to read.
                spans: list[tuple[int, int]] | None = find_spans(ev.text, term_phrases[i])
                if spans:
                    tev = ev
                elif (se := best_for(i)) is not None:
                    tev, spans = se[1], None
                else:
                    continue
                snippet, highlights = make_snippet(tev.text, term_phrases[i], width=opts.snippet_width, spans=spans)
                th.append(TermHit(term=terms[i], seq=tev.seq, kind=tev.kind, snippet=snippet, highlights=highlights))
            matched.append(th)
        counts = counted().counts
        hits = self._hits(rows, phrases_all, opts)
        for h, th in zip(hits, matched):
            h.hit_count = counts.get(h.session_id, len(th))
            h.matched_terms = th
        return SearchResult(
            schema_version=SCHEMA_VERSION,
            query=query,
            total=total,
            offset=opts.offset,
            hits=hits,
            match=cov.match,
            terms=terms,
            total_exact=exact,
        )

    def _best_in(self, searcher, q, session_id: str) -> tuple[float, object] | None:
        """The best-scoring event of ``q`` in session ``session_id``, as (score, address)."""
        import tantivy

        res = searcher.search(
            tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, q),
                    (tantivy.Occur.Must, tantivy.Query.term_query(self.index.schema, "session", session_id)),
                ]
            ),
            limit=1,
            count=False,
            weight_by_field="w",
        )
        return tuple(res.hits[0]) if res.hits else None

    def _recent_first_among_ties(
        self, order: list[str], rank: Callable[[str], tuple], window: tuple[int, int]
    ) -> list[str]:
        """``order`` (sorted by ``rank``) with sessions of equal rank put newest first (equal ones by id) where that
        changes what the page ``window`` (start, end) shows. The runs of equal rank the page reaches are found by
        bisection, and the catalog is asked only for as many of each run's newest as the page shows: a partial match
        of a common word holds tens of thousands of sessions of a few distinct scores (at 100,000 sessions, ranking
        every one and reading every one's recency took 0.74 s)."""
        lo, hi = max(0, window[0]), min(len(order), window[1])
        if lo >= hi:
            return order
        start = bisect.bisect_left(order, rank(order[lo]), key=rank)
        pieces: list[list[str]] = [order[:start]]
        g0 = start
        while g0 < hi:
            g1 = bisect.bisect_right(order, rank(order[g0]), lo=g0, key=rank)
            run = order[g0:g1]
            if len(run) > 1:
                top = self.catalog.newest(run, min(hi - g0, len(run)))
                if len(top) < len(run):
                    shown = set(top)
                    top += [sid for sid in run if sid not in shown]  # past the page: their order shows nowhere
                run = top
            pieces.append(run)
            g0 = g1
        pieces.append(order[g0:])
        return list(chain.from_iterable(pieces))

    @staticmethod
    def breadths(searcher, positive: list[qlang.Node]) -> list[int]:
        """Per term of a several-term query: at most how many events say it (from document frequencies): where
        the narrowest bounds the search for the others, and whether a term is so common that its kind weights are
        not worth aggregating (``search.sessions.cover``)."""
        from voyager_sessions.search import tiers

        stats = tiers.Stats(searcher)
        return [tiers.breadth(n, stats) for n in positive]

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
                project=(s.git_repo or s.cwd) if s else None,
            )
            if opts.context > 0:
                hit.context = self.index.session_events(
                    ev.session, lo=max(0, ev.seq - opts.context), hi=ev.seq + opts.context
                )
            hits.append(hit)
        return hits


class _Spread(msgspec.Struct, kw_only=True):
    """A query of several terms, compiled: each term with the event constraints, and the whole as one event answers it."""

    positive: list[qlang.Node]
    #: Per positive conjunct: its query ANDed with the filters and negations.
    terms: list
    #: The whole query (every term in one event), and the same with the title boost.
    strict: object
    boosted: object
    #: The whole query without the phrase bonus: what matches, not how well (aggregations, one session's events).
    plain: object
    parsed: qlang.ParsedQuery
    #: The sessions whose title says the query's words.
    titled: list[str] = []
    #: Per term, at most how many events say it (``Searcher.breadths``).
    breadths: list[int] = []


def _rows_say(result: SearchResult, terms: list[str]) -> None:
    """Each row of a one-term ``--sessions`` result says ``terms`` in its own event (``matched_terms``)."""
    for h in result.hits:
        h.matched_terms = [
            TermHit(term=t, seq=h.seq, kind=h.kind, snippet=h.snippet, highlights=h.highlights) for t in terms
        ]


def _doc_event(searcher, addr) -> Event:
    from voyager_sessions.search.index import doc_to_event

    return doc_to_event(searcher.doc(addr))
