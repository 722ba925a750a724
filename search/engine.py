"""Answering a search: parse, compile, rank, cut snippets, join session metadata.

:class:`Searcher` knows Tantivy and the query language and nothing else: the caller
hands it an open :class:`~voyager_sessions.search.index.SearchIndex`, a
:class:`SessionCatalog` (what it needs to know about sessions: their metadata for hits,
and which ones a ``session:`` filter, a session-attribute filter such as ``repo:`` or a title names) and the
provider names the ``provider:`` filter accepts. The application layer
(:mod:`voyager_sessions.api`) wires it to the state store.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING, Literal, Protocol, cast

import msgspec

from voyager_sessions.core.filters import BY_NAME
from voyager_sessions.core.model import SCHEMA_VERSION, Event, Hit, SearchResult, SessionRecord, TermHit, iso
from voyager_sessions.search import plan as planner
from voyager_sessions.search.compiler import TITLE_BOOST, Compiler, Spread
from voyager_sessions.search.plan import SearchOptions, phrases
from voyager_sessions.search.snippets import find_spans, make_snippet
from voyager_sessions.search import syntax
from voyager_sessions.search.syntax import ParsedQuery, QueryError, positive_texts

if TYPE_CHECKING:
    import tantivy

    from voyager_sessions.search import sessions
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.search.snippets import Phrase
    from voyager_sessions.search.syntax import Node
    from voyager_sessions.search.tiers import Ranked

__all__ = ["SearchOptions", "SessionCatalog", "Searcher", "TITLE_BOOST"]

#: In --sessions mode, hits are grouped from this many best-scoring events.
SESSION_WINDOW = 5000


class SessionCatalog(Protocol):
    """What a search needs to know about sessions (the state store provides it)."""

    def resolve_session(self, ref: str, limit: int = 50) -> list[str]:
        """Ids of the sessions ``ref`` names: an id, a native id or a prefix of either."""
        ...

    def session_ids_where(self, columns: Sequence[str], text: str) -> list[str]:
        """Ids of the sessions one of whose attributes ``columns`` contains ``text``, case-insensitively (a
        session-attribute filter: ``core.filters``)."""
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


class Searcher:
    """An open index and a session catalog, ready for many queries (the bench and the server reuse one)."""

    def __init__(self, index: SearchIndex, catalog: SessionCatalog, providers: Sequence[str]) -> None:
        self.index = index
        self.catalog = catalog
        self.providers = tuple(providers)
        self.compiler = Compiler(
            self.index.schema, self._resolve, self.providers, lambda term: self.index.searcher().doc_freq("parts", term)
        )

    def _resolve(self, field: str, value: str) -> list[str]:
        if field == "session":
            return self.catalog.resolve_session(value, limit=100_000)
        return self.catalog.session_ids_where(BY_NAME[field].columns, value)

    def search(
        self,
        query: str,
        opts: SearchOptions | None = None,
        *,
        parsed: ParsedQuery | None = None,
        rows: RowsWanted | None = None,
    ) -> SearchResult:
        """Answer ``query`` (``parsed``: it was parsed already); a QueryError when it is malformed, IndexDamaged
        when Tantivy cannot read the index.

        ``rows`` (meaning search's fusion, which reads the word ranking deeper than it shows): told the ranked
        sessions of a several-term ``--sessions`` search as bare rows (session id, score and ``match`` only), it
        names those whose rows are read (their event, snippets, ``matched_terms``, ``hit_count``); the others stay
        bare. Each row is read alone, so a row read is the same either way. Any other search reads every row.

        A query of one term (a word, a phrase, a CJK run, an ``a OR b``), with any filters and
        negations, matches the events that hold it, as it always has. A query of several terms
        matches the *sessions* that hold each of them somewhere (``search.sessions``); its
        hits are those sessions' events that say the terms, any event holding every term first.
        What the query means is worked out once (``search.plan``), then compiled (``search.compiler``).
        """
        from voyager_sessions.search.index import damaged

        opts = opts or SearchOptions()
        plan = planner.make(syntax.parse(query) if parsed is None else parsed, opts)
        strict = self.compiler.compile(plan.parsed)
        titled = self._titled(plan.parsed)
        q = self.compiler.title_boost(strict, titled)
        try:
            searcher = self.index.searcher()
            measured = planner.measure(plan, searcher, holds=lambda n: self._holds(searcher, n))
            if measured.parsed is not plan.parsed:  # a CJK description read as its pairs: what is matched changed
                strict = self.compiler.compile(measured.parsed)
                titled = self._titled(measured.parsed)
                q = self.compiler.title_boost(strict, titled)
            plan = measured
            if plan.matching == "one":
                return self._one_of(query, plan, opts)
            if plan.matching == "sessions":
                spread = self.compiler.spread(plan, strict, q, titled)
                if opts.sessions:
                    return self._spread_sessions(query, spread, opts, rows)
                return self._spread_events(query, spread, opts)
            result = self._search(query, plan.parsed, q, opts, title_boosted=q is not strict)
            result.terms = list(plan.terms)
            if opts.sessions and len(plan.positive) <= 1:
                _rows_say(result, result.terms)  # the row's event holds the one term (a filter-only query has none)
            return result
        except QueryError:
            raise
        except ValueError as exc:  # what tantivy-py raises for an unreadable segment
            raise damaged(self.index.path, exc) from None

    def _holds(self, searcher: tantivy.Searcher, node: Node) -> bool:
        """Whether some event matches ``node`` (a CJK run: is it said as typed?)."""
        q = self.compiler.node(node)
        return q is not None and searcher.search(q, limit=1, count=False).hits != []

    def _one_of(self, query: str, plan: planner.Plan, opts: SearchOptions) -> SearchResult:
        """A query of several terms only one of which is said anywhere (``plan.said``), answered as the query of
        that term and the filters and negations alone: a partial match (``match``) naming every term.

        Ranked as the session-level match would rank it too (every session holds one term), but without a
        bucket per session: "databse migration" at 100,000 sessions took 0.8 s, the common word alone 30 ms."""
        assert plan.said is not None
        parsed = plan.one_term()
        strict = self.compiler.compile(parsed)
        titled = self._titled(parsed)
        q = self.compiler.title_boost(strict, titled)
        result = self._search(query, parsed, q, opts, title_boosted=q is not strict)
        result.terms = list(plan.terms)
        result.match = "partial"
        if opts.sessions:
            _rows_say(result, [plan.terms[plan.positive.index(plan.said)]])
        return result

    def _search(
        self, query: str, parsed: ParsedQuery, q: tantivy.Query, opts: SearchOptions, *, title_boosted: bool = False
    ) -> SearchResult:
        import tantivy

        from voyager_sessions.search.index import counted

        searcher = self.index.searcher()
        shown = phrases(parsed.texts)
        if opts.sessions:
            return self._search_sessions(query, q, searcher, shown, opts)
        # Never ask for more hits than there are documents: an offset of 10^11 would make
        # Tantivy allocate for that many (and abort the process); past the end is an empty page.
        want = min(opts.offset + opts.limit, max(searcher.num_docs, 1))
        exact = True
        scored: list[tuple[float, tantivy.DocAddress]]
        if opts.sort == "recent" or not parsed.texts:
            res = searcher.search(q, limit=max(want, 1), count=True, order_by_field="ts", order=tantivy.Order.Desc)
            scored = [(0.0, addr) for _, addr in res.hits]
            count = counted(res)
        elif (ranked := self._tiered(searcher, parsed, q, want, title_boosted)) is not None:
            scored, count, exact = ranked.hits, ranked.count, ranked.exact
        else:
            res = searcher.search(q, limit=max(want, 1), count=True, weight_by_field="w")
            scored = list(res.hits)
            count = counted(res)
        page = scored[opts.offset : want]
        events = [(score, _doc_event(searcher, addr)) for score, addr in page]
        if opts.sort != "recent" and parsed.texts:
            # Recency breaks ties between equally relevant events.
            events.sort(key=lambda se: (-round(se[0], 4), -(se[1].ts or 0.0)))
        hits = self._hits(events, shown, opts)
        return SearchResult(
            schema_version=SCHEMA_VERSION, query=query, total=count, offset=opts.offset, hits=hits, total_exact=exact
        )

    def _tiered(
        self, searcher: tantivy.Searcher, parsed: ParsedQuery, q: tantivy.Query, want: int, title_boosted: bool
    ) -> Ranked | None:
        """The top ``want`` events of a broad query, searched a kind tier at a time (``search.tiers``); None when
        the query is narrow (one pass is cheap) or its scores cannot be bounded."""
        from voyager_sessions.search import tiers

        root = parsed.root
        if root is None:
            return None
        bound = tiers.plan(
            root,
            planner.Stats(searcher),
            phrase_terms=planner.phrase_bonus_terms(root),
            title_boost=TITLE_BOOST if title_boosted else 0.0,
        )
        if bound is None:
            return None
        # The heaviest kinds' words are indexed again in ``said`` (terms only): their tier is searched among the
        # events whose ``said`` holds every term the query requires, so a phrase's positions are checked only there.
        said = self.compiler.presence(root, "said")

        def in_kinds(kinds: tuple[str, ...], negate: bool) -> tantivy.Query:
            return self.compiler.in_kinds(q, kinds, negate=negate, said=said if tiers.in_said(kinds) else None)

        return tiers.ranked(searcher, bound=bound, want=want, in_kinds=in_kinds)

    def _titled(self, parsed: ParsedQuery) -> list[str]:
        """The sessions whose title says the query's words (looked up once a search)."""
        words = planner.title_words(parsed)
        return self.catalog.session_ids_titled(words) if words else []

    def _search_sessions(
        self, query: str, q: tantivy.Query, searcher: tantivy.Searcher, phrases: list[Phrase], opts: SearchOptions
    ) -> SearchResult:
        """``--sessions`` for a query of one term: the sessions of its best SESSION_WINDOW events, each shown by
        its best event. Past the window (a common word), the page's sessions are counted by an aggregation over
        their events alone, and the total is the sessions the window holds, a lower bound (``total_exact``
        false): counting every matching session took a bucket per session, 100 ms at 100,000 sessions."""
        # Not counted: a window that is not full holds every match.
        res = searcher.search(q, limit=SESSION_WINDOW, count=False, weight_by_field="w")
        addrs = [addr for _, addr in res.hits]
        keys = cast("list[int]", searcher.fast_field_values("sk", addrs) if res.hits else [])  # unsigned: ints
        best: dict[int, tuple[float, tantivy.DocAddress]] = {}
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
            page_counts = self._session_counts(searcher, self.compiler.restricted(q, [ev.session for _, ev in events]))
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

    def _session_counts(self, searcher: tantivy.Searcher, q: tantivy.Query) -> dict[int, int]:
        """Matching events per session, keyed by session key (``sk``: an integer column aggregates ~30 % faster
        than the id's strings, and the window's sessions are known by their keys already)."""
        from voyager_sessions.search import parts
        from voyager_sessions.search.sessions import MAX_SESSIONS

        results = parts.aggregate(searcher, q, {"s": {"terms": {"field": "sk", "size": MAX_SESSIONS}}})
        return {b["key"]: b["doc_count"] for b in parts.buckets(results, "s")}

    # -- several terms: sessions that hold each of them (search.sessions) ---------------

    def _among(self, q: tantivy.Query, cov: sessions.Coverage) -> tantivy.Query:
        """``q`` limited to the chosen sessions of ``cov``, naming the fewer: those in, or those out."""
        if not cov.complete:  # only the narrowest term's sessions were looked at: name the chosen
            return self.compiler.restricted(q, cov.chosen)
        held = cov.held  # every session saying a term
        if len(held) == len(cov.chosen):
            return q
        if len(held) - len(cov.chosen) < len(cov.chosen):
            chosen = set(cov.chosen)
            return self.compiler.excluding(q, [sid for sid in held if sid not in chosen])
        return self.compiler.restricted(q, cov.chosen)

    def _spread_events(self, query: str, sp: Spread, opts: SearchOptions) -> SearchResult:
        """Event hits of a query of several terms: the events of the matching sessions that say any term.

        Events that hold every term (the query as one event would answer it) come first, in
        their usual order, so where such an event exists it still ranks first; then the other
        events of the sessions that hold every term. When no session does (``match: partial``),
        the events of every session that holds some, those of sessions holding more of the query first (each term
        weighing its idf: ``search.sessions``).
        """
        import tantivy

        from voyager_sessions.search import sessions  # only several-term queries need it
        from voyager_sessions.search.tiers import WIDE

        searcher = self.index.searcher()
        terms = list(sp.plan.terms)
        want = min(opts.offset + opts.limit, max(searcher.num_docs, 1))
        breadths = sp.breadths
        if opts.sort != "recent" and min(breadths) >= WIDE:
            # Every term common: when the events holding them all fill the page, the page is theirs and the
            # sessions need not be aggregated (a bucket per session per term, the costliest part at scale);
            # the total is then a lower bound (those events), as a broad one-term search's is.
            held_hits, held_count = self._holding_all(searcher, sp, want)
            if len(held_hits) >= want:
                return self._page_of(searcher, query, [(0, s, a) for s, a in held_hits], held_count, sp, opts, terms)
            first: Callable[[], tuple[list[tuple[float, tantivy.DocAddress]], int]] | None = lambda: (  # noqa: E731
                held_hits,
                held_count,
            )
        else:
            # The events holding every term (as one event answers the query) rank first when every term has a
            # session: searched while the sessions are aggregated (on the second core where there is one).
            first = sessions.later(lambda: self._holding_all(searcher, sp, want)) if opts.sort != "recent" else None
        cov = sessions.cover(searcher, sp.terms, weights=False, breadths=breadths)
        if not cov.chosen:
            return SearchResult(
                schema_version=SCHEMA_VERSION, query=query, total=0, offset=opts.offset, hits=[], terms=terms
            )
        any_term = self.compiler.any_of(sp.terms)
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
            rest_q = self.compiler.without(pool, sp.plain)
            scored = [(0, s, a) for s, a in first_hits] + self._tiers(
                searcher,
                [(self.compiler.title_boost(rest_q, sp.titled), total - first_count)],
                skip=first_count,
                want=want,
                first_tier=1,
            )
        else:
            # Partial: the events of sessions holding more of the query first, a level of held weight at a time, each
            # restricted to its sessions and counted only when the page reaches it (a partial match of common
            # words holds most sessions: 90,000 of 100,000 for three words, one said nowhere).
            levels = cov.levels()

            def level(ids: list[str]) -> tantivy.Query:
                return self.compiler.title_boost(self.compiler.restricted(any_term, ids), sp.titled)

            tiers: list[tuple[tantivy.Query | Callable[[], tantivy.Query], int | None]] = (
                [(self.compiler.title_boost(any_term, sp.titled), total)]
                if len(levels) == 1
                else [(partial(level, ids), None) for ids in levels]
            )
            scored = self._tiers(searcher, tiers, skip=0, want=want, first_tier=1)
        return self._page_of(searcher, query, scored, total, sp, opts, terms, match=cov.match, exact=True)

    def _page_of(
        self,
        searcher: tantivy.Searcher,
        query: str,
        scored: list[tuple[int, float, tantivy.DocAddress]],
        total: int,
        sp: Spread,
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
        hits = self._hits([(score, ev) for _, score, ev in events], phrases(sp.parsed.texts), opts)
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

    def _saying_any(
        self, searcher: tantivy.Searcher, any_term: tantivy.Query, ids: list[str], cov: sessions.Coverage
    ) -> int:
        """How many events of sessions ``ids`` (each holding some of the terms of ``cov``) say any term: a session
        holding one term says it in as many events as ``cov`` counted; the others are counted by aggregation."""
        from voyager_sessions.search import sessions

        n = 0
        several: list[str] = []
        for sid in ids:
            if cov.held[sid] == 1:
                n += next(ev.counts[sid] for ev in cov.per_term if sid in ev)
            else:
                several.append(sid)
        if several:
            n += sum(sessions.evidence(searcher, self.compiler.restricted(any_term, several)).counts.values())
        return n

    def _holding_all(
        self, searcher: tantivy.Searcher, sp: Spread, want: int
    ) -> tuple[list[tuple[float, tantivy.DocAddress]], int]:
        """The best ``want`` events holding every term of ``sp`` (a broad query's by tiers) and how many were
        counted (all of them, or at least ``want`` when the tiers stopped early: the page needs no more)."""
        ranked = self._tiered(searcher, sp.parsed, sp.boosted, want, sp.boosted is not sp.strict)
        if ranked is not None:
            return ranked.hits, ranked.count
        from voyager_sessions.search.index import counted

        res = searcher.search(sp.boosted, limit=max(want, 1), count=True, weight_by_field="w")
        return list(res.hits), counted(res)

    @staticmethod
    def _tiers(
        searcher: tantivy.Searcher,
        tiers: list[tuple[tantivy.Query | Callable[[], tantivy.Query], int | None]],
        *,
        skip: int,
        want: int,
        first_tier: int,
    ) -> list[tuple[int, float, tantivy.DocAddress]]:
        """Ranked events of ``tiers`` (query, how many it matches) in turn, placed after ``skip`` others, up to
        rank ``want``: a tier is searched only when the page reaches it. A tier's query may be a function that
        builds it (built only when reached), and its size None (counted while it is searched). Returns (tier,
        score, address)."""
        from voyager_sessions.search.index import counted

        out: list[tuple[int, float, tantivy.DocAddress]] = []
        start = skip
        for t, (q, n) in enumerate(tiers, start=first_tier):
            if start >= want:
                break
            if callable(q):
                q = q()
            if n is None:
                res = searcher.search(q, limit=want - start, count=True, weight_by_field="w")
                n = counted(res)
            elif n > 0:
                res = searcher.search(q, limit=min(n, want - start), count=False, weight_by_field="w")
            if n > 0:
                out += [(t, s, a) for s, a in res.hits]
            start += n
        return out

    def _spread_sessions(
        self, query: str, sp: Spread, opts: SearchOptions, wanted: RowsWanted | None = None
    ) -> SearchResult:
        """``--sessions`` for a query of several terms: sessions ranked by how well they hold the terms.

        Each row is the session's best event (one holding every term where there is one), its
        score the session's (``search.sessions.score``), ``hit_count`` its events that say any
        term, and ``matched_terms`` each term it holds with the event that says it best.
        """
        from voyager_sessions.search import sessions  # only several-term queries need it
        from voyager_sessions.search.tiers import WIDE

        searcher = self.index.searcher()
        terms = list(sp.plan.terms)
        breadths = sp.breadths
        broad = [b >= WIDE for b in breadths]
        if opts.sort != "recent" and all(broad) and not sp.titled:
            fast = self._together_first(query, searcher, sp, opts, terms, wanted)
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
        # holding more of the query come first whatever their score) the levels of held weight the page reaches. At
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
            # Sessions holding more of the query first (they all hold every term unless the match is partial), then by
            # score to 4 places, then the most recent. Sorted by the unrounded score (rounding keeps its order,
            # so sessions of equal rank end up side by side), and ranked to 4 places only around the page.
            weight = cov.weight

            def rank(sid: str) -> tuple[float, float]:
                return (-weight.get(sid, 0.0), -round(scores[sid], 4))

            if cov.match == "all":
                order = sorted(ranked, key=scores.__getitem__, reverse=True)
            else:
                order = sorted(ranked, key=lambda sid: (weight[sid], scores[sid]), reverse=True)
            order = self._recent_first_among_ties(order, rank, window=(opts.offset, want))
        page = order[opts.offset : opts.offset + opts.limit]
        return self._session_rows(
            query, searcher, sp, opts, terms, cov, scores, page, total=len(cov.chosen), wanted=wanted
        )

    def _together_first(
        self,
        query: str,
        searcher: tantivy.Searcher,
        sp: Spread,
        opts: SearchOptions,
        terms: list[str],
        wanted: RowsWanted | None = None,
    ) -> SearchResult | None:
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
            query, searcher, sp, opts, terms, cov, scores, page, total=len(together.counts), exact=False, wanted=wanted
        )

    def _session_rows(
        self,
        query: str,
        searcher: tantivy.Searcher,
        sp: Spread,
        opts: SearchOptions,
        terms: list[str],
        cov: sessions.Coverage,
        scores: dict[str, float],
        page: list[str],
        *,
        total: int,
        exact: bool = True,
        wanted: RowsWanted | None = None,
    ) -> SearchResult:
        """The rows of a page of sessions ``page`` of a several-term ``--sessions`` search (``wanted``: see
        :meth:`search`)."""
        from voyager_sessions.search import sessions

        together = cov.together

        def result(hits: list[Hit]) -> SearchResult:
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

        if not page:
            return result([])
        bare: dict[str, Hit] = {}
        order_of_page = page
        if wanted is not None:
            bare = {sid: _bare_hit(sid, scores[sid], cov.match) for sid in page}
            read = set(wanted(result(list(bare.values()))))
            for sid in read:
                bare.pop(sid, None)
            page = [sid for sid in page if sid not in bare]
            if not page:
                return result(list(bare.values()))
        # Per term, the event of each page session that says it best (by the event ranking: BM25 x kind weight):
        # one small search a (session, term), cheaper than ranking all their events at once.
        # hit_count: the page's sessions' events that say any term (counted over those sessions only), aggregated
        # while the best events are looked up (on the second core where there is one).
        any_term = self.compiler.any_of(sp.terms)
        counted = sessions.later(
            lambda: sessions.evidence(searcher, self.compiler.any_among(sp.terms, page), weights=False)
        )
        phrases_all = phrases(sp.parsed.texts)
        term_phrases = [phrases(positive_texts(n)) for n in sp.positive]
        rows: list[tuple[float, Event]] = []
        matched: list[list[TermHit]] = []  # per row, in the order of rows
        for sid in page:
            # The row shows the session's best event holding every term where there is one (then each term is
            # shown there: one event for a person to read, and no search a term), else its best event for any of
            # the terms (their scores add up: an event saying more of them, and rarer ones, scores higher). One
            # search a row, whatever the number of terms (a description of thirty words asked thirty).
            best: dict[int, tuple[float, Event]] = {}  # per term: the event that says it best, looked up when needed

            def best_for(
                i: int, sid: str = sid, best: dict[int, tuple[float, Event]] = best
            ) -> tuple[float, Event] | None:
                if i not in best and sid in cov.per_term[i]:
                    b = self._best_in(searcher, sp.terms[i], sid)
                    if b is not None:
                        best[i] = (b[0], _doc_event(searcher, b[1]))
                return best.get(i)

            ev: Event | None = None
            b = self._best_in(searcher, sp.plain, sid) if sid in together else None
            if b is None:
                b = self._best_in(searcher, any_term, sid, each=sp.terms)
            if b is not None:
                ev = _doc_event(searcher, b[1])
            if ev is None:
                continue  # nothing of it left to show (cannot happen on one searcher; never a crash)
            rows.append((scores[sid], ev))
            th: list[TermHit] = []
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
        if bare:  # the rows read, and the bare ones, in the ranking's order
            read_rows = {h.session_id: h for h in hits}
            hits = [bare.get(sid) or read_rows[sid] for sid in order_of_page if sid in bare or sid in read_rows]
        return result(hits)

    def _best_in(
        self,
        searcher: tantivy.Searcher,
        q: tantivy.Query,
        session_id: str,
        *,
        each: Sequence[tantivy.Query] | None = None,
    ) -> tuple[float, tantivy.DocAddress] | None:
        """The best-scoring event of ``q`` in session ``session_id``, as (score, address); ``each``: the clauses
        ``q`` is any of, looked for in the session clause by clause (``Compiler.any_in_session``: the same answer)."""
        within = (
            self.compiler.in_session(q, session_id) if each is None else self.compiler.any_in_session(each, session_id)
        )
        res = searcher.search(within, limit=1, count=False, weight_by_field="w")
        if not res.hits:
            return None
        score, addr = res.hits[0]
        return score, addr

    def _recent_first_among_ties(
        self, order: list[str], rank: Callable[[str], tuple[float, float]], window: tuple[int, int]
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

    def _hits(self, events: list[tuple[float, Event]], phrases: Sequence[Phrase], opts: SearchOptions) -> list[Hit]:
        sessions = self.catalog.sessions_by_id(ev.session for _, ev in events)
        hits: list[Hit] = []
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


#: Told a search's ranked sessions as bare rows, which of them to read rows for (see ``Searcher.search``).
RowsWanted = Callable[[SearchResult], Collection[str]]


def _bare_hit(session_id: str, score: float, match: Literal["all", "partial"]) -> Hit:
    """A ranked session's row before it is read: its id, provider, score and match level only."""
    return Hit(
        session_id=session_id,
        provider=session_id.partition(":")[0],
        seq=0,
        kind="",
        origin="",
        timestamp=None,
        cwd=None,
        title=None,
        snippet="",
        highlights=[],
        score=round(float(score), 4),
        resume=None,
        match=match,
    )


def _rows_say(result: SearchResult, terms: list[str]) -> None:
    """Each row of a one-term ``--sessions`` result says ``terms`` in its own event (``matched_terms``)."""
    for h in result.hits:
        h.matched_terms = [
            TermHit(term=t, seq=h.seq, kind=h.kind, snippet=h.snippet, highlights=h.highlights) for t in terms
        ]


def _doc_event(searcher: tantivy.Searcher, addr: tantivy.DocAddress) -> Event:
    from voyager_sessions.search.index import doc_to_event

    return doc_to_event(searcher.doc(addr))
