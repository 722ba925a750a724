"""The session-attribute filters through the real CLI: ``--branch`` / ``branch:``, added as one row of
``core/filters.py`` and its request field, keeps the sessions whose git branch contains the text; every front end
offers it without a line of its own."""

from __future__ import annotations

import msgspec
import pytest

from tests.support.sessions import claude_session_lines, write_claude

FEATURE = "aaaaaaaa-0000-4000-8000-000000000001"
MAIN = "bbbbbbbb-0000-4000-8000-000000000002"


@pytest.fixture
def two_branches(home, run):
    """Two Claude Code sessions saying the same things, one on ``feature/x``, the other on ``main``; scanned."""
    feature = [
        line.replace('"gitBranch": "main"', '"gitBranch": "feature/x"') for line in claude_session_lines(FEATURE)
    ]
    assert feature != claude_session_lines(FEATURE)
    write_claude(home, feature, sid=FEATURE, project="-p-feature")
    write_claude(home, claude_session_lines(MAIN), sid=MAIN, project="-p-main")
    res = run("scan")
    assert res.exit_code == 0, res.stderr
    listed = {s["session_id"]: s["git_branch"] for s in run.json("list", "--json")["sessions"]}
    assert listed == {f"claude:{FEATURE}": "feature/x", f"claude:{MAIN}": "main"}


def _sessions(run, *args: str) -> list[str]:
    doc = run.json("search", *args, "--sessions", "--json", "--no-refresh")
    return [h["session_id"] for h in doc["hits"]]


def test_branch_keeps_the_sessions_whose_git_branch_contains_the_text(two_branches, run):
    assert sorted(_sessions(run, "parse_config_v2")) == [f"claude:{FEATURE}", f"claude:{MAIN}"]
    assert _sessions(run, "parse_config_v2", "--branch", "feature/x") == [f"claude:{FEATURE}"]
    assert _sessions(run, "parse_config_v2", "--branch", "FEATURE") == [f"claude:{FEATURE}"]  # contains, any case
    assert _sessions(run, "parse_config_v2", "--branch", "main") == [f"claude:{MAIN}"]
    res = run("search", "parse_config_v2", "--branch", "release", "--no-refresh")
    assert res.exit_code == 1 and res.stdout == "" and res.stderr == "No matches.\n"
    # A filter alone is a search (the API's "anything asked?" reads the table): every event of that session.
    assert _sessions(run, "--branch", "feature/x") == [f"claude:{FEATURE}"]
    # With the other session-attribute filters: all of them must hold.
    assert _sessions(run, "parse_config_v2", "--branch", "main", "--repo", "/home/dev/shop") == [f"claude:{MAIN}"]


def test_branch_in_the_query_language(two_branches, run):
    assert _sessions(run, "parse_config_v2 branch:feature/x") == [f"claude:{FEATURE}"]
    assert _sessions(run, "parse_config_v2 BRANCH:Main") == [f"claude:{MAIN}"]
    assert _sessions(run, "parse_config_v2 -branch:main") == [f"claude:{FEATURE}"]
    assert sorted(_sessions(run, "branch:feature/x OR branch:main")) == [f"claude:{FEATURE}", f"claude:{MAIN}"]
    res = run("search", "branch:", "--no-refresh")
    assert res.exit_code == 2 and res.stderr == "voyager: bad query: branch: needs a value, e.g. branch:feature/x\n"
    # Beside other words a bare name is text, as for every filter (a pasted "branch: main" line).
    assert run("search", "parse_config_v2 branch:", "--no-refresh").exit_code in (0, 1)
    assert "branch:" in run("search", "--help").stdout and "--branch TEXT" in run("search", "--help").stdout


def test_every_front_end_offers_branch_from_the_request_field(two_branches, home):
    """The MCP tool's schema and the web page's parameter come from ``SearchRequest.branch``: nothing of theirs
    names it."""
    from voyager_sessions import api
    from voyager_sessions.mcp import tools
    from voyager_sessions.web.data import search_request

    schema = tools.input_schema("search")
    assert schema["properties"]["branch"]["description"] == "Only sessions whose git branch contains this."
    assert "branch" in tools.filters("search")
    assert "branch:NAME" in tools.SEARCH_DESCRIPTION.format(own="", attributes=tools._ATTRIBUTES)
    req, rows = search_request({"q": "parse_config_v2", "branch": "feature/x"}, {})
    assert req.branch == "feature/x" and rows
    hits = api.search(msgspec.structs.replace(req, refresh=False), data_dir=home / "voyager-data").hits
    assert {h.session_id for h in hits} == {f"claude:{FEATURE}"}
