"""The query language: what parses to what, and one actionable message for what does not."""

from __future__ import annotations

import json
import re
import time

import pytest

from voyager_sessions.search.syntax import And, Filter, Not, Or, QueryError, Text, parse, parse_time


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
    assert root.nodes[:4] == (
        Filter("kind", "tool"),
        Filter("provider", "codex"),
        Filter("cwd", "my dir"),
        Filter("since", "7d"),
    )
    assert parse("TypeError:x").root == Text("TypeError:x")  # not a filter name: plain text


def test_negated_texts_are_not_highlighted():
    parsed = parse("keep -drop NOT gone")
    assert [t.text for t in parsed.texts] == ["keep"]


@pytest.mark.parametrize(
    "q, needle",
    [
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
    ],
)
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


# -- queries too large, offsets too far (issue 15, items 9 and 10) ----------------------------


def test_an_offset_past_the_end_is_an_empty_page(corpus, run):
    assert run("scan").exit_code == 0
    for offset in ("100000000000", str(2**62)):
        res = run("search", "数据库", "--json", "--no-refresh", "--offset", offset)
        assert res.exit_code == 0, res.stderr  # the query matched (total 1); this page is simply empty
        doc = json.loads(res.stdout)
        assert doc["hits"] == [] and doc["total"] == 1 and doc["offset"] == int(offset)
    res = run("search", "数据库", "--sessions", "--json", "--no-refresh", "--offset", "100000000000")
    assert res.exit_code == 0 and json.loads(res.stdout)["hits"] == []


def test_a_pasted_log_line_of_a_thousand_words_just_works(corpus, run):
    assert run("scan").exit_code == 0
    words = " ".join(f"w{i}" for i in range(1000))
    # A thousand words said nowhere beside one that is: no term limit changes what the query means, and no
    # session can hold more than that one word, so its sessions are the answer, flagged partial (issue #34).
    res = run("search", f"{words} TypeError", "--json", "--no-refresh")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["match"] == "partial" and doc["total"] > 0, res.stderr
    assert len(doc["terms"]) == 1001 and all("TypeError" in h["snippet"] for h in doc["hits"])
    assert res.stderr.count("\n") == 1 and "no session holds all 1001 terms" in res.stderr
    res = run("search", f"{words} w1", "--json", "--no-refresh")
    assert res.exit_code == 1 and json.loads(res.stdout)["total"] == 0, res.stderr
    res = run("search", "TypeError: 'NoneType' object is not subscriptable " * 120, "--json", "--no-refresh")
    assert res.exit_code == 0 and json.loads(res.stdout)["match"] == "all", res.stderr


def test_a_query_too_large_to_run_is_one_line_and_exit_2(corpus, run):
    assert run("scan").exit_code == 0
    for query in ("(" * 500 + "x" + ")" * 500, "NOT " * 300 + "x", " ".join(["x"] * 5000)):
        res = run("search", "--json", "--no-refresh", "--", query)
        assert res.exit_code == 2, (query[:20], res.stderr)
        assert res.stderr.count("\n") == 1 and "too large to run" in res.stderr


def test_a_long_chinese_or_japanese_run_is_answered_or_too_large_never_an_internal_error(corpus, run):
    """A pasted run of CJK text is one word to the parser and, read as a description, its pairs of characters: a run
    past SQLite's longest LIKE pattern still looks for titles holding it, and more distinct pairs than a query may
    have words is too large to run, as that many words are."""
    assert run("scan").exit_code == 0
    repeated = "支付回调订单服务" * 2500  # 20,000 characters, 60,000 bytes: 8 distinct pairs
    res = run("search", "--json", "--no-refresh", "--", repeated)
    assert res.exit_code in (0, 1) and json.loads(res.stdout)["total"] >= 0, res.stderr
    varied = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(6000))  # 5,999 distinct pairs, said nowhere
    res = run("search", "--json", "--no-refresh", "--", varied)
    assert res.exit_code == 2 and res.stdout == "", res.stderr
    assert res.stderr.count("\n") == 1 and "5,999 terms" in res.stderr and "too large to run" in res.stderr


def test_conjuncts_flatten_what_code_added_and_keep_what_a_person_grouped():
    from voyager_sessions.search.plan import conjuncts

    # Filters the options add (or excluded sessions) wrap the typed query in another AND: the terms stay terms.
    typed = parse("webhook idempotency -cache").root
    wrapped = And((typed, Filter("provider", "codex")))
    c = conjuncts(wrapped)
    assert c.positive == (Text("webhook"), Text("idempotency"))
    assert c.events == (Not(Text("cache")), Filter("provider", "codex"))
    # Parentheses a person typed keep their words together (one term).
    c = conjuncts(parse("(webhook idempotency) cache").root)
    assert len(c.positive) == 2 and isinstance(c.positive[0], And) and c.positive[0].grouped
    assert len(conjuncts(parse("(webhook idempotency)").root).positive) == 1


def test_the_language_loads_without_the_engine():
    """The API and front ends parse (and reject) queries with ``search.syntax`` alone: it imports no Tantivy and no
    analyzer, so parsing never loads the index's machinery."""
    import subprocess
    import sys

    code = (
        "import sys; from voyager_sessions.search.syntax import parse; parse('a -b provider:codex \"c d\" (e OR f*)'); "
        "print(sorted(m for m in sys.modules if m == 'tantivy' or m.startswith('voyager_sessions.search.') "
        "and m != 'voyager_sessions.search.syntax'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- pasted text is text (issue #34; the rule is in docs/query.md) -----------------------------------------------


def _operators(node) -> list:
    """The exclusions and filters of a tree (what a pasted line must not turn into)."""
    if isinstance(node, (Not, Filter)):
        return [node]
    if isinstance(node, (And, Or)):
        return [x for n in node.nodes for x in _operators(n)]
    return []


@pytest.mark.parametrize(
    "q",
    [
        "rsync -avz --delete --exclude-from=.rsyncignore build/ deploy@web1:/srv/site/",  # a --long-option
        "rsync -avz src/ host:dst/",  # a directory path
        "ls -la",  # one or two characters: an option
        "rm -rf node_modules",
        "kubectl describe pod thumbnailer-7d9f -n prod | grep -A3 'Last State'",
        "git log --oneline -5",  # a number
        "grpcurl -d x -max-time 5 localhost:50051",  # a dash inside
        "java -Dspring.profiles.active=prod -jar app.jar",  # a value
        "FOO=bar ./run.sh -verbose",  # an assignment, a path
        "$ pip install -U voyager",  # a prompt
        "label: team/web:env:prod",  # a manifest's key, and a value of colons
        "kind: Deployment",  # a filter's name with nothing after it, beside other words
        "image: registry.internal/payments-api:2.8.1",
        "session:9f2c:started",  # a filter's value holding another colon
        "cwd:/srv/a:/srv/b",
        "key:value:more",
        "2026/05/11 09:12:44 [error] 3121#3121: *88 upstream prematurely closed connection",
        "- duration: 41.02s (mypy over 2,300 files)",
        "[] -- 02:15 does not exist",
    ],
)
def test_a_pasted_command_log_line_or_manifest_is_text(q):
    root = parse(q).root
    assert root is not None and _operators(root) == [], _operators(root)
    assert {t.text for t in parse(q).texts} >= {w.strip("'\":,") for w in q.split() if w.startswith("-")} - {"-", "--"}


@pytest.mark.parametrize(
    ("q", "excluded"),
    [
        ("postgres -docker", Not(Text("docker"))),
        ("-docker postgres", Not(Text("docker"))),
        ("webhook -redis cache", Not(Text("redis"))),
        ("x NOT ui", Not(Text("ui"))),  # a short word: NOT excludes it
        ('x -"a phrase"', Not(Text("a phrase", quoted=True))),
        ("x -(a b)", Not(And((Text("a"), Text("b")), grouped=True))),
        ("x -provider:codex", Not(Filter("provider", "codex"))),
        ("ls -la -kind:tool", Not(Filter("kind", "tool"))),  # a filter is excluded even among options
    ],
)
def test_exclusions_are_still_exclusions(q, excluded):
    assert excluded in _operators(parse(q).root)


def test_a_filter_is_a_filter():
    assert parse("provider:codex kind:tool since:2026-11-01T10:00 x").root.nodes[:3] == (
        Filter("provider", "codex"),
        Filter("kind", "tool"),
        Filter("since", "2026-11-01T10:00"),
    )
    with pytest.raises(QueryError, match="needs a value"):
        parse("kind:")  # alone, it can only be a filter missing its value
