"""Voyager's query language as text: the lexer, the parser and the tree they build.

Syntax (documented in the README):

* ``word word``: every term must match (AND); ``"exact phrase"``; ``-word`` or ``NOT word``
  excludes; ``a OR b``; parentheses group; ``tensor*`` is a prefix.
* ``provider:codex``, ``kind:tool_result`` (aliases ``tool``, ``user``, ``assistant``,
  ``reasoning``, ``meta``, ``checkpoint``), the session attributes' ``repo:``, ``cwd:`` … (one row each
  in ``core.filters``), ``session:<id prefix>``, ``since:2026-11-01`` / ``since:7d``, ``until:`` filter.
* Anything else with a colon (``TypeError:``, ``http://x``) is plain text.

Edge punctuation of an unquoted word (``TypeError:``, ``'NoneType'``) is dropped so a pasted
error line just works; quote it to keep it.

This module knows the language and nothing of the index: a tree's texts are kept as typed
(what terms they make for the index is ``search.plan``'s question), and it imports no
Tantivy, so the API and front ends may parse (and reject) a query without loading the engine.
A malformed query is a :class:`QueryError` whose message says what is wrong and how to fix it.
"""

from __future__ import annotations

import re
import time

import msgspec
from datetime import datetime, timedelta

from voyager_sessions.core.filters import SESSION_FILTERS
from voyager_sessions.core.model import KINDS

FILTER_FIELDS = ("provider", "kind", *(f.name for f in SESSION_FILTERS), "session", "since", "until")

KIND_ALIASES: dict[str, tuple[str, ...]] = {
    "tool": ("tool_call", "tool_result"),
    "tools": ("tool_call", "tool_result"),
    "call": ("tool_call",),
    "result": ("tool_result",),
    "output": ("tool_result",),
    "prompt": ("user",),
    "thinking": ("reasoning",),
    **{k: (k,) for k in KINDS},
}


class QueryError(ValueError):
    """The query cannot be parsed; the message says what is wrong and how to fix it."""


# -- AST ------------------------------------------------------------------------


class Text(msgspec.Struct, frozen=True):
    """Text to match: one or more adjacent terms (``search.plan.terms_of``), optionally a prefix on the last one."""

    text: str
    prefix: bool = False
    quoted: bool = False


class Filter(msgspec.Struct, frozen=True):
    field: str
    value: str


class Not(msgspec.Struct, frozen=True):
    node: Node


class And(msgspec.Struct, frozen=True):
    nodes: tuple[Node, ...]
    #: Written in parentheses, ``(a b)``: a query of several terms keeps these together in one event.
    grouped: bool = False


class Or(msgspec.Struct, frozen=True):
    nodes: tuple[Node, ...]


Node = Text | Filter | Not | And | Or


class ParsedQuery(msgspec.Struct):
    """The AST plus what rendering needs: the positive texts to highlight."""

    root: Node | None
    texts: list[Text] = []


# -- lexing -----------------------------------------------------------------------

_EDGE_STRIP = ",;:!?'\"`"


class _Tok(msgspec.Struct, frozen=True):
    kind: str  # "word" | "phrase" | "(" | ")" | "or" | "not" | "neg"
    value: str = ""
    field: str | None = None


#: Words that make a query read as a command line: shell operators and a prompt standing alone.
_SHELL_WORDS = frozenset({"|", "||", "&&", ";", ">", ">>", "<", "<<", "2>&1", "&>", "$", "#", "\\"})
#: A shell variable or option assignment: ``KEY=value``, ``--opt=value``.
_ASSIGNMENT = r"^-{0,2}[A-Za-z_][A-Za-z0-9_.-]*="


def _reads_as_command(words: list[str]) -> bool:
    """Whether the query's words read as a pasted command line or log line (docs/query.md): a ``--long-option``, a
    shell operator, a directory path (``./x``, ``/srv/x``, ``~/x``, ``build/``) or an assignment (``KEY=value``)."""
    for w in words:
        if w in _SHELL_WORDS or w.startswith(("/", "./", "../", "~/")) or (len(w) > 1 and w.endswith("/")):
            return True
        if len(w) > 2 and w.startswith("--") and w[2].isalnum():
            return True
        if "=" in w and re.match(_ASSIGNMENT, w):
            return True
    return False


def _is_option(word: str, command: bool) -> bool:
    """Whether ``-word`` (``word`` without its dash) is a command's option, text, rather than an exclusion: one or
    two characters (``-n``, ``-rf``, ``-A3``), a number (``-5``), a value or a dash inside (``-Dx=1``,
    ``-max-time``), or any dash-word of a query that reads as a command line. A filter (``-provider:codex``)
    is always excluded."""
    name, sep, value = word.partition(":")
    if sep and value and name.lower() in FILTER_FIELDS:
        return False
    return command or len(word) <= 2 or word[0].isdigit() or "=" in word or "-" in word


def _lex(q: str) -> list[_Tok]:
    out: list[_Tok] = []
    i, n = 0, len(q)
    words = q.split()
    command = _reads_as_command(words)
    alone = len(words) == 1
    while i < n:
        c = q[i]
        if c.isspace():
            i += 1
            continue
        if c == "-" and i + 1 < n and q[i + 1] == "(":
            out.append(_Tok("neg"))  # -(a b) excludes the group
            i += 1
            continue
        if c == '"':
            j = q.find('"', i + 1)
            if j < 0:
                raise QueryError("unterminated quote: close the \" or search for a literal quote as '\"'")
            out.append(_Tok("phrase", q[i + 1 : j]))
            i = j + 1
            continue
        if c == "(":
            out.append(_Tok("("))
            i += 1
            continue
        # A word: up to whitespace, or a quote that starts a field value (cwd:"a b").
        j = i
        while j < n and not q[j].isspace():
            if q[j] == '"':
                break
            j += 1
        word = q[i:j]
        # field:"quoted value"
        if j < n and q[j] == '"' and word.endswith(":") and word[:-1].lstrip("-").lower() in FILTER_FIELDS:
            k = q.find('"', j + 1)
            if k < 0:
                raise QueryError(f'unterminated quote after {word}: close the "')
            neg = word.startswith("-")
            if neg:
                out.append(_Tok("neg"))
            out.append(_Tok("word", q[j + 1 : k], field=word[:-1].lstrip("-").lower()))
            i = k + 1
            continue
        if j < n and q[j] == '"' and word in ("-", "NOT"):
            out.append(_Tok("neg" if word == "-" else "not"))  # -"phrase" excludes the phrase
            i = j
            continue
        i = j
        # Trailing ')' that close groups rather than belong to the word (foo.bar() keeps its pair).
        closes = 0
        while word.endswith(")") and word.count(")") > word.count("("):
            word = word[:-1]
            closes += 1
        if word:
            if word == "OR":
                out.append(_Tok("or"))
            elif word == "NOT":
                out.append(_Tok("not"))
            elif (
                word.startswith("-")
                and len(word) > 1
                and not word.startswith("--")
                and not _is_option(word[1:], command)
            ):
                out.append(_Tok("neg"))
                out.append(_word_tok(word[1:], alone))
            else:
                out.append(_word_tok(word, alone))
        out.extend(_Tok(")") for _ in range(closes))
    return out


def _word_tok(word: str, alone: bool) -> _Tok:
    """A word, or a filter when it is ``name:value`` with a filter's name and a value (docs/query.md): ``name:``
    with nothing after it is text beside other words (a pasted ``kind: Deployment``), and so is a value holding
    another colon where a filter's value cannot (``session:a:b``; a time can: ``since:2026-11-01T10:00``)."""
    name, sep, value = word.partition(":")
    field = name.lower()
    if sep and field in FILTER_FIELDS:
        if not value:
            if alone:
                raise QueryError(f"{name}: needs a value, e.g. {name}:{_EXAMPLES[field]}")
            return _Tok("word", word)
        if ":" in value and field not in ("since", "until"):
            return _Tok("word", word)
        return _Tok("word", value, field=field)
    return _Tok("word", word)


_EXAMPLES = {
    "provider": "codex",
    "kind": "tool_result",
    **{f.name: f.example for f in SESSION_FILTERS},
    "session": "3f2a",
    "since": "7d",
    "until": "2026-11-01",
}


# -- parsing ----------------------------------------------------------------------


#: Limits that keep any query answerable: deeper nesting or more words than these is a
#: query too large to run (exit 2, one line), never a crash. A pasted log line of a
#: thousand words stays well within them.
MAX_DEPTH = 64
MAX_WORDS = 4096
MAX_QUERY_CHARS = 64 * 1024


class _Parser:
    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0
        self.texts: list[Text] = []

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError(f"query nested more than {MAX_DEPTH} levels deep (parentheses or NOT): too large to run")

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next_is(self, *kinds: str) -> bool:
        """Whether the query ends here or its next token is one of ``kinds``."""
        t = self.peek()
        return t is None or t.kind in kinds

    def parse(self) -> Node | None:
        if not self.toks:
            return None
        node = self.or_expr(negated=False)
        if self.peek() is not None:
            raise QueryError("unbalanced ')': remove it, or quote it to search for it: \")\"")
        return node

    def or_expr(self, negated: bool) -> Node:
        nodes = [self.and_expr(negated)]
        while (t := self.peek()) is not None and t.kind == "or":
            self.i += 1
            if self.next_is(")", "or"):
                raise QueryError('OR needs a term on both sides; to search for the word, quote it: "OR"')
            nodes.append(self.and_expr(negated))
        return nodes[0] if len(nodes) == 1 else Or(tuple(nodes))

    def and_expr(self, negated: bool) -> Node:
        nodes: list[Node] = []
        while (t := self.peek()) is not None and t.kind not in (")", "or"):
            nodes.append(self.unary(negated))
        if not nodes:
            t = self.peek()
            if t is not None and t.kind == "or":
                raise QueryError('OR needs a term on both sides; to search for the word, quote it: "OR"')
            raise QueryError("empty group '()': put terms inside or quote the parentheses")
        return nodes[0] if len(nodes) == 1 else And(tuple(nodes))

    def unary(self, negated: bool) -> Node:
        t = self.peek()
        assert t is not None
        if t.kind in ("neg", "not"):
            self.i += 1
            if self.next_is(")", "or"):
                raise QueryError("nothing to exclude after '-' or NOT; to search for a dash, quote it: \"-\"")
            self.deeper()
            node = Not(self.unary(not negated))
            self.depth -= 1
            return node
        return self.atom(negated)

    def atom(self, negated: bool) -> Node:
        t = self.peek()
        assert t is not None
        self.i += 1
        if t.kind == "(":
            self.deeper()
            node = self.or_expr(negated)
            if not self.next_is(")") or self.peek() is None:
                raise QueryError("unbalanced '(': close it with ')', or quote it to search for it: \"(\"")
            self.i += 1
            self.depth -= 1
            return And(node.nodes, grouped=True) if isinstance(node, And) else node
        if t.kind == ")":
            raise QueryError("unbalanced ')': remove it, or quote it to search for it: \")\"")
        if t.kind == "phrase":
            node = Text(t.value, quoted=True)
        elif t.field:
            return filter_node(t.field, t.value)
        else:
            word = t.value
            prefix = word.endswith("*") and len(word) > 1
            if prefix:
                word = word.rstrip("*")
            word = _strip_edges(word)
            node = Text(word, prefix=prefix)
        if not negated:
            self.texts.append(node)
        return node


def _strip_edges(word: str) -> str:
    stripped = word.strip(_EDGE_STRIP)
    while stripped.endswith(".") and len(stripped) > 1:
        stripped = stripped[:-1]
    return stripped or word


def filter_node(name: str, value: str) -> Filter:
    """The filter ``name:value`` (a name of ``FILTER_FIELDS``), its value checked and normalized; a QueryError
    when the value cannot be one (an unknown kind, an unreadable time)."""
    if name == "kind":
        if value.lower() not in KIND_ALIASES:
            raise QueryError(f"unknown kind '{value}': use one of {', '.join(sorted(KIND_ALIASES))}")
        value = value.lower()
    elif name in ("since", "until"):
        parse_time(value, end=name == "until")  # validate now, one clear message
    elif name == "provider":
        value = value.lower()
    return Filter(name, value)


def parse(query: str) -> ParsedQuery:
    """Parse ``query``; raises QueryError with a one-line, actionable message."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query of {len(query):,} characters: too large to run (at most {MAX_QUERY_CHARS:,})")
    toks = _lex(query)
    if len(toks) > MAX_WORDS:
        raise QueryError(f"query of {len(toks):,} words: too large to run (at most {MAX_WORDS:,})")
    p = _Parser(toks)
    root = p.parse()
    return ParsedQuery(root=root, texts=p.texts)


# -- time -------------------------------------------------------------------------

#: A relative time (``7d``, ``12h``); compiled on first use (``re``'s cache), not at import.
_REL = r"^(\d+)\s*([mhdwy])$"
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def parse_time(value: str, *, end: bool = False, now: float | None = None) -> float:
    """Epoch seconds for ``7d``/``12h``/``2w`` ago, ``today``, ``yesterday`` or an ISO date/time.

    A bare date used as an upper bound (``until:2026-11-01``) means the end of that day.
    """
    try:
        ts = _parse_time(value, end=end, now=time.time() if now is None else now)
    except QueryError:
        raise
    except (OverflowError, ValueError, OSError):
        ts = float("nan")
    if not (MIN_TIME <= ts <= MAX_TIME):  # also false for NaN
        raise QueryError(f"time '{value}' is out of range: use a date between 1970 and 9999, or 7d, 12h, 2w")
    return ts


#: The times a filter may name (seconds): the Unix epoch to the end of year 9999.
MIN_TIME, MAX_TIME = 0.0, 253402300799.0


def _parse_time(value: str, *, end: bool, now: float) -> float:
    v = value.strip().lower()
    m = re.match(_REL, v, re.I)
    if m:
        return now - int(m.group(1)) * _UNITS[m.group(2).lower()]
    if v in ("today", "yesterday"):
        day = datetime.fromtimestamp(now).astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
        if v == "yesterday":
            day -= timedelta(days=1)
        return (day + timedelta(days=1)).timestamp() if end else day.timestamp()
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise QueryError(f"cannot read time '{value}': use 7d, 12h, 2w, today, or a date like 2026-11-01") from None
    if dt.tzinfo is None:
        dt = dt.astimezone()  # local time, as a person means it
    if end and len(value.strip()) == 10:
        dt += timedelta(days=1)
    return dt.timestamp()


# -- reading a tree back -----------------------------------------------------------


def describe(node: Node) -> str:
    """A positive conjunct written back the way a person types it (how JSON names the terms a session matched)."""
    if isinstance(node, Text):
        if node.quoted:
            return f'"{node.text}"'
        return node.text + ("*" if node.prefix else "")
    if isinstance(node, Filter):
        return f"{node.field}:{node.value}"
    if isinstance(node, Not):
        return "-" + describe(node.node)
    if isinstance(node, Or):
        return " OR ".join(describe(n) for n in node.nodes)
    return "(" + " ".join(describe(n) for n in node.nodes) + ")"


def positive_texts(node: Node) -> list[Text]:
    """The texts under ``node`` that a match shows (not those under a negation): what a snippet highlights."""
    if isinstance(node, Text):
        return [node]
    if isinstance(node, (And, Or)):
        return [t for n in node.nodes for t in positive_texts(n)]
    return []
