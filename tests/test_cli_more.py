"""doctor, watch, stats, the per-event cap, and context windows, through the real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.conftest import CLAUDE_SID, claude_session_lines, voyager_exe, write_claude


def test_event_text_cap_and_show_reads_the_source(home, run, monkeypatch):
    monkeypatch.setenv("VOYAGER_MAX_EVENT_CHARS", "1024")
    lines = claude_session_lines()
    big = "early_token " + "filler " * 1000 + " late_token_beyond_cap"
    rec = json.loads(lines[4])
    rec["message"]["content"][0]["content"] = big
    lines[4] = json.dumps(rec) + "\n"
    write_claude(home, lines)
    run("scan")
    assert run("search", "early_token").exit_code == 0
    assert run("search", "late_token_beyond_cap").exit_code == 1  # beyond the documented cap
    snippet_text = run.json("search", "--json", "-C", "0", "early_token")["hits"][0]["snippet"]
    assert "late_token_beyond_cap" not in snippet_text
    tl = run.json("show", "--json", CLAUDE_SID)
    ev = next(e for e in tl["events"] if e["kind"] == "tool_result")
    assert ev["text"] == big  # the whole text, read back from the source


def test_context_and_around(corpus, run):
    run("scan")
    hit = run.json("search", "--json", "-C", "1", "marmalade")["hits"][0]
    seqs = [e["seq"] for e in hit["context"]]
    assert seqs == [hit["seq"] - 1, hit["seq"], hit["seq"] + 1]
    tl = run.json("show", "--json", "--around", "3", "-C", "1", CLAUDE_SID)
    assert [e["seq"] for e in tl["events"]] == [2, 3, 4]
    text = run("search", "-C", "1", "--color", "never", "marmalade").stdout
    assert "> #" in text


def test_sort_recent_offset_total(corpus, run):
    run("scan")
    q = "the OR postgres OR migration OR 数据库 OR pytest"
    full = run.json("search", "--json", "--sort", "recent", q)
    ts = [h["timestamp"] for h in full["hits"]]
    assert ts == sorted(ts, reverse=True)
    page = run.json("search", "--json", "--sort", "recent", "--limit", "2", "--offset", "2", q)
    assert page["total"] == full["total"] and [h["seq"] for h in page["hits"]] == [h["seq"] for h in full["hits"][2:4]]


def test_color_only_when_asked(corpus, run, monkeypatch):
    run("scan")
    assert "\x1b[" in run("search", "--color", "always", "数据库").stdout
    assert "\x1b[" not in run("search", "数据库").stdout  # piped: plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("search", "--color", "auto", "数据库").stdout


def test_stats_and_doctor(corpus, home, run):
    run("scan")
    st = run.json("stats", "--json")
    assert st["providers"]["claude"]["sessions"] == 1 and st["index_events"] > 0
    bad = home / ".claude" / "projects" / "-home-dev-shop" / "junk.jsonl"
    bad.write_bytes(b"\x00\xff" * 50)
    run("scan")
    doc = run.json("doctor", "--json")
    claude = next(p for p in doc["providers"] if p["provider"] == "claude")
    assert claude["sources"] == 2 and claude["indexed_sessions"] == 1
    assert any(str(bad) in f and "binary" in f for f in claude["failed_sources"])
    assert doc["health"]["state_db"] == "ok" and doc["health"]["index"] == "ok"
    text = run("doctor").stdout
    assert "cannot use" in text and str(home / ".claude" / "projects") in text


def test_watch_picks_up_an_appended_message(home, tmp_path):
    lines = claude_session_lines()
    path = write_claude(home, lines[:3])
    env = dict(os.environ)
    subprocess.run(voyager_exe() + ["scan", "-q"], env=env, check=True, timeout=60)
    # faulthandler: if watch ever hangs, SIGABRT makes it print every thread's stack.
    err = tmp_path / "watch.stderr"
    # SIGINT back to its default in the child: a test run started in the background
    # (``cmd &`` in a script) inherits SIGINT ignored, and Python then keeps ignoring it,
    # as a background job should; Ctrl-C from a terminal is what this test stands for.
    with err.open("wb") as err_fh:
        proc = subprocess.Popen(voyager_exe() + ["watch", "--interval", "0.3", "-q"],
                                env={**env, "PYTHONFAULTHANDLER": "1"}, stdout=subprocess.DEVNULL, stderr=err_fh,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(0.5)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(lines[5])
        deadline = time.monotonic() + 20
        found = False
        while time.monotonic() < deadline and not found:
            r = subprocess.run(voyager_exe() + ["search", "--no-refresh", "--json", "guard"], env=env,
                               capture_output=True, text=True, timeout=60)
            found = r.returncode == 0
            time.sleep(0.2)
        assert found, "watch did not index the appended message"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            proc.wait(timeout=20)
            pytest.fail("watch ignored SIGINT for 20 s; its stacks:\n" + err.read_text(errors="replace")[-6000:])
