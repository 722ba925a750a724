"""The scan pipeline: incremental reads, replacement without duplicates, bad input named and survived."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.sessions import CLAUDE_SID, claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.api import SearchRequest, search
from voyager_sessions.core.paths import DataDir, data_dir
from voyager_sessions.scan import scan


def _search(q: str, **kw):
    return search(SearchRequest(query=q, refresh=False, **kw), data_dir=data_dir())


def _all_events():
    from voyager_sessions.search.index import SearchIndex

    ix = SearchIndex(DataDir(data_dir()).index, create=False)
    out = []
    for sid in ix.iter_session_ids():
        out.extend((e.session, e.seq) for e in ix.session_events(sid))
    return out


def test_appended_lines_are_read_incrementally(home):
    lines = claude_session_lines()
    path = write_claude(home, lines[:3])
    s1 = scan(data_dir())
    assert s1.new == 1
    n1 = len(_all_events())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[3:]))
    s2 = scan(data_dir())
    assert s2.grown == 1 and s2.changed == 0
    events = _all_events()
    assert len(events) == len(set(events)) > n1
    assert _search("parse_config_v2", kinds=["assistant"]).total == 1
    # Same result as a scan from scratch.
    fresh = home / "fresh"
    os.environ["VOYAGER_HOME"] = str(fresh)
    try:
        scan(data_dir())
        assert sorted(_all_events()) == sorted(events)
    finally:
        os.environ["VOYAGER_HOME"] = str(home / "voyager-data")


def test_partial_last_line_is_left_for_next_scan(home, run):
    lines = claude_session_lines()
    path = write_claude(home, lines[:5])
    last = lines[5]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(last[: len(last) // 2])  # the agent is mid-write
    res = run("scan")
    assert res.exit_code == 0
    assert "incomplete" in res.stderr and str(path) in res.stderr
    assert _search("guard").total == 0
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(last[len(last) // 2 :])
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["grown"] == 1
    assert _search("guard").total == 1
    events = _all_events()
    assert len(events) == len(set(events))


def test_truncated_file_is_reindexed_from_scratch(home):
    lines = claude_session_lines()
    path = write_claude(home, lines)
    scan(data_dir())
    path.write_text("".join(lines[:2]), encoding="utf-8")
    s = scan(data_dir())
    assert s.changed == 1
    assert _search("parse_config_v2", kinds=["assistant"]).total == 0
    assert len(_all_events()) == 2


def test_vanished_source_leaves_the_index_unless_kept(home):
    p = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    scan(data_dir())
    p.unlink()
    s = scan(data_dir(), keep_missing=True)
    assert s.removed == 0 and _search("数据库").total == 1
    s = scan(data_dir())
    assert s.removed == 1 and _search("数据库").total == 0
    assert _search("데이터베이스").total >= 1


def test_malformed_line_is_named_and_the_rest_is_kept(home, run):
    lines = claude_session_lines()
    lines.insert(2, '{"type": "user", "message": {broken json\n')
    path = write_claude(home, lines)
    res = run("scan")
    assert res.exit_code == 0
    assert f"{path} (line 3): malformed JSON" in res.stderr
    assert _search("marmalade").total == 1 and _search("数据库").total == 1


def test_binary_file_named_jsonl_is_skipped(home, run):
    write_claude(home, claude_session_lines())
    bad = home / ".claude" / "projects" / "-home-dev-shop" / "garbage.jsonl"
    bad.write_bytes(b"\x00\x01\x02binary\xff\xfe" * 100)
    res = run("scan", "--json")
    assert res.exit_code == 0
    summary = json.loads(res.stdout)
    assert summary["failed"] == 1 and summary["new"] == 1
    assert any(s["source"] == str(bad) and "binary" in s["reason"] for s in summary["skipped"])
    assert "binary" in res.stderr


def test_unreadable_directory_is_named_and_scan_goes_on(home, run, monkeypatch):
    write_codex(home, codex_session_lines())
    locked = home / ".claude" / "projects" / "-locked"
    locked.mkdir(parents=True)
    real_listdir = os.listdir

    def listdir(path="."):  # tests run as root, where chmod 000 would not stop a read
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    res = run("scan")
    assert res.exit_code == 0
    assert str(locked) in res.stderr and "Permission denied" in res.stderr
    assert _search("데이터베이스").total >= 1


def test_file_vanishing_mid_scan(home, run, monkeypatch):
    from voyager_sessions.ingest.adapters import claude

    p = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    real_read = type(claude.ADAPTER).read

    def read(self, source, cursor=None):
        if source.path == str(p):
            p.unlink()
        return real_read(self, source, cursor)

    monkeypatch.setattr(type(claude.ADAPTER), "read", read)
    res = run("scan", "--json")
    assert res.exit_code == 0
    summary = json.loads(res.stdout)
    assert summary["failed"] == 1 and summary["new"] == 1
    assert any("vanished" in s["reason"] for s in summary["skipped"])


def test_failing_source_keeps_what_was_indexed(home, monkeypatch):
    p = write_claude(home, claude_session_lines())
    scan(data_dir())
    p.write_bytes(b"\x00" * 64)  # rewritten into garbage
    s = scan(data_dir())
    assert s.failed == 1
    assert _search("数据库").total == 1  # the old events are still searchable


def test_second_scan_while_one_runs_exits_3(home, run):
    from voyager_sessions.core.lock import writer_lock

    write_claude(home, claude_session_lines())
    with writer_lock(data_dir()):
        res = run("scan")
        assert res.exit_code == 3
        assert res.stderr.strip() == f"voyager: another scan is running (pid {os.getpid()})"
        # Searches keep working meanwhile (they skip the refresh).
        assert run("search", "--no-refresh", "数据库").exit_code in (1, 2)


def test_a_scan_lock_that_cannot_be_opened_is_one_line(home, run):
    lock = DataDir(data_dir()).lock
    lock.parent.mkdir(mode=0o700)
    lock.mkdir()  # a directory where the lock file belongs
    res = run("scan")
    assert res.exit_code == 2 and res.stderr == f"voyager: cannot open {lock}: Is a directory\n"


def test_scan_exits_1_when_nothing_could_be_read(home, run):
    bad = home / ".claude" / "projects" / "-x" / "bad.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00" * 10)
    res = run("scan")
    assert res.exit_code == 1
    assert "could be read" in res.stderr
    write_codex(home, codex_session_lines())
    assert run("scan").exit_code == 0


def test_partial_success_is_success_and_names_what_failed(home, run):
    # One source fails (binary junk), another is indexed: exit 0 in text and JSON mode alike.
    write_claude(home, claude_session_lines())
    bad = home / ".codex" / "sessions" / "2026" / "11" / "21" / "rollout-2026-11-21T08-00-00-x.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x01" * 20 + b"\n")
    res = run("scan")
    assert res.exit_code == 0, res.stderr
    assert "1 failed" in res.stdout and str(bad) in res.stderr and "could be read" not in res.stderr
    bad.write_bytes(b"\x00\x02" * 20 + b"\n")
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["failed"] == 1 and any(s["source"] == str(bad) for s in doc["skipped"])


def test_a_fifo_named_like_a_session_does_not_hang_a_scan(home):
    import subprocess

    from tests.support.run import voyager_exe

    write_claude(home, claude_session_lines())
    fifo = home / ".claude" / "projects" / "-home-dev-shop" / "stuck.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.run(voyager_exe() + ["scan"], capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert f"{fifo}: a FIFO, not a regular file; skipped" in proc.stderr
    assert _search("数据库").total == 1


def test_an_empty_file_and_an_unknown_shape_are_named(home, run):
    write_claude(home, claude_session_lines())
    empty = home / ".claude" / "projects" / "-home-dev-shop" / "empty.jsonl"
    empty.write_bytes(b"")
    wrong = home / ".codex" / "sessions" / "2026" / "11" / "21" / "rollout-2026-11-21T08-00-00-wrong.jsonl"
    wrong.parent.mkdir(parents=True)
    wrong.write_text('{"hello": "world"}\n{"foo": [1, 2]}\n')
    res = run("scan")
    assert res.exit_code == 0
    assert f"{empty}: empty file" in res.stderr
    assert f"{wrong}: no session found in it" in res.stderr
    doc = run.json("doctor", "--json")
    codex = next(p for p in doc["providers"] if p["provider"] == "codex")
    assert any(str(wrong) in n for n in codex["notes"])


# -- what a review found -------------------------------------------------------------------


def test_a_lost_index_is_refilled_by_the_next_scan(home):
    import shutil

    write_claude(home, claude_session_lines())
    scan(data_dir())
    shutil.rmtree(data_dir() / "index")
    s = scan(data_dir())
    assert s.new == 1 and _search("数据库").total == 1


def test_symlinked_session_file_is_not_a_second_source(home):
    p = write_claude(home, claude_session_lines())
    (p.parent / "link.jsonl").symlink_to(p)
    s = scan(data_dir())
    assert s.sources == 1
    assert len(_all_events()) == len(set(_all_events()))


def test_copied_lines_from_another_session_do_not_collide(home):
    lines = claude_session_lines()
    write_claude(home, lines)
    fork = "aaaaaaaa-1111-4222-8333-444444444444"
    write_claude(
        home, lines[:3] + [lines[5].replace("guard", "fork-only-guard")], sid=fork
    )  # lines keep the old sessionId
    scan(data_dir())
    assert {h.session_id for h in _search("marmalade").hits} == {f"claude:{CLAUDE_SID}", f"claude:{fork}"}
    assert _search("parse_config_v2", kinds=["assistant"]).total == 2


def test_a_transient_read_failure_is_retried(home, monkeypatch):
    p = write_claude(home, claude_session_lines())
    real_open = os.open

    def deny(path, *a, **kw):
        if str(path) == str(p):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", deny)
    assert scan(data_dir()).failed == 1
    monkeypatch.setattr(os, "open", real_open)
    s = scan(data_dir())  # the file itself did not change
    assert s.failed == 0 and _search("数据库").total == 1


def test_codex_prompt_is_not_doubled_when_a_scan_lands_between_its_two_copies(home):
    lines = codex_session_lines()
    # Cut right after the response_item copy of the prompt, before its user_message event is written.
    cut = next(i for i, line in enumerate(lines) if '"role": "user"' in line and "5432" in line) + 1
    lines[cut - 1], lines[cut - 2] = lines[cut - 2], lines[cut - 1]  # the response_item first
    path = write_codex(home, lines[: cut - 1])
    scan(data_dir())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[cut - 1 :]))
    scan(data_dir())
    assert _search("5432", kinds=["user"]).total == 1


def test_an_archived_rollout_keeps_its_session_and_checkpoint(home, run):
    p = write_codex(home, codex_session_lines())
    run("scan")
    assert (
        run(
            "checkpoint", "save", "codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "--objective", "zebraquux goal"
        ).exit_code
        == 0
    )
    archived = home / ".codex" / "archived_sessions" / p.name
    archived.parent.mkdir(parents=True)
    p.rename(archived)
    s = json.loads(run("scan", "--json").stdout)
    assert s["removed"] == 1 and s["new"] == 1
    assert _search("zebraquux").total == 1
    assert _search("데이터베이스").total >= 1
    assert run.json("list", "--json")["total"] == 1


def test_impossible_timestamps_do_not_break_list_or_search(home, run):
    lines = claude_session_lines()
    lines[1] = lines[1].replace("2026-11-20T10:00:00.000Z", "0001-01-01T00:00:00+14:00")
    write_claude(home, lines)
    run("scan")
    assert run("list").exit_code == 0
    res = run("search", "--json", "数据库")
    assert res.exit_code == 0 and json.loads(res.stdout)["hits"][0]["timestamp"] is None


def test_non_utf8_bytes_keep_the_line(home):
    lines = claude_session_lines()
    raw = "".join(lines).encode().replace(b"marmalade", b"marmalade \xff\xfe")
    p = write_claude(home, lines)
    p.write_bytes(raw)
    s = scan(data_dir())
    assert not s.skipped and _search("marmalade").total == 1


# -- a damaged index (issue 15, item 13) -----------------------------------------------------------


def _damage(how: str) -> None:
    index = DataDir(data_dir()).index
    if how == "meta":
        meta = index / "meta.json"
        meta.write_text(meta.read_text()[:200])
    else:
        next(index.glob("*.idx")).unlink()


@pytest.mark.parametrize("how", ["meta", "segment"])
def test_a_damaged_index_is_named_and_rebuilt(corpus, run, how):
    assert run("scan").exit_code == 0
    _damage(how)
    # A read that cannot rebuild says what is wrong and how to fix it, in one line (exit 2, not 4).
    res = run("search", "数据库", "--no-refresh")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "damaged" in res.stderr and "voyager scan --rebuild" in res.stderr
    doc = run.json("doctor", "--json")
    assert "damaged" in doc["health"]["index"]
    # A search with its refresh (and any scan) rebuilds it from the sources, safely: it is derived data.
    res = run("search", "数据库", "--json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["total"] == 1
    assert run.json("doctor", "--json")["health"]["index"] == "ok"


def test_an_index_of_another_version_is_named_and_rebuilt(corpus, run):
    """An upgrade that changes the index format (6: a person's words indexed again in ``said``): a read that
    cannot rebuild says so instead of calling the index damaged; the next refresh rebuilds it."""
    from voyager_sessions.search.index import INDEX_FORMAT

    assert run("scan").exit_code == 0
    version = DataDir(data_dir()).index / "voyager-index-version"
    version.write_text(INDEX_FORMAT.replace(INDEX_FORMAT.split()[0], "5", 1))
    res = run("search", "数据库", "--no-refresh")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "another version of Voyager" in res.stderr and "`voyager scan`" in res.stderr
    res = run("search", "数据库", "--json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["total"] == 1
    assert version.read_text().strip() == INDEX_FORMAT


def test_scan_rebuild_keeps_checkpoints_searchable(corpus, run):
    assert run("scan").exit_code == 0
    res = run("checkpoint", "save", CLAUDE_SID[:8], "--objective", "zeppelin migration plan")
    assert res.exit_code == 0, res.stderr
    assert run.json("search", "zeppelin", "--json", "--no-refresh")["total"] == 1
    summary = json.loads(run("scan", "--rebuild", "--json").stdout)
    assert summary["new"] == 2 and summary["events_removed"] == 0
    assert run.json("search", "zeppelin", "--json", "--no-refresh")["total"] == 1
    assert run.json("search", "数据库", "--json", "--no-refresh")["total"] == 1


def test_an_adapter_that_fails_to_discover_costs_only_its_agent(corpus, run, monkeypatch):
    from voyager_sessions.ingest.adapters import get

    assert run("scan").exit_code == 0
    codex = get("codex")

    def broken(env):
        yield from ()
        raise RuntimeError("a bug in discovery")

    monkeypatch.setattr(type(codex), "discover", lambda self, env: broken(env))
    res = run("scan", "--json")
    assert res.exit_code == 0, res.stderr
    assert "codex: adapter error while looking for sessions: RuntimeError: a bug in discovery" in res.stderr
    # What Codex had indexed stays: its sources were not all seen, so none is taken as removed.
    assert json.loads(res.stdout)["removed"] == 0
    assert _search("postgres").total >= 1 and _search("数据库").total == 1


def test_a_session_file_whose_name_is_not_utf8_costs_only_itself(corpus, run, home):
    project = os.fsencode(home / ".claude" / "projects" / "-home-dev-shop")
    with open(os.path.join(project, b"\xff\xfe-session.jsonl"), "wb") as fh:
        fh.write("".join(claude_session_lines(sid="other")).encode())
    res = run("scan", "--json")
    assert res.exit_code == 0, res.stderr
    assert "not valid UTF-8" in res.stderr
    assert _search("数据库").total == 1 and _search("postgres").total >= 1


def test_a_source_read_whole_gets_its_last_good_cursor_after_a_failed_read():
    """A failure replaces nothing, so the cursor of the last good read still describes the index: a source
    read whole (a database, a file rewritten in place) gets it back, and can report what did not change
    (mini-swe-agent's earlier runs; tests/ingest/test_mini_swe_agent.py goes through the CLI). An
    append-only file whose read failed is read again from the start, as before."""
    from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Source
    from voyager_sessions.scan.plan import encode_cursor, resume_cursor
    from voyager_sessions.store.state import SourceState

    cursor = Cursor(offset=0, next_seq=4, tail_hash="", session="x:1", state={"earlier": ["x:0"]})
    fp = Fingerprint(size=10, mtime_ns=2, inode=3)
    for status in ("ok", "retry", "error"):
        old = SourceState(
            path="/s", provider="x", size=9, mtime_ns=1, inode=3, cursor=encode_cursor(cursor), status=status
        )
        assert resume_cursor(Source(provider="x", path="/s", fingerprint=fp), "changed", old) == cursor, status
        assert resume_cursor(Source(provider="x", path="/s", fingerprint=fp, append_only=True), "changed", old) is None
