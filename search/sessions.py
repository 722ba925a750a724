"""Session-level matching: which sessions hold every term of a query, and how well.

People remember a session by a few words said in different messages of it (the prompt,
a tool's output, the agent's reply), so a query of several terms matches a *session*
when each term occurs in some event of it. This module owns that step; ``engine`` turns
its answer into hits.

How it works, and why (measured on a 200k-event bench corpus, see the README):

* One Tantivy terms aggregation per term, over the events that match the term *and* the
  query's event constraints (filters, negations), keyed by session: how many events of
  each session say the term and, for ranking, the best kind of event that says it (the
  index's ``w`` weight: a person's prompt > the agent's words > tool output). An
  aggregation over a common word's ~30k events costs under 1 ms (2 ms with the kind
  weight); collecting the top events instead costs ~4 ms and still misses sessions.
* Coverage: which terms a session holds. Sessions holding all of them match; when none
  does, every session holding some does (``partial``), those holding more of the query first,
  each term weighing its idf (``Coverage.weight``, issue #34): a rare word held outweighs
  ``the``, ``so``, ``and``, ``I`` together, which count as much as the words of a description
  only when a session holds the same rare words. A term no event says holds no session and
  is not aggregated (a description of thirty words, some never said, asks for the rest).
* Rank (``score``): a BM25 over sessions computed from the aggregation, with "events of
  the session that say the term" as the term frequency: per term
  ``idf * tf*(k1+1)/(tf+k1) * log2(2 + best kind weight)``, summed; plus a bonus when one
  event of the session holds every term (the words were said together), and one when the
  session's title holds the words. Recency breaks ties. There is no length normalization:
  the catalog's event counts would cost a lookup per candidate session, and the saturation
  of ``tf`` already keeps a long session from winning by repetition.
* A rare term bounds the rest: when the narrowest term is said in at most :data:`NARROW_SESSIONS`
  sessions, the others are aggregated in those sessions only (only they can hold every term), their
  idf from a count over the whole index. A common word has a bucket in every session that says it: at
  100,000 sessions one aggregation of it took 60-70 ms (``zorblax migration`` 249 -> 18 ms there).
* Past 65,000 sessions, an aggregation is split by session key (``search.parts``: Tantivy refuses more
  buckets than that in one).
* A session-level *document* (each session's whole text indexed once more) was not built:
  it doubles the index, and a session that grows by appending (every refresh of a live
  session) would have its whole text re-indexed on every scan, for little left to win:

Measured on the judged set of ``bench/`` (150 sessions, 95 queries written before any
ranking was seen; ``--sessions``, S@1 / S@5 / MRR@10): remembered words 1.00 / 1.00 / 1.00,
CJK 1.00 / 1.00 / 1.00, paraphrases 0.625 / 0.925 / 0.735 (main: 0 in every class; the
issue's targets: 0.94 / 0.97 remembered, 0.88 paraphrase S@5, 0.85 CJK S@5). Coverage does
the work; the rest moves one paraphrase query of forty either way (without the bonuses:
unchanged; without kind weights: 0.65 / 0.95 / 0.76; presence instead of ``tf``: 0.65 /
0.925 / 0.76; unsaturated ``tf``: 0.65 / 0.925 / 0.75; score before coverage: 0.65 / 0.95 /
0.76), within what forty queries can tell apart, so the ranking the issue describes (coverage
first; a person's words above tool output) stays rather than a fit to the held-out set.
"""

from __future__ import annotations

import math
import os
import threading
from collections import Counter
from operator import add, itemgetter
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from contextlib import contextmanager
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import msgspec

from voyager_sessions.search import parts

if TYPE_CHECKING:
    import tantivy
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")

#: BM25's term-frequency saturation, applied to "events of the session that say the term".
K1 = 1.2
#: Bonus (times the summed idf of the terms) for a session where one event holds every term.
TOGETHER_BONUS = 0.5
#: Bonus (times the summed idf of the terms) for a session whose title holds the query's words.
TITLE_BONUS = 0.5
#: Buckets a terms aggregation may return: more than any history holds sessions.
MAX_SESSIONS = 1_000_000
#: The kind weight a broad term counts with in every session (the agent's words: the middle of the scale).
BROAD_WEIGHT = 2
#: A term said in at most this many events, in at most NARROW_SESSIONS sessions, bounds where a several-term
#: query looks for the others (``cover``).
NARROW_EVENTS = 100_000
NARROW_SESSIONS = 500


class TermEvidence(msgspec.Struct):
    """What the sessions hold of one term: per session, how many of its events say it (``counts``), and the best
    kind weight among them (``weights``; when the weights were not aggregated, ``weight`` for every session).
    Plain integers per session: a common word has a bucket in every session, and a thousand objects a term
    were a visible share of a several-term query."""

    counts: dict[str, int]
    weights: dict[str, int] | None = None
    weight: int = 0
    #: Scored as said once wherever it is said (a broad term: see ``cover``).
    presence: bool = False

    def __contains__(self, sid: object) -> bool:
        return sid in self.counts


class Coverage(msgspec.Struct):
    """Sessions and the terms they hold (``per_term[i]``: the evidence for term ``i``)."""

    per_term: list[TermEvidence]
    #: How many terms each session that holds any of them holds.
    held: dict[str, int]
    #: The sessions holding every term when any does (``match`` = all); else every session holding some
    #: (``match`` = partial), to be ranked by how many they hold.
    chosen: list[str]
    match: Literal["all", "partial"]
    #: Sessions where one event holds every term, and in how many events (``cover``'s ``together`` query; only
    #: when every term has a session: ``match`` = all).
    together: dict[str, int] = {}
    #: How many events say each term (over the whole index).
    dfs: list[int] = []
    #: Whether ``held`` covers every session holding a term (false: only the narrowest term's sessions were
    #: looked at, which hold every session that holds every term).
    complete: bool = True
    #: Per session in ``held``: how much of the query it holds, each term counting its idf (``weights``), so that
    #: a rare word held outweighs common ones: what a partial match ranks by first.
    weight: dict[str, float] = {}

    def levels(self) -> list[list[str]]:
        """The chosen sessions grouped by how much of the query they hold (``weight``), most first."""
        by: dict[float, list[str]] = {}
        for sid in self.chosen:
            by.setdefault(self.weight[sid], []).append(sid)
        return [by[w] for w in sorted(by, reverse=True)]


#: A terms aggregation's bucket's key and its count of events.
_KEY = itemgetter("key")
_COUNT = itemgetter("doc_count")


def evidence(
    searcher: tantivy.Searcher, query: tantivy.Query, *, weights: bool = False, weight: int = 0
) -> TermEvidence:
    """Per session: how many events match ``query`` and (``weights``) the best kind weight among them (else
    ``weight`` for every session)."""
    return _evidence(searcher, query, weights, weight, KEYS)


def _evidence(
    searcher: tantivy.Searcher, query: tantivy.Query, weights: bool, weight: int, keys: KeyMap | None
) -> TermEvidence:
    spec: dict[str, Any] = {"terms": {"field": "session" if keys is None else "sk", "size": MAX_SESSIONS}}
    if weights:
        by_kind = _by_kind(searcher, query, spec, keys)
        if by_kind is not None:
            return by_kind
        spec["aggs"] = {"w": {"max": {"field": "w"}}}
    buckets = parts.buckets(parts.aggregate(searcher, query, {"s": spec}), "s")
    # A bucket per session (10,000 for a word every session says): each field read by a C-level map.
    found = list(map(_KEY, buckets))
    ids = found if keys is None else keys.ids(searcher, found)
    if ids is None:  # a key no session id of this index hashes to (never, but then the ids are asked for)
        return _evidence(searcher, query, weights, weight, None)
    counts = dict(zip(ids, map(_COUNT, buckets)))
    if not weights:
        return TermEvidence(counts, weight=weight)
    return TermEvidence(counts, weights=dict(zip(ids, [int((b.get("w") or {}).get("value") or 0) for b in buckets])))


#: Whether :func:`_by_kind` may be tried (false once Tantivy refused its buckets: a history only grows).
_BY_KIND = [True]


def _by_kind(
    searcher: tantivy.Searcher, query: tantivy.Query, by_session: dict[str, Any], keys: KeyMap | None
) -> TermEvidence | None:
    """``evidence`` with the kind weights, from one aggregation by kind weight, then by session within each: a
    session's count is the sum over the kinds that say the term, its weight the heaviest of them. The same
    evidence as a ``max`` of ``w`` in each session's bucket, which cost Tantivy a metric per bucket: ``on`` said
    by 5,000 of 10,000 sessions, 12.4 -> 4.9 ms of CPU (docs/bench.md). A term is weighted only when it is said in
    fewer than ``tiers.WIDE`` events (``cover``), so its buckets (a session per kind weight) stay far below what
    Tantivy allows in one aggregation; None, and never again in this process, if it refuses them anyway (the
    caller then asks for the ``max``, split by session key as ``search.parts`` does)."""
    if not _BY_KIND[0]:
        return None
    spec = {"k": {"terms": {"field": "w", "size": 256}, "aggs": {"s": by_session}}}
    try:
        res = searcher.aggregate(query, spec)
    except ValueError as exc:
        if not parts.too_many_buckets(exc):
            raise
        _BY_KIND[0] = False
        return None
    counts: dict[Any, int] = {}
    best: dict[Any, int] = {}
    # Lightest kind first: a heavier kind's weight overwrites it. Whole lists at a time (C-level dict updates).
    for level in sorted((res.get("k") or {}).get("buckets", []), key=lambda b: int(b["key"])):
        buckets = (level.get("s") or {}).get("buckets", [])
        found = list(map(_KEY, buckets))
        said = list(map(_COUNT, buckets))
        best.update(dict.fromkeys(found, int(level["key"])))
        if counts:
            get = counts.get
            said = [get(k, 0) + n for k, n in zip(found, said)]
        counts.update(zip(found, said))
    ids = list(counts) if keys is None else keys.ids(searcher, list(counts))
    if ids is None:  # a key no session id of this index hashes to (never, but then the ids are asked for)
        return _by_kind(searcher, query, {**by_session, "terms": {**by_session["terms"], "field": "session"}}, None)
    return TermEvidence(dict(zip(ids, counts.values())), weights=dict(zip(ids, [best[k] for k in counts])))


class KeyMap:
    """Session ids by session key (``sk``, a hash of the id: the same key for the same id in any index, across
    commits), for a long-lived process's aggregations: a terms aggregation keyed by the ``sk`` integer costs
    ~35 % less than one keyed by the id's strings (a word every one of 10,000 sessions says: 13.0 -> 8.6 ms CPU,
    docs/bench.md), and a search aggregates once per term. The map is learnt from the index itself, not the
    catalog (which lacks the sessions indexed before their state rows): every session id of the index, read by
    one aggregation and hashed (~25 ms at 10,000 sessions), when an aggregation meets a key it lacks (at the
    first search, and after a commit that added sessions). A one-shot process would pay that for one search:
    only a server keeps one (:func:`keep_keys`)."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}
        self._known: set[str] = set()  # the ids in _ids: an id is hashed once
        self._lock = threading.Lock()

    def ids(self, searcher: tantivy.Searcher, keys: Sequence[int]) -> Sequence[str] | None:
        """The ids of ``keys`` (session keys of ``searcher``'s index), in order; None if some key is none's."""
        try:
            return self._lookup(keys)
        except KeyError:
            pass
        with self._lock:  # the other thread of the same search may have learnt them meanwhile
            try:
                return self._lookup(keys)
            except KeyError:
                self._learn(searcher)
        try:
            return self._lookup(keys)
        except KeyError:
            return None

    def _lookup(self, keys: Sequence[int]) -> Sequence[str]:
        """The ids of ``keys``; KeyError if one is missing. One ``itemgetter`` call for the lot: 10,000 keys in
        about half the time of a ``get`` each and a scan of the result for misses (0.6 -> 0.3 ms)."""
        if len(keys) > 1:
            return cast("tuple[str, ...]", itemgetter(*keys)(self._ids))
        return [self._ids[k] for k in keys]  # itemgetter of one key gives that value, of none raises TypeError

    def _learn(self, searcher: tantivy.Searcher) -> None:
        """Every session id of ``searcher``'s index, by its key."""
        import tantivy

        from voyager_sessions.search.index import session_key

        spec = {"s": {"terms": {"field": "session", "size": MAX_SESSIONS}}}
        known = self._known
        for b in parts.buckets(parts.aggregate(searcher, tantivy.Query.all_query(), spec), "s"):
            sid = b["key"]
            if sid not in known:
                self._ids[session_key.__wrapped__(sid)] = sid  # not through its cache: one hash an id, here
                known.add(sid)


#: The map a long-lived process keeps (:func:`keep_keys`); None: aggregations are keyed by the id's strings.
KEYS: KeyMap | None = None


def keep_keys() -> None:
    """Aggregate by session key from now on in this process (a server's readers: :class:`KeyMap`)."""
    global KEYS
    if KEYS is None:
        KEYS = KeyMap()


_pool: ThreadPoolExecutor | None = None
#: Per searching thread: work of its search running beside it on another thread (``beside``).
_beside = threading.local()


@contextmanager
def beside(work: Future[Any]) -> Iterator[None]:
    """While ``work`` runs (a search with meaning's query embedding, on a thread of its own), this thread's
    searches run :func:`each`'s jobs on this thread alone: the embedding has the second core, and two aggregation
    threads beside it were three busy threads on two cores (docs/bench.md). Once it is done, they are two again."""
    _beside.work = work
    try:
        yield
    finally:
        _beside.work = None


def each(fn: Callable[[int], T], items: Sized) -> list[T]:
    """``fn`` over the indices of ``items``, on two threads where the machine has two cores (a query's terms are
    aggregated, and their best events looked up, independently: the costliest parts of a several-term query), on
    the calling thread alone while work of its search runs beside it (:func:`beside`)."""
    indices = range(len(items))
    work: Future[Any] | None = getattr(_beside, "work", None)
    pool = _threads() if len(indices) >= 2 and (work is None or work.done()) else None
    if pool is None:
        return [fn(i) for i in indices]
    # The calling thread takes the first (and is not idle when the pool is busy with another search). Called
    # from the pool's own threads it could wait on itself: only searches' callers call it.
    rest = [pool.submit(fn, i) for i in indices[1:]]
    return [fn(0), *(f.result() for f in rest)]


def _threads() -> ThreadPoolExecutor | None:
    """Two threads for a several-term query's independent searches, started once; None on one core."""
    global _pool
    if (os.cpu_count() or 1) < 2:
        return None
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor  # only several-term queries pay for the import

        _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="voyager-agg")
    return _pool


def later(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn``'s result when asked for: started now on the second core where there is one (Tantivy releases the
    GIL while it searches), else run on first ask (and never, if nobody asks)."""
    pool = _threads()
    if pool is None:
        return fn
    return pool.submit(fn).result


def count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """How many events match ``query`` (a one-value aggregation: no scoring, no buckets)."""
    res = searcher.aggregate(query, {"c": {"value_count": {"field": "w"}}})
    return int((res.get("c") or {}).get("value") or 0)


def cover(
    searcher: tantivy.Searcher,
    term_queries: Sequence[tantivy.Query],
    *,
    weights: bool,
    broad: Sequence[bool] = (),
    together: tantivy.Query | None = None,
    breadths: Sequence[int] = (),
) -> Coverage:
    """Which sessions hold every term of ``term_queries`` (each already holds the event constraints), and with
    ``together`` (the query of every term in one event) where one event holds them all: aggregated beside the
    terms, on the second core where there is one.

    With ``weights``, a term marked ``broad`` (said in a large share of all events) is scored without its
    kind weights or its count: which kind of event says a word that a fifth of the history says, or how
    often a session says it, tells nothing about which session is meant (its ``tf`` saturates within a few
    events anyway), and the weights would triple its aggregation's cost (the tail at 1M events). Its
    evidence carries :data:`BROAD_WEIGHT` in every session and is scored as said once (``presence``).

    ``breadths`` (at most how many events each term matches): when the narrowest is said in at most
    :data:`NARROW_SESSIONS` sessions, the other terms are aggregated in those sessions only (a rare identifier
    beside common words: a common word's aggregation has a bucket in every session that says it, 76,000 of
    them at 100,000 sessions). Where some of those sessions hold every term, that is the answer
    (``complete`` false: ``held`` covers those sessions only); else every term is aggregated everywhere."""

    k = len(term_queries)
    # A term no event says (breadth 0: a word missing from the term dictionary) holds no session: not aggregated.
    said = [i for i in range(k) if len(breadths) != k or breadths[i] > 0]

    def term(i: int, restrict: tantivy.Query | None = None) -> TermEvidence:
        wide = i < len(broad) and broad[i]
        if i not in said:
            return TermEvidence({}, weight=BROAD_WEIGHT if weights else 0, presence=weights and wide)
        q = term_queries[i] if restrict is None else _and(term_queries[i], restrict)
        ev = evidence(searcher, q, weights=weights and not wide, weight=BROAD_WEIGHT if weights else 0)
        ev.presence = weights and wide
        return ev

    if len(breadths) == k >= 2 and len(said) == k:
        narrow = min(range(k), key=breadths.__getitem__)
        if breadths[narrow] <= NARROW_EVENTS:
            found = term(narrow)
            if 0 < len(found.counts) <= NARROW_SESSIONS:
                cov = _within(searcher, term_queries, found, narrow, term, together)
                if cov is not None:
                    return cov
    # The query of every term in one event first: the costliest (an intersection), so it starts first. Only when
    # every term is said somewhere (else no event holds them all).
    first = 1 if together is not None and len(said) == k else 0
    jobs = ([-1] if first else []) + said

    def job(j: int) -> TermEvidence:
        if jobs[j] >= 0:
            return term(jobs[j])
        assert together is not None
        return evidence(searcher, together)

    done = each(job, jobs)
    both = done[0].counts if first else {}
    found_by = dict(zip(said, done[first:]))
    per_term = [found_by.get(i) or term(i) for i in range(k)]
    held = dict(Counter(chain.from_iterable(ev.counts for ev in per_term)))
    full = [sid for sid, c in held.items() if c == k]
    dfs = [sum(ev.counts.values()) for ev in per_term]
    if full:
        return Coverage(per_term=per_term, held=held, chosen=full, match="all", together=both, dfs=dfs)
    weight = _weights(per_term, dfs, searcher.num_docs)  # a partial match ranks by it
    return Coverage(per_term=per_term, held=held, chosen=list(held), match="partial", dfs=dfs, weight=weight)


def _weights(per_term: list[TermEvidence], dfs: list[int], num_events: int) -> dict[str, float]:
    """Per session holding a term, the summed idf of the terms it holds (``Coverage.weight``); summed term by term
    in the query's order, so sessions holding the same terms weigh exactly the same."""
    out: dict[str, float] = {}
    get = out.get
    for ev, f in zip(per_term, idfs(dfs, num_events)):
        for sid in ev.counts:
            out[sid] = get(sid, 0.0) + f
    return out


def _within(
    searcher: tantivy.Searcher,
    term_queries: Sequence[tantivy.Query],
    found: TermEvidence,
    narrow: int,
    term: Callable[[int, tantivy.Query | None], TermEvidence],
    together: tantivy.Query | None,
) -> Coverage | None:
    """``cover`` within the sessions of the narrowest term (``found``): the other terms (and ``together``)
    aggregated there, each term's event count over the whole index beside; None when none of those sessions
    holds every term (then a partial match is looked for everywhere)."""
    import tantivy

    restrict = tantivy.Query.term_set_query(parts.schema(), "session", list(found.counts))
    k = len(term_queries)
    others = [i for i in range(k) if i != narrow]
    n = len(others)

    def job(j: int) -> TermEvidence | int:
        if j < n:
            return term(others[j], restrict)
        if j < 2 * n:
            return count(searcher, term_queries[others[j - n]])
        assert together is not None
        return evidence(searcher, _and(together, restrict))

    done = each(job, range(2 * n + (together is not None)))
    per_term: list[TermEvidence] = [found] * k
    dfs = [sum(found.counts.values())] * k
    for j, i in enumerate(others):
        ev, df = done[j], done[n + j]
        assert isinstance(ev, TermEvidence) and isinstance(df, int)
        per_term[i], dfs[i] = ev, df
    held = dict(Counter(chain.from_iterable(ev.counts for ev in per_term)))
    full = [sid for sid, c in held.items() if c == k]
    if not full:
        return None
    both = done[-1].counts if together is not None and isinstance(done[-1], TermEvidence) else {}
    return Coverage(
        per_term=per_term,
        held=held,
        chosen=full,
        match="all",
        together=both,
        dfs=dfs,
        complete=False,
    )


def _and(q: tantivy.Query, restrict: tantivy.Query) -> tantivy.Query:
    import tantivy

    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Must, restrict)])


def idfs(dfs: list[int], num_events: int) -> list[float]:
    """BM25's idf of each term, from how many events say it."""
    return [math.log(1.0 + (num_events - df + 0.5) / (df + 0.5)) for df in dfs]


#: ``log2(2 + w)`` for the kind weights (small integers; another is computed).
_LOG2 = {w: math.log2(2 + w) for w in range(16)}


def _log2(w: int) -> float:
    return _LOG2.get(w) or math.log2(2 + w)


def score(cov: Coverage, num_events: int, *, together: set[str], titled: set[str]) -> dict[str, float]:
    """Each chosen session's score (see the module docstring)."""
    idf = idfs(cov.dfs, num_events)
    total_idf = sum(idf)
    chosen = cov.chosen
    acc = [0.0] * len(chosen)
    # Term by term, summing into the chosen sessions' scores. A term's part depends only on (count, weight), which
    # sessions share: each distinct one is computed once, then added to every session by C-level maps.
    for i, ev in enumerate(cov.per_term):
        f = idf[i]
        part: dict[Any, float]
        keys: Iterable[Any]
        if ev.presence:
            said = f * 1 * (K1 + 1) / (1 + K1) * _log2(ev.weight)
            acc = [a + said if sid in ev.counts else a for a, sid in zip(acc, chosen)]
            continue
        if ev.weights is None:
            lw = _log2(ev.weight)
            part = {c: f * c * (K1 + 1) / (c + K1) * lw for c in set(ev.counts.values())}
            part[None] = 0.0
            keys = map(ev.counts.get, chosen)
        else:
            # counts and weights were filled from the same buckets, in the same order.
            part = {
                (c, w): f * c * (K1 + 1) / (c + K1) * _log2(w)
                for c, w in set(zip(ev.counts.values(), ev.weights.values()))
            }
            part[(None, None)] = 0.0
            keys = zip(map(ev.counts.get, chosen), map(ev.weights.get, chosen))
        acc = list(map(add, acc, map(part.__getitem__, keys)))
    out = dict(zip(chosen, acc))
    for sid in together:
        if sid in out:
            out[sid] += TOGETHER_BONUS * total_idf
    for sid in titled:
        if sid in out:
            out[sid] += TITLE_BONUS * total_idf
    return out
