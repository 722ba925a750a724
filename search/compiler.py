"""A query's plan made into Tantivy queries: the one place a query tree meets the index's fields.

``Compiler.compile`` turns a parsed query into the query one event must match (with the
exact-phrase bonus); ``Compiler.spread`` turns a several-term plan into the pieces the
session-level matching needs (each term with the event constraints, the whole without the
bonus); the rest are the few shapes the engine and the facets build around them (a title
boost, a query limited to some sessions or kinds, a prefilter on ``said``). Scores are
decided here as much as in the engine: ``search.tiers`` bounds what these queries can score,
so it mirrors what is built here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import msgspec
import tantivy

from voyager_sessions.search.plan import (
    PART_SCORE,
    PHRASE_BONUS,
    Plan,
    offsets_of,
    part_word,
    phrase_bonus_terms,
    terms_of,
)
from voyager_sessions.search.syntax import KIND_ALIASES, And, Filter, Node, Not, Or, ParsedQuery, QueryError, Text
from voyager_sessions.search.syntax import parse_time

#: Resolves a session-level filter (``session:``, a session attribute's: ``core.filters``) to the session ids it
#: admits.
SessionResolver = Callable[[str, str], list[str]]

#: Score added to events of a session whose title contains the query's words.
TITLE_BOOST = 1.5


def _rx_escape(term: str) -> str:
    return re.sub(r"([\\.+*?()|\[\]{}^$#&\-~])", r"\\\1", term)


class Spread(msgspec.Struct, kw_only=True):
    """A query of several terms, compiled: each term with the event constraints, and the whole as one event answers it."""

    plan: Plan
    #: Per positive conjunct: its query ANDed with the filters and negations.
    terms: list[tantivy.Query]
    #: The whole query (every term in one event), and the same with the title boost.
    strict: tantivy.Query
    boosted: tantivy.Query
    #: The whole query without the phrase bonus: what matches, not how well (aggregations, one session's events).
    plain: tantivy.Query
    #: The sessions whose title says the query's words.
    titled: list[str] = []

    @property
    def parsed(self) -> ParsedQuery:
        return self.plan.parsed

    @property
    def positive(self) -> list[Node]:
        return self.plan.positive

    @property
    def breadths(self) -> list[int]:
        return self.plan.breadths


def _some(q: tantivy.Query | None) -> tantivy.Query:
    """A positive conjunct's query (a plan's positive terms are searchable: each compiles to a query)."""
    assert q is not None
    return q


class Compiler:
    """Turns an AST into a Tantivy query for ``schema``; session-scoped filters go through ``resolve``."""

    def __init__(
        self,
        schema: tantivy.Schema,
        resolve: SessionResolver,
        providers: tuple[str, ...],
        parts_df: Callable[[str], int] | None = None,
    ) -> None:
        self.schema = schema
        self.resolve = resolve
        self.providers = providers
        #: How many events hold a term among their identifiers' parts (None: not known, as if some did).
        self.parts_df = parts_df

    def compile(self, parsed: ParsedQuery) -> tantivy.Query:
        """The query one event must match for ``parsed``, with the exact-phrase bonus; a QueryError when nothing
        in it is searchable or a filter names what does not exist (an unknown provider)."""
        t = tantivy
        if parsed.root is None:
            return t.Query.all_query()
        q = self.node(parsed.root)
        if q is None:
            raise QueryError('nothing searchable in the query: give a word, a "phrase" or a filter')
        terms = phrase_bonus_terms(parsed.root)
        if terms:
            bonus = t.Query.boost_query(
                t.Query.phrase_query(self.schema, "body", list[str | tuple[int, str]](terms)), PHRASE_BONUS
            )
            q = t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Should, bonus)])
        return q

    def spread(self, plan: Plan, strict: tantivy.Query, boosted: tantivy.Query, titled: list[str]) -> Spread:
        """The pieces of a several-term plan (``strict``/``boosted``: its ``compile``, with the title boost)."""
        assert plan.parsed.root is not None
        plain = self.node(plan.parsed.root)
        assert plain is not None  # ``strict`` was compiled from the same tree
        return Spread(
            plan=plan,
            strict=strict,
            boosted=boosted,
            plain=plain,
            terms=self.terms(plan),
            titled=titled,
        )

    def terms(self, plan: Plan) -> list[tantivy.Query]:
        """Each positive conjunct's query, limited to the events that pass the plan's filters and negations."""
        return self.constrained([_some(self.node(n)) for n in plan.positive], plan.events)

    def constrained(self, terms: list[tantivy.Query], events: tuple[Node, ...]) -> list[tantivy.Query]:
        """Each term's query limited to the events that pass the filters and negations (compiled once)."""
        constraint = self.node(And(events)) if events else None
        if constraint is None:
            return terms
        return [self.both(t, constraint) for t in terms]

    def node(self, node: Node) -> tantivy.Query | None:
        t = tantivy
        if isinstance(node, Text):
            return self.text(node)
        if isinstance(node, Filter):
            return self.filter(node)
        if isinstance(node, Not):
            inner = self.node(node.node)
            if inner is None:
                return None
            return t.Query.boolean_query([(t.Occur.Must, t.Query.all_query()), (t.Occur.MustNot, inner)])
        if isinstance(node, And):
            clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
            for child in node.nodes:
                if isinstance(child, Not):
                    inner = self.node(child.node)
                    if inner is not None:
                        clauses.append((t.Occur.MustNot, inner))
                    continue
                q = self.node(child)
                if q is not None:
                    clauses.append((t.Occur.Must, q))
            if not clauses:
                return None
            if all(occ == t.Occur.MustNot for occ, _ in clauses):
                clauses.insert(0, (t.Occur.Must, t.Query.all_query()))
            return t.Query.boolean_query(clauses)
        if isinstance(node, Or):
            subs = [q for q in (self.node(c) for c in node.nodes) if q is not None]
            if not subs:
                return None
            return t.Query.boolean_query([(t.Occur.Should, q) for q in subs])
        raise TypeError(node)

    def text(self, node: Text) -> tantivy.Query | None:
        t = tantivy
        terms = terms_of(node)
        if not terms:
            return None
        if node.prefix:
            if len(terms) == 1:
                return t.Query.regex_query(self.schema, "body", _rx_escape(terms[0]) + ".*")
            return t.Query.phrase_prefix_query(self.schema, "body", list(terms))
        if len(terms) == 1:
            word = t.Query.term_query(self.schema, "body", terms[0])
            # No part clause where no identifier holds the word: a term query alone is ranked without scoring every
            # event that says it (block-WAND), and a common word said only as itself keeps that.
            if part_word(node) is None or (self.parts_df is not None and self.parts_df(terms[0]) == 0):
                return word
            part = t.Query.const_score_query(t.Query.term_query(self.schema, "parts", terms[0]), PART_SCORE)
            return t.Query.boolean_query([(t.Occur.Should, word), (t.Occur.Should, part)])
        offsets = offsets_of(node)
        if offsets is not None:  # whitespace beside a CJK character: an empty position there, as in the index
            return t.Query.phrase_query(self.schema, "body", list(zip(offsets, terms)))
        return t.Query.phrase_query(self.schema, "body", list(terms))

    def presence(self, node: Node, field: str) -> tantivy.Query | None:
        """A query on ``field`` (indexed terms only, as ``said`` is) that every event matching ``node`` holds when
        ``field`` holds its body: each term of each text it requires (a phrase's terms without their order), or
        None when nothing narrows (a prefix, a filter, a negation). A prefilter for a search limited to the events
        whose ``field`` is filled: it never drops one of their matches, so added with a score of 0 it changes no
        result, only how many candidates the search visits."""
        t = tantivy
        if isinstance(node, Text):
            terms = terms_of(node)
            if node.prefix or not terms:
                return None
            parts = [t.Query.term_query(self.schema, field, term) for term in dict.fromkeys(terms)]
            return parts[0] if len(parts) == 1 else t.Query.boolean_query([(t.Occur.Must, p) for p in parts])
        if isinstance(node, And):
            subs = [q for q in (self.presence(c, field) for c in node.nodes) if q is not None]
            if not subs:
                return None
            return subs[0] if len(subs) == 1 else t.Query.boolean_query([(t.Occur.Must, q) for q in subs])
        if isinstance(node, Or):
            alts = [self.presence(c, field) for c in node.nodes]
            narrowing = [a for a in alts if a is not None]
            if not alts or len(narrowing) < len(alts):
                return None  # an alternative that does not narrow lets anything through
            return t.Query.boolean_query([(t.Occur.Should, q) for q in narrowing])
        return None  # Filter, Not: they narrow the events, not the words

    def filter(self, f: Filter) -> tantivy.Query:
        t = tantivy
        if f.field == "provider":
            if f.value not in self.providers:
                raise QueryError(f"unknown provider '{f.value}': use one of {', '.join(self.providers)}")
            return t.Query.term_query(self.schema, "provider", f.value)
        if f.field == "kind":
            kinds = KIND_ALIASES[f.value]
            if len(kinds) == 1:
                return t.Query.term_query(self.schema, "kind", kinds[0])
            return t.Query.term_set_query(self.schema, "kind", list(kinds))
        if f.field in ("since", "until"):
            ms = int(parse_time(f.value, end=f.field == "until") * 1000)
            lo, hi = (ms, None) if f.field == "since" else (None, ms - 1)
            return t.Query.range_query(self.schema, "ts", t.FieldType.Integer, lo, hi)
        ids = self.resolve(f.field, f.value)
        if not ids:
            return t.Query.empty_query()
        return t.Query.term_set_query(self.schema, "session", ids)

    # -- the shapes built around a compiled query ------------------------------------------

    def both(self, q: tantivy.Query, other: tantivy.Query) -> tantivy.Query:
        """``q`` and ``other`` both (scores added)."""
        t = tantivy
        return t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Must, other)])

    def any_of(self, qs: Sequence[tantivy.Query]) -> tantivy.Query:
        """Any of ``qs`` (scores of those that match added)."""
        t = tantivy
        return t.Query.boolean_query([(t.Occur.Should, q) for q in qs])

    def title_boost(self, q: tantivy.Query, ids: list[str]) -> tantivy.Query:
        """``q`` with the events of sessions ``ids`` (those whose title says what was searched for: titles are
        what people see) lifted by :data:`TITLE_BOOST`."""
        t = tantivy
        if not ids:
            return q
        boost = t.Query.const_score_query(t.Query.term_set_query(self.schema, "session", ids), TITLE_BOOST)
        return t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Should, boost)])

    def restricted(self, q: tantivy.Query, ids: Sequence[str]) -> tantivy.Query:
        """``q`` limited to the events of sessions ``ids``, scored as ``q`` alone (a term set scores 1, which the
        kind weight would then multiply: a person's words 3 points up, tool output 1)."""
        t = tantivy
        among = t.Query.term_set_query(self.schema, "session", list(ids))
        return t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Must, t.Query.const_score_query(among, 0.0))])

    def excluding(self, q: tantivy.Query, ids: Sequence[str]) -> tantivy.Query:
        """``q`` without the events of sessions ``ids``."""
        t = tantivy
        return t.Query.boolean_query(
            [(t.Occur.Must, q), (t.Occur.MustNot, t.Query.term_set_query(self.schema, "session", list(ids)))]
        )

    def without(self, q: tantivy.Query, other: tantivy.Query) -> tantivy.Query:
        """``q`` where ``other`` does not match."""
        t = tantivy
        return t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.MustNot, other)])

    def in_session(self, q: tantivy.Query, session_id: str) -> tantivy.Query:
        """``q`` within one session's events."""
        return self.both(q, tantivy.Query.term_query(self.schema, "session", session_id))

    def any_among(self, qs: Sequence[tantivy.Query], ids: Sequence[str]) -> tantivy.Query:
        """``restricted(any_of(qs), ids)``, the same matches and scores, each of ``qs`` narrowed to the sessions
        first (see ``any_in_session``: a few sessions' events, not a union of common terms, drive the search)."""
        t = tantivy
        among = t.Query.const_score_query(t.Query.term_set_query(self.schema, "session", list(ids)), 0.0)
        return self.any_of([t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Must, among)]) for q in qs])

    def any_in_session(self, qs: Sequence[tantivy.Query], session_id: str) -> tantivy.Query:
        """``in_session(any_of(qs), session_id)``, the same matches and the same scores, each of ``qs`` narrowed to
        the session first: a union inside an intersection reads its clauses' postings a window of documents at a
        time, so a union of common terms (a CJK description's pairs of characters) cost ~1.2 ms a session at
        10,000 sessions, and a session's own few events found in each clause cost ~0.25 ms. Narrowed with a
        score of 0 (adding 0 changes no float), then the session's term outside, as ``in_session`` adds it."""
        t = tantivy
        session = t.Query.term_query(self.schema, "session", session_id)
        within = t.Query.const_score_query(session, 0.0)
        each = [t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.Must, within)]) for q in qs]
        return self.both(self.any_of(each), session)

    def in_kinds(
        self, q: tantivy.Query, kinds: tuple[str, ...], *, negate: bool, said: tantivy.Query | None = None
    ) -> tantivy.Query:
        """``q`` limited to events of ``kinds`` (``negate``: of every other kind), adding nothing to a score;
        ``said``: a prefilter on ``said`` (``presence``) those kinds' events are searched among."""
        t = tantivy
        ks = t.Query.term_set_query(self.schema, "kind", list(kinds))
        if negate:
            return t.Query.boolean_query([(t.Occur.Must, q), (t.Occur.MustNot, ks)])
        clauses = [(t.Occur.Must, q), (t.Occur.Must, t.Query.const_score_query(ks, 0.0))]
        if said is not None:
            clauses.append((t.Occur.Must, t.Query.const_score_query(said, 0.0)))
        return t.Query.boolean_query(clauses)
