"""The state store under a long-lived process: its connection survives others opening, writing and closing."""

from __future__ import annotations

import os

from tests.conftest import claude_session_lines, codex_session_lines, run_subprocess, write_claude, write_codex
from voyager_sessions.paths import DataDir, data_dir
from voyager_sessions.store.state import StateStore


def test_a_long_lived_connection_survives_other_processes(home):
    # Opening the database again in the same process used to open() and close() the file,
    # which drops every POSIX lock the process holds on it; another process closing its
    # connection then deleted the WAL under the open one ("disk I/O error").
    claude = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    assert run_subprocess("scan", "-q").returncode == 0
    path = DataDir(data_dir()).state_db
    kept = StateStore(path)
    assert len(kept.sources()) == 2
    for round_ in range(6):
        again = StateStore(path)  # what a server does for a checkpoint or a second reader
        again.close()
        with claude.open("a") as fh:
            fh.write(claude_session_lines()[1].replace("我们的数据库迁移失败了", f"round {round_} zebra{round_}"))
        scan = run_subprocess("scan", "-q")
        assert scan.returncode == 0, scan.stderr
        search = run_subprocess("search", f"zebra{round_}", "--json", "--no-refresh")
        assert search.returncode == 0, search.stderr
        # The long-lived connection still reads, and sees what the others committed.
        rows = kept.conn.execute("SELECT count(*), sum(events) FROM sessions").fetchone()
        assert rows[0] == 2 and rows[1] >= 12 + round_
    kept.close()
    assert os.path.exists(path)


def test_a_data_dir_whose_path_holds_uri_characters_is_read_where_it_is(home, corpus, run, monkeypatch):
    """`?`, `#` and `%` in the data dir's path end an unquoted ``file:`` URI early: the read-only opens (search
    without refresh, doctor's integrity check) would read, and create, another file beside the data dir."""
    parent = home / "odd"
    parent.mkdir()
    ddir = parent / "da#ta?x%20"
    monkeypatch.setenv("VOYAGER_HOME", str(ddir))
    assert run("scan", "-q").exit_code == 0
    found = run("search", "--no-refresh", "--json", "ERR_CONN_REFUSED_42")
    assert found.exit_code == 0, found.stderr
    doctor = run("doctor")
    assert "state_db        ok" in doctor.stdout, doctor.stdout
    assert sorted(p.name for p in parent.iterdir()) == [ddir.name]
