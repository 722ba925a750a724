"""The web UI's JSON API: the `--json` documents over HTTP, with their schema_version, paging and errors."""

from __future__ import annotations

import json

from tests.support.webpage import HOSTILE_SID, TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_search_groups_by_session_with_facets_like_search_json(client, run):
    doc = client.get("/api/search", params={"q": "parse_config_v2"}, headers=AUTH).json()
    assert doc["schema_version"] == 1
    res = doc["result"]
    from voyager_sessions.api import meaning_available

    # The page ranks by meaning too where the model is installed (a person describes what they look for).
    cli = run.json("search", "parse_config_v2", "--sessions", "--json", *(["--meaning"] if meaning_available() else []))
    assert res.keys() == cli.keys()
    assert {h["session_id"] for h in res["hits"]} == {h["session_id"] for h in cli["hits"]}
    assert all(h["hit_count"] >= 1 for h in res["hits"])
    assert dict(doc["facets"]["agent"]) == {"claude": 2}
    assert sum(c for _, c in doc["facets"]["week"]) == 2
    assert set(doc["repos"]) == {h["session_id"] for h in res["hits"]}


def test_without_facets_only_the_page_is_searched(client):
    doc = client.get("/api/search", params={"q": "parse_config_v2", "facets": "0", "limit": 1}, headers=AUTH).json()
    assert doc["facets"] is None and len(doc["result"]["hits"]) == 1


def test_the_facets_alone_are_the_page_s_second_request(client):
    # limit=0: the counts and the total, no rows read; the same total and counts as with rows.
    for q in ("parse_config_v2", "connection OR parse_config_v2", "connection refused"):
        rows = client.get("/api/search", params={"q": q}, headers=AUTH).json()
        alone = client.get("/api/search", params={"q": q, "limit": 0}, headers=AUTH).json()
        assert alone["result"]["hits"] == [] and alone["repos"] == {}
        assert alone["result"]["total"] == rows["result"]["total"] >= 1
        assert alone["facets"] == rows["facets"]
        # Every week counted is what narrowing to it finds.
        for week, count in alone["facets"]["week"]:
            narrowed = client.get("/api/search", params={"q": q, "week": week, "limit": 0}, headers=AUTH).json()
            assert narrowed["result"]["total"] == count
        assert sum(c for _, c in alone["facets"]["agent"]) == alone["result"]["total"]


def test_search_filters_narrow_the_grouped_results(client):
    def ids(**params):
        return {
            h["session_id"].split(":")[0]
            for h in client.get("/api/search", params=params, headers=AUTH).json()["result"]["hits"]
        }

    assert ids(q="connection OR parse_config_v2") == {"claude", "codex"}
    assert ids(q="connection OR parse_config_v2", provider="codex") == {"codex"}
    assert ids(q="connection OR parse_config_v2", project="dev/api") == {"codex"}
    assert ids(q="connection OR parse_config_v2", week="2026-11-16") == {"claude", "codex"}
    assert ids(q="connection OR parse_config_v2", week="2026-11-23") == set()
    assert ids(q="connection OR parse_config_v2", since="2026-11-21") == {"codex"}


def test_the_branch_parameter_is_the_branch_filter(client):
    """``branch=`` (derived from ``SearchRequest.branch``, nothing of the page's own) keeps the sessions whose git
    branch contains it: the corpus' Claude session is on main, the hostile one on a branch of markup."""

    def ids(**params):
        doc = client.get("/api/search", params={"q": "parse_config_v2", **params}, headers=AUTH).json()
        return {h["session_id"] for h in doc["result"]["hits"]}

    both = ids()
    assert f"claude:{HOSTILE_SID}" in both and len(both) == 2
    assert ids(branch="MAIN") == both - {f"claude:{HOSTILE_SID}"}
    assert ids(branch="</script>") == {f"claude:{HOSTILE_SID}"}
    assert ids(branch="no-such-branch") == set()


def test_a_cjk_query_finds_its_session(client):
    hits = client.get("/api/search", params={"q": "数据库"}, headers=AUTH).json()["result"]["hits"]
    assert hits and all(h["provider"] == "claude" for h in hits)
    hits = client.get("/api/search", params={"q": "데이터베이스"}, headers=AUTH).json()["result"]["hits"]
    assert [h["provider"] for h in hits] == ["codex"]


def test_an_empty_query_lists_the_newest_sessions_and_filters_them(client):
    doc = client.get("/api/search", headers=AUTH).json()
    assert doc["result"]["total"] == 3 and len(doc["result"]["hits"]) == 3
    assert dict(doc["facets"]["agent"]) == {"claude": 2, "codex": 1}

    def total(**params):
        return client.get("/api/search", params=params, headers=AUTH).json()["result"]["total"]

    assert total(week="2026-11-16") == 3 and total(week="2026-11-09") == 0
    assert total(since="2026-11-21") == 1 and total(until="2026-11-20") == 2
    assert total(project="dev/api") == 1 and total(provider="claude") == 2
    assert client.get("/api/search", params={"since": "someday"}, headers=AUTH).status_code == 400


def test_a_bad_query_and_a_bad_parameter_are_one_line_errors(client):
    res = client.get("/api/search", params={"q": "since:yesterdayish"}, headers=AUTH)
    assert res.status_code == 400 and res.json()["error"].startswith("bad query")
    assert client.get("/api/search", params={"limit": "many"}, headers=AUTH).status_code == 400
    assert client.get("/api/search", params={"week": "someday"}, headers=AUTH).status_code == 400


def test_sessions_is_list_json(client, run):
    doc = client.get("/api/sessions", headers=AUTH).json()
    assert doc == run.json("list", "--json") | {"sessions": doc["sessions"]}
    assert [s["session_id"] for s in doc["sessions"]] == [
        s["session_id"] for s in run.json("list", "--json")["sessions"]
    ]


def test_a_session_is_show_json_and_pages(client, run):
    sid = f"claude:{HOSTILE_SID}"
    whole = client.get(f"/api/sessions/{sid}", headers=AUTH).json()
    cli = run.json("show", sid, "--json")
    assert whole["session"] == cli["session"] and whole["events"] == cli["events"]
    seqs, start = [], 0
    while start is not None:
        page = client.get(f"/api/sessions/{sid}", params={"start": start, "limit": 2}, headers=AUTH).json()
        assert page["schema_version"] == 1 and len(page["events"]) <= 2 + 10  # the first page holds Voyager's own
        seqs += [e["seq"] for e in page["events"]]
        start = page["next"]
    assert seqs == [e["seq"] for e in cli["events"]]


def test_an_unknown_session_is_404(client):
    res = client.get("/api/sessions/claude:nope", headers=AUTH)
    assert res.status_code == 404 and "no session" in res.json()["error"]


def test_exports_are_attachments_and_redaction_applies(client, run):
    sid = f"claude:{HOSTILE_SID}"
    for fmt in ("md", "json", "html"):
        res = client.get(f"/export/{fmt}/{sid}", headers=AUTH)
        assert res.status_code == 200 and res.headers["content-disposition"].startswith("attachment;")
    assert (
        json.loads(client.get(f"/export/json/{sid}", headers=AUTH).content)["events"]
        == run.json("show", sid, "--json")["events"]
    )
    res = client.get(f"/export/md/{sid}", params={"redact": "1"}, headers=AUTH)
    assert "-redacted.md" in res.headers["content-disposition"]
    assert client.get(f"/export/pdf/{sid}", headers=AUTH).status_code == 400


def test_the_session_header_names_the_resume_command_and_query_terms(client):
    doc = client.get(
        f"/ui/session/claude:{HOSTILE_SID}", params={"q": 'migration "parse config" -zebra kind:user'}, headers=AUTH
    ).json()
    assert doc["agent"] == "Claude Code"
    assert doc["resume"].endswith(f"claude --resume {HOSTILE_SID}")
    assert doc["terms"] == ["migration", "parse config"]


def test_a_tool_call_rows_excerpt_reads_without_json_punctuation(client, home, run):
    """``excerpts``: rows whose excerpt reads otherwise than their hit's snippet (a call's arguments), keyed by
    session; the hit itself stays what ``--json`` prints."""
    from tests.support import toolcalls
    from tests.support.sessions import write_claude

    write_claude(home, toolcalls.lines(), sid=toolcalls.SID, project=toolcalls.PROJECT)
    assert run("scan", "-q").exit_code == 0
    doc = client.get("/api/search", params={"q": "EDITMARK"}, headers=AUTH).json()
    [hit] = doc["result"]["hits"]
    assert hit["kind"] == "tool_call" and "\\n" in hit["snippet"]
    shown = doc["excerpts"][hit["session_id"]]
    assert "\\n" not in shown["snippet"] and "EDITMARK return conn" in shown["snippet"]
    assert [shown["snippet"][a:b] for a, b in shown["highlights"]] == ["EDITMARK"]
    plain = client.get("/api/search", params={"q": "parse_config_v2"}, headers=AUTH).json()
    assert plain["excerpts"] == {}


def test_rows_found_by_their_title_ask_for_the_prompt(client, home, run):
    from tests.support.sessions import claude_session_lines, write_claude

    sid = "5e5e5e5e-0000-4000-8000-00000000717e"
    lines = claude_session_lines(sid=sid) + [
        json.dumps({"type": "summary", "summary": "Kestrel migration plan", "leafUuid": "a3"}) + "\n"
    ]
    write_claude(home, lines, sid=sid, project="-home-dev-kestrel")
    assert run("scan", "-q").exit_code == 0
    rows = client.get("/api/search", params={"q": "kestrel"}, headers=AUTH).json()["result"]["hits"]
    assert [h["kind"] for h in rows] == ["title"]
    doc = client.get("/ui/prompts", params={"q": "kestrel", "id": f"claude:{sid}"}, headers=AUTH).json()
    found = doc["prompts"][f"claude:{sid}"]
    assert (
        found["kind"] == "user" and found["snippet"].startswith("我们的数据库迁移失败了") and found["highlights"] == []
    )
    # Where the session says the words elsewhere, that event (not the first prompt) is shown, marked.
    doc = client.get("/ui/prompts", params={"q": "parse_config_v2", "id": f"claude:{sid}"}, headers=AUTH).json()
    found = doc["prompts"][f"claude:{sid}"]
    assert found["highlights"] and "parse_config_v2" in found["snippet"]
    assert client.get("/ui/prompts", params={"q": "kestrel", "id": "claude:nope"}, headers=AUTH).json()["prompts"] == {}


def test_an_export_of_a_session_named_beyond_latin_1_downloads(home, run, client):
    """Issue 38: a session whose file name is not Latin-1 answered 500 (a header holds Latin-1 at most). Its
    export is named by RFC 6266's ``filename*`` (UTF-8, percent-encoded), with an ASCII ``filename`` beside."""
    from urllib.parse import unquote

    from tests.support.sessions import claude_session_lines, write_claude

    sid = "会话-🚀-ü"
    write_claude(home, claude_session_lines(sid=sid), sid=sid, project="-home-dev-文件夹")
    assert run("scan", "-q").exit_code == 0
    for fmt in ("md", "json", "html"):
        res = client.get(f"/export/{fmt}/claude:{sid}", headers=AUTH)
        assert res.status_code == 200, res.text
        cd = res.headers["content-disposition"]
        assert cd.isascii() and cd.startswith('attachment; filename="claude_')
        # Letters of any script are kept; anything else (the emoji, the colon) becomes _.
        assert unquote(cd.split("filename*=UTF-8''", 1)[1]) == f"claude_会话-_-ü.{fmt}"


def test_the_copy_button_offers_a_hostile_id_as_data(home, run, client):
    """Issue 38: the web page's copy button showed ``claude --resume --dangerously-skip-permissions`` for a file
    named so; it offers the id attached to its option."""
    from tests.support.sessions import claude_session_lines, write_claude

    bad = "--dangerously-skip-permissions"
    write_claude(home, claude_session_lines(sid=bad), sid=bad)
    assert run("scan", "-q").exit_code == 0
    doc = client.get(f"/ui/session/claude:{bad}", headers=AUTH).json()
    assert doc["resume"].endswith(f"claude --resume={bad}")
