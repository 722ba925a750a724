"""What a parsed query means for this index: its terms, how broad each is, and whether it matches events or sessions.

Worked out once a search, then read by the engine (which ranks) and the facets (which count), so the two
can never disagree on what a query asks for:

* the query as typed with the options' filters ANDed in (``--provider``, ``--kind``, ``--since`` …);
* its **conjuncts** (issue #22): the positive terms a session must hold somewhere (words, quoted phrases,
  ``a OR b`` alternatives, parenthesized groups), each distinct once and only where it can match anything,
  and the event constraints every event must pass (filters, negations);
* each term's **breadth** (at most how many events say it, from the term dictionary: no posting visited);
* the **matching**: ``event`` (one term, or filters only: the events that hold it), ``sessions`` (two terms
  or more, however many: the sessions that hold each, ``search.sessions``; a long description or a pasted log
  line too, its rare words weighing more than its common ones) or ``one`` (several terms, only one of which
  is said anywhere: that term's own search, flagged partial).

Terms are the analyzer's (``search.analyzer.tokens``, the one rule the index was built with), worked out once
per text. Nothing here builds a Tantivy query: that is ``search.compiler``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import msgspec

from voyager_sessions.core.filters import SESSION_FILTERS
from voyager_sessions.core.model import KINDS
from voyager_sessions.search.analyzer import MIN_PART, SOLO_FROM, positioned
from voyager_sessions.search.snippets import Phrase

if TYPE_CHECKING:
    import tantivy

from voyager_sessions.search.syntax import (
    And,
    MAX_WORDS,
    Filter,
    Node,
    Not,
    Or,
    ParsedQuery,
    QueryError,
    Text,
    describe,
    filter_node,
    positive_texts,
)

#: A title boost looks for at most this many of the query's words in titles.
TITLE_WORDS = 8


class SearchOptions(msgspec.Struct, kw_only=True):
    """A search's filters and paging as the engine takes them (``api`` fills them from its ``SearchRequest``)."""

    limit: int = 20
    offset: int = 0
    providers: list[str] = []
    kinds: list[str] = []
    #: The session-attribute filters given (``core.filters``: ``repo``, ``cwd`` …), by name: the text each
    #: must contain.
    where: dict[str, str] = {}
    session: str | None = None
    since: str | None = None
    until: str | None = None
    sort: Literal["relevance", "recent"] = "relevance"
    sessions: bool = False
    context: int = 0
    snippet_width: int = 240


# -- terms --------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _analysis(text: str) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """The terms ``text`` makes in the index, and their offsets when they are not consecutive (whitespace beside a
    CJK character leaves an empty position: ``search.analyzer.GAP``). Cached: a search asks about each of its
    texts several times."""
    found = positioned(text)
    terms = tuple(t for _, t in found)
    if not found or found[-1][0] - found[0][0] == len(found) - 1:
        return terms, None
    return terms, tuple(pos - found[0][0] for pos, _ in found)


def analyzed(text: str) -> tuple[str, ...]:
    """The terms ``text`` makes in the index."""
    return _analysis(text)[0]


def terms_of(node: Text) -> tuple[str, ...]:
    """The terms of a text node: adjacent in this order where it matches (a prefix on the last one)."""
    return _analysis(node.text)[0]


def offsets_of(node: Text) -> tuple[int, ...] | None:
    """Each term's position in the phrase of a text node, when they are not consecutive (``"数据 库"``: 0, 1, 3);
    None when they are."""
    return _analysis(node.text)[1]


def phrases(texts: list[Text]) -> list[Phrase]:
    """What a snippet highlights of each text (``search.snippets.Phrase``)."""
    return [Phrase(terms_of(t), t.prefix, part_word(t) is not None, offsets_of(t)) for t in texts]


def matchable(node: Node) -> bool:
    """Whether ``node`` compiles to a query (a text with no terms, such as ``""``-less punctuation, does not);
    answered without compiling, which for a prefix builds an automaton."""
    if isinstance(node, Text):
        return bool(terms_of(node))
    if isinstance(node, Not):
        return matchable(node.node)
    if isinstance(node, (And, Or)):
        return any(matchable(n) for n in node.nodes)
    return True


#: The boost of the exact-phrase bonus (see ``phrase_bonus_terms``).
PHRASE_BONUS = 2.0

#: What a word found as part of an identifier (the ``parts`` field) scores, a constant (times the kind weight):
#: below the word said as itself wherever the word is rare enough to tell events apart, so ``batch`` ranks an event
#: saying batch above one holding ``invoice_batch_writer``; and a constant keeps the bound ``search.tiers`` proves
#: a broad word's page with (a BM25 over the few events whose identifiers hold a common word would be huge).
PART_SCORE = 0.5


def part_word(node: Node) -> str | None:
    """The term a text also matches as part of an identifier (``batch`` finds ``invoice_batch_writer``, ``ram``
    ``MaxRAMPercentage``), or None: an unquoted word that is not a prefix, of ASCII letters and digits only, one
    part itself (no ``_``, no change of case inside: ``invoice_batch`` and ``invoiceBatch`` stay exact), at least
    ``MIN_PART`` long."""
    if not isinstance(node, Text) or node.quoted or node.prefix:
        return None
    terms = terms_of(node)
    if len(terms) != 1 or len(terms[0]) < MIN_PART or not terms[0].isascii() or not terms[0].isalnum():
        return None
    typed = node.text
    if (
        typed.isascii()
        and typed.isalnum()
        and (typed.islower() or typed.isupper() or typed[1:].islower() or typed.isdigit())
    ):
        return terms[0]
    return None


def phrase_bonus_terms(root: Node) -> list[str] | None:
    """The terms of the exact-phrase bonus the compiled query carries, if any: a top-level AND of plain words
    scores higher where they stand together."""
    if not isinstance(root, And):
        return None
    words = [n for n in root.nodes if isinstance(n, Text) and not n.prefix]
    if len(words) < 2:
        return None
    terms = [tok for w in words for tok in terms_of(w)]
    return terms if len(terms) >= 2 else None


def title_words(parsed: ParsedQuery) -> list[str]:
    """The words a title must hold to be boosted."""
    # The few longest words say most about a title (and a pasted log line of a thousand
    # words must not become a thousand-clause lookup).
    return sorted({t.text for t in parsed.texts if not t.prefix and t.text.strip()}, key=len, reverse=True)[
        :TITLE_WORDS
    ]


# -- the query and the options' filters ---------------------------------------------------


def option_filters(opts: SearchOptions) -> list[Node]:
    """The options' filters (``--provider``, ``--kind``, ``--repo`` …) as query nodes."""
    filters: list[Node] = []
    # A repeated --provider or --kind means any of them.
    for field, values in (("provider", opts.providers), ("kind", opts.kinds)):
        if values:
            alts = [filter_node(field, v) for v in values]
            filters.append(alts[0] if len(alts) == 1 else Or(tuple(alts)))
    for f in SESSION_FILTERS:  # in the table's order
        if opts.where.get(f.name):
            filters.append(filter_node(f.name, opts.where[f.name]))
    for name in ("session", "since", "until"):
        value = getattr(opts, name)
        if value:
            filters.append(filter_node(name, value))
    return filters


def combine(parsed: ParsedQuery, filters: list[Node]) -> ParsedQuery:
    """``parsed`` with the options' filters ANDed to its root (a new ParsedQuery: ``parsed`` is kept as typed)."""
    if not filters:
        return parsed
    nodes = ((parsed.root,) if parsed.root is not None else ()) + tuple(filters)
    return ParsedQuery(root=nodes[0] if len(nodes) == 1 else And(nodes), texts=parsed.texts)


# -- session-level matching (issue #22) ---------------------------------------------


class Conjuncts(msgspec.Struct, frozen=True):
    """A query split for session-level matching.

    ``positive``: what a session must hold, each somewhere in it (in some event): the top-level
    words, quoted phrases, ``a OR b`` alternatives and parenthesized groups. Each one is
    still matched *inside one event*, so a phrase, a CJK run or a word that analyzes to
    several terms keeps its adjacency, and ``(a b)`` asks for both in the same event.
    ``events``: what every event must satisfy: filters and negations (``-word`` drops the
    events that say it, not the sessions). A whole query in parentheses is one group: its
    terms in one event, as before.
    """

    positive: tuple[Node, ...]
    events: tuple[Node, ...]


def conjuncts(root: Node | None, extra_filters: tuple[Node, ...] = ()) -> Conjuncts:
    """Split a parsed query (plus the options' filters) into positive conjuncts and event constraints."""
    nodes = () if root is None else _conjunction(root)
    positive = tuple(n for n in nodes if not isinstance(n, (Filter, Not)))
    events = tuple(n for n in nodes if isinstance(n, (Filter, Not))) + tuple(extra_filters)
    return Conjuncts(positive=positive, events=events)


def _conjunction(node: Node) -> tuple[Node, ...]:
    """The top-level conjuncts of ``node``: nested ANDs that code added (the options' filters, excluded
    sessions) flattened, a group a person wrote in parentheses kept whole."""
    if isinstance(node, And) and not node.grouped:
        return tuple(n for child in node.nodes for n in _conjunction(child))
    return (node,)


# -- how broad a term is ---------------------------------------------------------------


class Stats:
    """Corpus statistics: BM25's N (every document a segment holds, deleted ones included, as Tantivy counts it)
    and document frequencies, read from the term dictionary (no posting is visited)."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self.searcher = searcher
        self._df: dict[tuple[str, str], int] = {}
        # Every document has exactly one kind term, so the kinds' document frequencies (deleted documents
        # included, as in Tantivy's N) sum to N. A kind outside KINDS would make the sum short: then no bound.
        n = sum(self.df("kind", k) for k in KINDS)
        self.n = n if n >= searcher.num_docs else None

    def df(self, field: str, term: str) -> int:
        key = (field, term)
        if key not in self._df:
            self._df[key] = self.searcher.doc_freq(field, term)
        return self._df[key]

    def prefix_df(self, prefix: str) -> int:
        """How many events the words starting with ``prefix`` are in, summed (a walk of the term dictionary)."""
        return sum(n for _, n in self.searcher.terms_with_prefix("body", prefix))

    def idf(self, field: str, term: str) -> float:
        assert self.n is not None
        n = self.df(field, term)
        return math.log(1.0 + (self.n - n + 0.5) / (n + 0.5))


def breadth(node: Node, stats: Stats) -> int:
    """An upper bound on how many events ``node`` matches, from document frequencies (filters and negations
    do not narrow it: they are not counted without visiting postings)."""
    if isinstance(node, Text):
        terms = terms_of(node)
        if not terms:
            return 0
        if node.prefix:
            # A prefix's events: at most the sum of its words' (each tier would build its automaton again, so a
            # rare prefix must not be tiered).
            return stats.prefix_df(terms[0]) if len(terms) == 1 else stats.n or 0
        if (part := part_word(node)) is not None:
            return stats.df("body", part) + stats.df("parts", part)
        return min(stats.df("body", t) for t in terms)
    if isinstance(node, And):
        inner = [breadth(n, stats) for n in node.nodes if not isinstance(n, (Not, Filter))]
        return min(inner) if inner else stats.n or 0
    if isinstance(node, Or):
        return sum(breadth(n, stats) for n in node.nodes)
    return stats.n or 0


# -- the plan ---------------------------------------------------------------------------


class Plan(msgspec.Struct, kw_only=True):
    """A query as this index will answer it (see the module docstring)."""

    #: The query as typed (or as the caller handed it, parsed), and with the options' filters ANDed in.
    typed: ParsedQuery
    parsed: ParsedQuery
    #: Filters and negations: what every matching event must pass.
    events: tuple[Node, ...]
    #: The positive conjuncts, each distinct once, only those that can match anything; and as JSON names them.
    positive: list[Node]
    terms: list[str]
    #: Per positive term, at most how many events say it (several terms only; ``measure``).
    breadths: list[int] = []
    #: ``event``: the events that hold the query; ``sessions``: the sessions that hold each term; ``one``: of
    #: several terms only ``said`` is said anywhere, and the query is its search (``measure``).
    matching: Literal["event", "sessions", "one"] = "event"
    said: Node | None = None

    @property
    def several(self) -> bool:
        """Whether the query is matched at session level (its terms in any events of a session)."""
        return len(self.positive) >= 2

    def one_term(self) -> ParsedQuery:
        """The query of the one term said (``matching`` = ``one``) with the filters and negations alone."""
        assert self.said is not None
        root = And((self.said, *self.events)) if self.events else self.said
        return ParsedQuery(root=root, texts=positive_texts(self.said))


def make(typed: ParsedQuery, opts: SearchOptions) -> Plan:
    """The plan of ``typed`` with ``opts``' filters, before the index is consulted (a QueryError for a filter
    value that cannot be one)."""
    filters = option_filters(opts)
    parsed = combine(typed, filters)
    conj = conjuncts(typed.root, tuple(filters))
    # Each distinct term once (a pasted line repeats words), and only terms that can match anything.
    positive = list({describe(n): n for n in conj.positive if matchable(n)}.values())
    return Plan(
        typed=typed, parsed=parsed, events=conj.events, positive=positive, terms=[describe(n) for n in positive]
    )


#: An unquoted run of at least this many CJK characters that no event holds as typed is a description (``measure``).
DESCRIPTION_CHARS = 8


def _pairs(node: Node) -> list[Text] | None:
    """A long CJK run read as a description: its overlapping pairs of characters within each stretch of letters
    (``订单服务的支付回调`` -> ``订单``, ``单服``, ``服务`` …; punctuation ends a stretch), and each other word it holds
    (``Redis`` in ``后来用Redis做了幂等``). None for a text that is not an unquoted run of :data:`DESCRIPTION_CHARS`
    CJK characters or more."""
    if not isinstance(node, Text) or node.quoted or node.prefix:
        return None
    terms = terms_of(node)
    if sum(1 for t in terms if _cjk_letter(t)) < DESCRIPTION_CHARS:
        return None
    out: list[Text] = []
    stretch: list[str] = []
    for t in (*terms, ""):
        if _cjk_letter(t):
            stretch.append(t)
            continue
        out += [Text(a + b) for a, b in zip(stretch, stretch[1:])]
        stretch = []
        if t.isalnum():
            out.append(Text(t))
    return out


def _cjk_letter(term: str) -> bool:
    """Whether ``term`` is one character of an unspaced script that is a letter (not 。、「」 or an emoji)."""
    return len(term) == 1 and ord(term) >= SOLO_FROM and term.isalnum()


def measure(plan: Plan, searcher: tantivy.Searcher, holds: Callable[[Node], bool] | None = None) -> Plan:
    """``plan`` with its terms' breadths on ``searcher``'s index and the matching they decide.

    A run of :data:`DESCRIPTION_CHARS` CJK characters or more that no event holds as typed (``holds``: whether
    some event matches a node) is a description written as Chinese and Japanese are, without spaces: its pairs of
    characters become the terms (``_pairs``), matched over sessions like the words of an English description, each
    weighing its idf; ``parsed`` then holds them (what is compiled and lit). A run some event holds stays one term:
    a needle is found as typed."""
    if holds is not None:
        plan = _described(plan, holds)
    if not plan.several:
        return plan
    stats = Stats(searcher)
    breadths = [breadth(n, stats) for n in plan.positive]
    said = [n for n, b in zip(plan.positive, breadths) if b > 0]  # some event may say it
    if len(said) == 1:
        # Every other term is said nowhere (a typo, a word never used): no session can hold more than this one,
        # so every session saying it matches as well as any, and the query is that term's.
        return msgspec.structs.replace(plan, breadths=breadths, matching="one", said=said[0])
    return msgspec.structs.replace(plan, breadths=breadths, matching="sessions")


def _described(plan: Plan, holds: Callable[[Node], bool]) -> Plan:
    """``plan`` with each long CJK run no event holds replaced by its pairs (``measure``); ``plan`` itself when
    there is none."""
    positive: list[Node] = []
    changed = False
    for node in plan.positive:
        pairs = _pairs(node)
        if pairs is not None and not holds(node):
            positive += pairs
            changed = True
        else:
            positive.append(node)
    if not changed:
        return plan
    positive = list({describe(n): n for n in positive if matchable(n)}.values())
    if len(positive) > MAX_WORDS:  # as many terms as the words a query may have: the same cost, the same bound
        raise QueryError(
            f"query of {len(positive):,} terms (pairs of characters): too large to run (at most {MAX_WORDS:,})"
        )
    root = And((*positive, *plan.events)) if len(positive) + len(plan.events) > 1 else positive[0]
    texts = [t for n in positive for t in positive_texts(n)]
    return msgspec.structs.replace(
        plan, parsed=ParsedQuery(root=root, texts=texts), positive=positive, terms=[describe(n) for n in positive]
    )
