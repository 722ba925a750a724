"""The query language: what parses to what, and one actionable message for what does not."""

from __future__ import annotations

import re
import time

import pytest

from voyager_sessions.search.query import And, Filter, Not, Or, QueryError, Text, parse, parse_time


def test_and_phrase_not_or_groups_prefix():
    root = parse('"exact phrase" -skip (a OR b) tensor*').root
    assert isinstance(root, And)
    phrase, neg, group, prefix = root.nodes
    assert phrase == Text("exact phrase", quoted=True)
    assert neg == Not(Text("skip"))
    assert isinstance(group, Or) and group.nodes == (Text("a"), Text("b"))
    assert prefix == Text("tensor", prefix=True)


def test_code_words_stay_whole():
    for q in ["foo.bar()", "--no-verify", "c++", "src/store/db.py", "https://example.com/a?b=1"]:
        assert parse(q).root == Text(q)


def test_pasted_error_line_drops_edge_punctuation():
    root = parse("TypeError: 'NoneType' object").root
    assert root == And((Text("TypeError"), Text("NoneType"), Text("object")))


def test_filters_and_quoted_values():
    root = parse('kind:tool provider:Codex cwd:"my dir" since:7d x').root
    assert root.nodes[:4] == (Filter("kind", "tool"), Filter("provider", "codex"), Filter("cwd", "my dir"),
                              Filter("since", "7d"))
    assert parse("TypeError:x").root == Text("TypeError:x")  # not a filter name: plain text


def test_negated_texts_are_not_highlighted():
    parsed = parse("keep -drop NOT gone")
    assert [t.text for t in parsed.texts] == ["keep"]


@pytest.mark.parametrize("q, needle", [
    ('"open', "unterminated quote"),
    ("(a b", "unbalanced '('"),
    ("a b)", "unbalanced ')'"),
    ("a OR", "OR needs a term"),
    ("OR a", "OR needs a term"),
    ("()", "empty group"),
    ("kind:banana", "unknown kind"),
    ("since:soon", "cannot read time"),
    ("provider:", "needs a value"),
    ("a -", "a"),
])
def test_errors_say_what_and_how(q, needle):
    if q == "a -":  # a lone dash is just text
        assert parse(q).root is not None
        return
    with pytest.raises(QueryError, match=re.escape(needle)):
        parse(q)


def test_parse_time():
    now = 1_800_000_000.0
    assert parse_time("7d", now=now) == now - 7 * 86400
    assert parse_time("12h", now=now) == now - 12 * 3600
    day = parse_time("2026-11-01T00:00:00Z")
    assert parse_time("2026-11-01T00:00:00+00:00") == day
    assert parse_time("2026-11-01", end=True) - parse_time("2026-11-01") == 86400
    assert parse_time("today") <= time.time()
