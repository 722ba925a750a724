"""``voyager_sessions.api``: the read side answers every front end in the same words.

A front end that calls the API directly (``voyager demo``, a script) gets the one-line
``UserError`` the CLI prints for a malformed query, whether the query text or a filter's
value (checked only against the index: ``provider:``) is what is wrong.
"""

from __future__ import annotations

import pytest

from tests.conftest import claude_session_lines, write_claude
from voyager_sessions import api
from voyager_sessions.errors import UserError
from voyager_sessions.paths import data_dir
from voyager_sessions.scan import scan
from voyager_sessions.search.engine import SearchOptions


def test_a_malformed_query_is_a_user_error_before_any_work(home):
    with pytest.raises(UserError, match=r"^bad query: "):
        api.check_query('"unclosed phrase')
    api.check_query("connection refused")  # well-formed: nothing raised


def test_search_reports_a_bad_filter_as_the_cli_does(home):
    write_claude(home, claude_session_lines())
    scan(data_dir())
    assert api.search(data_dir(), "marmalade").total == 1
    with pytest.raises(UserError, match=r"^bad query: .*nosuchagent"):
        api.search(data_dir(), "marmalade provider:nosuchagent")
    with pytest.raises(UserError, match=r"^bad query: "):
        api.search(data_dir(), "marmalade", SearchOptions(since="the day after tomorrow"))
