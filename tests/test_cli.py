"""The walking skeleton through the real CLI: scan a fake HOME, search it every way a user would."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from tests.support.run import run_subprocess, sha256_tree
from tests.support.sessions import CLAUDE_SID, CODEX_SID, claude_session_lines, write_claude


def test_scan_then_search_cjk_pair_matches_only_adjacent(corpus, run):
    res = run("scan")
    assert res.exit_code == 0, res.stderr
    assert "2 new" in res.stdout
    doc = run.json("search", "--json", "数据")
    assert doc["total"] == 1
    hit = doc["hits"][0]
    assert hit["session_id"] == f"claude:{CLAUDE_SID}"
    assert hit["kind"] == "user" and hit["origin"] == "human"
    s, e = hit["highlights"][0]
    assert hit["snippet"][s:e] == "数据"
    # 数 and 据 stand apart in the tool output ("数字和据点"): that event must not match.
    assert all(h["kind"] != "tool_result" for h in doc["hits"])
    res = run("search", "据数")
    assert res.exit_code == 1 and res.stdout == ""


def test_korean_and_english_and_identifiers(corpus, run):
    run("scan")
    assert run.json("search", "--json", "데이터")["hits"][0]["session_id"] == f"codex:{CODEX_SID}"
    ids = {h["session_id"] for h in run.json("search", "--json", "ERR_VOYAGER_00012")["hits"]}
    assert ids == {f"claude:{CLAUDE_SID}"}
    assert run("search", "ERR_VOYAGER_00013").exit_code == 1
    assert run("search", "ERR_VOYAGER").exit_code == 1  # a whole identifier, not a fragment of one
    hits = run.json("search", "--json", "src/store/db.py")["hits"]
    assert [h["kind"] for h in hits] == ["reasoning"]
    hits = run.json("search", "--json", "ERR_CONN_REFUSED_42")["hits"]
    assert hits[0]["kind"] == "tool_result" and hits[0]["exit_code"] == 2
    pasted = run.json("search", "--json", "TypeError: 'NoneType' object is not subscriptable")
    assert pasted["total"] == 1 and pasted["hits"][0]["kind"] == "tool_result"


def test_json_document_field_by_field(corpus, run):
    run("scan")
    doc = run.json("search", "--json", "connection refused")
    assert doc["schema_version"] == 1 and doc["query"] == "connection refused" and doc["offset"] == 0
    assert doc["total"] == len(doc["hits"]) >= 1
    hit = next(h for h in doc["hits"] if h["kind"] == "user")
    assert hit["provider"] == "codex"
    assert hit["session_id"] == f"codex:{CODEX_SID}"
    assert isinstance(hit["seq"], int)
    assert hit["timestamp"] == "2026-11-21T08:00:01Z"
    assert hit["cwd"] == "/home/dev/api"
    assert hit["title"]
    assert hit["resume"] == f"codex resume {CODEX_SID}"
    assert "connection refused" in hit["snippet"]
    assert isinstance(hit["score"], float)


def test_jsonl_limit_provider_kind(corpus, run):
    run("scan")
    res = run("search", "--jsonl", "the OR postgres OR migration OR 数据库")
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert len(lines) >= 3 and all("session_id" in x for x in lines)
    assert len(run.json("search", "--json", "--limit", "1", "the OR postgres OR migration")["hits"]) == 1
    only_codex = run.json("search", "--json", "--provider", "codex", "the OR postgres OR migration OR 数据库")
    assert only_codex["hits"] and {h["provider"] for h in only_codex["hits"]} == {"codex"}
    # Repeated, --provider means any of them (as --kind does), not all at once.
    q = "the OR postgres OR migration OR 数据库"
    both = run.json("search", "--json", "--provider", "codex", "--provider", "claude", q)
    each = sum(run.json("search", "--json", "--provider", p, q)["total"] for p in ("codex", "claude"))
    assert both["total"] == each > only_codex["total"]
    tools = run.json("search", "--json", "--kind", "tool", "pytest OR pg_isready OR TypeError OR ERR_CONN_REFUSED_42")
    assert {h["kind"] for h in tools["hits"]} <= {"tool_call", "tool_result"} and len(tools["hits"]) == 4


def test_meta_is_searchable_but_never_a_human_turn(corpus, run):
    run("scan")
    hit = run.json("search", "--json", "zebrafish")["hits"][0]
    assert hit["kind"] == "meta" and hit["origin"] == "provider"
    env_ctx = run.json("search", "--json", "environment_context")["hits"]
    assert env_ctx and all(h["kind"] == "meta" for h in env_ctx)
    # The Codex prompt appears twice in the rollout but is one human turn.
    users = run.json("search", "--json", "--kind", "user", "5432")["hits"]
    assert len(users) == 1


def test_list_and_show(corpus, run):
    run("scan")
    doc = run.json("list", "--json")
    assert doc["schema_version"] == 1 and doc["total"] == 2
    assert [s["provider"] for s in doc["sessions"]] == ["codex", "claude"]  # newest first
    claude = doc["sessions"][1]
    assert claude["cwd"] == "/home/dev/shop" and claude["git_branch"] == "main" and claude["events"] >= 5
    tl = run.json("show", "--json", CLAUDE_SID[:8])
    assert tl["session"]["session_id"] == f"claude:{CLAUDE_SID}"
    assert [e["seq"] for e in tl["events"]] == list(range(len(tl["events"])))
    res = run("show", "nonexistent")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1


def test_second_scan_reindexes_nothing_and_says_so(corpus, run):
    run("scan")
    res = run("scan", "--json")
    summary = json.loads(res.stdout)
    assert summary["unchanged"] == 2 and summary["new"] == summary["changed"] == summary["events_added"] == 0
    assert "Nothing changed" in run("scan").stdout


def test_changed_file_replaces_its_session_without_duplicates(corpus, run):
    run("scan")
    before = run.json("search", "--json", "--kind", "user", "数据库")["total"]
    lines = claude_session_lines()
    lines[1] = lines[1].replace("帮我看看", "请检查")  # a rewrite, not an append
    corpus["claude"].write_text("".join(lines), encoding="utf-8")
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["changed"] == 1
    assert run.json("search", "--json", "--kind", "user", "数据库")["total"] == before == 1
    assert run.json("search", "--json", "请检查")["total"] == 1
    assert run("search", "帮我看看").exit_code == 1


def test_provider_files_unchanged_by_scan_and_search(corpus, home, run):
    before = sha256_tree(home / ".claude") | sha256_tree(home / ".codex")
    run("scan")
    run("search", "数据库")
    after = sha256_tree(home / ".claude") | sha256_tree(home / ".codex")
    assert before == after


def test_data_dir_is_private(corpus, home, run):
    run("scan")
    data = home / "voyager-data"
    assert (data.stat().st_mode & 0o777) == 0o700
    for p in data.rglob("*"):
        if p.is_file():
            assert p.stat().st_mode & 0o077 == 0, p
        else:
            assert p.stat().st_mode & 0o077 == 0, p


def test_bad_query_is_one_line_exit_2(corpus, run):
    run("scan")
    for q in ['"unterminated', "(open", "a OR", "kind:nonsense", "since:someday", "provider:nope x"]:
        res = run("search", q)
        assert res.exit_code == 2, q
        assert res.stdout == ""
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("voyager: "), res.stderr
    res = run("search", "--limit", "zero", "x")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1


def test_no_history_suggests_demo(home, run):
    res = run("scan")
    assert res.exit_code == 0
    assert "voyager demo" in res.stderr


def test_demo_runs_and_finds_cjk(home, run):
    res = run("demo")
    assert res.exit_code == 0, res.stderr
    blocks = res.stdout.split("$ voyager search ")[1:]
    assert len(blocks) >= 4
    for block in blocks:  # every demo query finds something in the bundled corpus
        assert "(0 hits)" not in block and ("hits)" in block or "(1 hit)" in block), block
    assert res.stdout.rstrip().split("\n")[-1].startswith("Now open your own history: `voyager ui`")  # the next step


def test_help_names_the_picker_and_the_web_page_first(run):
    quick = run("--help").stdout.split("Quick start:")[1].split("\n\n")[0].split("\n")
    assert [line.split()[1] for line in quick if line.strip()][:2] == ["ui", "web"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq not installed")
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_real_subprocess_json_through_jq(corpus):
    env = dict(os.environ)
    assert run_subprocess("scan", "-q", env=env).returncode == 0
    search = run_subprocess("search", "--json", "数据库", env=env)
    assert search.returncode == 0, search.stderr
    jq = subprocess.run(
        ["jq", "-r", ".hits[0].session_id, .total"], input=search.stdout, capture_output=True, text=True
    )
    assert jq.returncode == 0 and jq.stdout.split() == [f"claude:{CLAUDE_SID}", "1"]
    miss = run_subprocess("search", "--json", "qwertyuiopasdf", env=env)
    assert miss.returncode == 1 and json.loads(miss.stdout)["total"] == 0
    bad = run_subprocess("search", "(", env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1
    assert run_subprocess("--help", env=env).returncode == 0
    mod = subprocess.run([sys.executable, "-m", "voyager_sessions", "--version"], capture_output=True, text=True)
    assert mod.returncode == 0 and "voyager" in mod.stdout


def test_session_title_lifts_its_events(home, run):
    import json as _json

    a = claude_session_lines(sid="aaaaaaaa-0000-4000-8000-000000000001")
    b = claude_session_lines(sid="bbbbbbbb-0000-4000-8000-000000000002")
    summary = _json.dumps({"type": "summary", "summary": "Fix the marmalade importer", "leafUuid": "a3"}) + "\n"
    write_claude(home, a, sid="aaaaaaaa-0000-4000-8000-000000000001", project="-p-a")
    write_claude(home, b + [summary], sid="bbbbbbbb-0000-4000-8000-000000000002", project="-p-b")
    run("scan")
    hits = run.json("search", "--json", "marmalade")["hits"]
    assert hits[0]["session_id"] == "claude:bbbbbbbb-0000-4000-8000-000000000002"
    assert hits[0]["title"] == "Fix the marmalade importer"


def test_query_edge_cases_from_review(corpus, run):
    run("scan")
    # (Not "connection refused": its session's ERR_CONN_REFUSED_42 line says refused too, as an identifier's part.)
    both = run.json("search", "--json", "connection")["total"]
    assert run.json("search", "--json", 'connection -"no such phrase"')["total"] == both
    assert run.json("search", "--json", 'connection -"connection refused"')["total"] < both
    for q in ['""', "**", "since:99999999999999999999d x", "until:9999-12-31T23:59:59+00:00x", "since:0001-01-01 x"]:
        res = run("search", q)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, (q, res.stderr)
    for args in (
        ["search", "--offset", "99999999999999999999", "x"],
        ["list", "-n", "99999999999999999999"],
        ["show", CLAUDE_SID, "--around", "99999999999999999999"],
    ):
        res = run(*args)
        assert res.exit_code == 2 and "Traceback" not in res.stderr, args
    recent = run.json("search", "--json", "--sessions", "--sort", "recent", "the OR postgres OR 数据库")["hits"]
    assert [h["provider"] for h in recent] == ["codex", "claude"]


# -- the data dir's permissions (issue 15, item 15) -------------------------------------------------


def test_a_data_dir_voyager_creates_is_private(corpus, run, home):
    assert run("scan").exit_code == 0
    ddir = home / "voyager-data"
    assert stat.S_IMODE(ddir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in ddir.rglob("*"))


def test_an_existing_data_dir_is_never_chmodded(corpus, run, home, monkeypatch):
    shared = home / "shared-tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("VOYAGER_HOME", str(shared))
    res = run("scan")
    assert res.exit_code == 2 and "others can write into it" in res.stderr and res.stderr.count("\n") == 1
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and not any(shared.iterdir())
    readable = home / "readable"
    readable.mkdir()
    readable.chmod(0o755)
    monkeypatch.setenv("VOYAGER_HOME", str(readable))
    res = run("scan")
    assert res.exit_code == 0 and "readable by others (mode 0755)" in res.stderr
    assert stat.S_IMODE(readable.stat().st_mode) == 0o755


def test_help_loads_no_engine(home):
    """``voyager --help`` imports every command module for its summary line: none may pull in msgspec, tantivy or SQLite."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('loaded: %s\\n' % sorted(\n"
        "    m for m in ('msgspec', 'tantivy', 'sqlite3') if m in sys.modules)))\n"
        "from voyager_sessions.cli.main import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and "resume" in proc.stdout, proc.stderr
    assert proc.stderr.endswith("loaded: []\n"), proc.stderr


def test_counts_of_one_are_singular(home, run):
    """ "1 sessions" and "(1 hits)" in text output (issue #28, item 8)."""
    from tests.support.sessions import claude_session_lines, write_claude

    write_claude(home, claude_session_lines())
    scanned = run("scan")
    assert "Scanned 1 source in" in scanned.stdout and "1 session indexed." in scanned.stdout, scanned.stdout
    again = run("scan")
    assert "1 source up to date, 1 session indexed" in again.stdout, again.stdout
    hit = run("search", "ERR_VOYAGER_00012", "--sessions", "--no-refresh", "--color", "never")
    assert "(1 hit)" in hit.stdout and "(1 hits)" not in hit.stdout, hit.stdout
    listed = run("list")
    assert "1 of 1 session" in listed.stderr and "1 of 1 sessions" not in listed.stderr, listed.stderr
