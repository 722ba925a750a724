"""``voyager_sessions.api``: the read side answers every front end in the same words.

A front end that calls the API directly (``voyager demo``, a script) gets the one-line
``UserError`` the CLI prints for a malformed query, whether the query text or a filter's
value (checked only against the index: ``provider:``) is what is wrong.
"""

from __future__ import annotations

import gc

import pytest

from tests.support.sessions import claude_session_lines, write_claude
from voyager_sessions import api
from voyager_sessions.cli.main import main
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import data_dir
from voyager_sessions.scan import scan


def test_a_malformed_query_is_a_user_error_before_any_work(home):
    with pytest.raises(UserError, match=r"^bad query: "):
        api.check_query('"unclosed phrase')
    api.check_query("connection refused")  # well-formed: nothing raised


def test_search_reports_a_bad_filter_as_the_cli_does(home):
    write_claude(home, claude_session_lines())
    scan(data_dir())
    assert api.search(api.SearchRequest(query="marmalade")).total == 1
    with pytest.raises(UserError, match=r"^bad query: .*nosuchagent"):
        api.search(api.SearchRequest(query="marmalade provider:nosuchagent"))
    with pytest.raises(UserError, match=r"^bad query: "):
        api.search(api.SearchRequest(query="marmalade", since="the day after tomorrow"))


def test_a_request_is_checked_as_argv_is(home):
    assert api.decode_request("search", {"query": "x", "limit": 5}).limit == 5
    for fields, message in [
        ({"limit": 0}, "limit"),
        ({"limit": 10_001}, "limit"),
        ({"limit": True}, "limit"),
        ({"context": 51}, "context"),
        ({"sort": "random"}, "sort"),
        ({"providers": "codex"}, "providers"),
        ({"extra": 1}, "extra"),
    ]:
        with pytest.raises(ValueError, match=message):
            api.decode_request("search", {"query": "x", **fields})
    with pytest.raises(ValueError, match="unknown operation"):
        api.decode_request("scan", {})
    with pytest.raises(ValueError, match="session"):
        api.decode_request("show", {})


def test_excluded_sessions_are_left_out(home):
    write_claude(home, claude_session_lines())
    scan(data_dir())
    hit = api.search(api.SearchRequest(query="marmalade", refresh=False)).hits[0]
    left = api.search(api.SearchRequest(query="marmalade", refresh=False, exclude_sessions=[hit.session_id]))
    assert left.total == 0 and left.hits == []


def _counting_parses(monkeypatch) -> list[str]:
    """Every call of the query parser, wherever it comes from (the API's own counter is checked beside it)."""
    from voyager_sessions.search import query as qlang

    calls: list[str] = []
    real = qlang.parse
    monkeypatch.setattr(qlang, "parse", lambda q: (calls.append(q), real(q))[1])
    return calls


def test_a_search_parses_its_query_once_in_process(home, run, monkeypatch):
    write_claude(home, claude_session_lines())
    scan(data_dir())
    calls = _counting_parses(monkeypatch)
    before = api.query_parses()
    api.search(api.SearchRequest(query="marmalade", refresh=False))
    assert calls == ["marmalade"] and api.query_parses() == before + 1
    # Through the CLI, both ways in: click, and the lean entry point (voyager_sessions.cli.main).
    for argv in (["search", "marmalade", "--json"], ["search", "marmalade", "--sessions", "-C", "1"]):
        calls.clear()
        before = api.query_parses()
        run(*argv)
        assert calls == ["marmalade"] and api.query_parses() == before + 1, argv
        calls.clear()
        with pytest.raises(SystemExit):
            try:
                main(argv)
            finally:
                gc.unfreeze()  # main freezes what start-up imported, for a process about to exit
        assert calls == ["marmalade"] and api.query_parses() == before + 2, argv
