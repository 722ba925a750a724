"""A damaged or locked ``state.db`` (issue #38, item 9): one line that names the fix, and a way out.

The probe: a bad header ended every command, search included (the index intact), with "file is not a
database"; damaged pages with "internal error"; and a ``state.db`` another process kept locked made
``voyager search`` answer after 278 s. ``state.db`` is derived data: a scan sets a damaged one aside
(privately, beside it) and rebuilds it, and the index, from the sources, saying so in one line.
``checkpoints.db`` is not derived: it is never set aside.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run import run_subprocess
from tests.support.sessions import (
    CLAUDE_SID,
    CODEX_SID,
    claude_session_lines,
    codex_session_lines,
    write_claude,
    write_codex,
)

SESSIONS = sorted([f"claude:{CLAUDE_SID}", f"codex:{CODEX_SID}"])


def _state(home: Path) -> Path:
    return home / "voyager-data" / "state.db"


def _found(res: subprocess.CompletedProcess) -> list[str]:
    return sorted({h["session_id"] for h in json.loads(res.stdout)["hits"]})


def _files(home: Path) -> list[Path]:
    return [write_claude(home, claude_session_lines()), write_codex(home, codex_session_lines())]


def _scanned(home: Path) -> None:
    _files(home)
    assert run_subprocess("scan", "-q").returncode == 0


def _bad_header(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.write(b"garbage!garbage!")


def _bad_pages(path: Path) -> None:
    """Every page past the first (the header and schema stay readable) with its start overwritten."""
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        for offset in range(4096, size, 4096):
            fh.seek(offset)
            fh.write(b"\xff" * 400)


@pytest.mark.parametrize("damage", [_bad_header, _bad_pages], ids=["header", "pages"])
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_damaged_state_db_is_set_aside_and_rebuilt_by_the_next_search(home: Path, damage) -> None:
    _scanned(home)
    state = _state(home)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')",
            str(state),
        ],
        check=True,
    )
    damage(state)
    damaged = state.read_bytes()

    # A command that only reads says what is wrong and what mends it, in one line.
    listed = run_subprocess("list")
    assert listed.returncode == 2 and listed.stderr.count("\n") == 1, listed.stderr
    assert "state.db is damaged" in listed.stderr and "voyager scan --rebuild" in listed.stderr
    assert "internal error" not in listed.stderr

    # The next search's refresh mends it: one line says what was done, and the search finds everything.
    res = run_subprocess("search", "parse_config_v2 OR ERR_CONN_REFUSED_42", "--json")
    assert res.returncode == 0, res.stderr
    assert _found(res) == SESSIONS
    said = [line for line in res.stderr.splitlines() if "state.db" in line]
    assert len(said) == 1 and "set aside as state.db.damaged" in said[0] and "rebuilding" in said[0], res.stderr
    aside = state.with_name("state.db.damaged")
    assert aside.read_bytes() == damaged  # kept as it was, for whoever wants to look
    assert stat.S_IMODE(aside.stat().st_mode) == 0o600
    assert run_subprocess("stats").returncode == 0
    again = run_subprocess("search", "parse_config_v2 OR ERR_CONN_REFUSED_42", "--json")
    assert again.returncode == 0 and _found(again) == SESSIONS and "state.db" not in again.stderr


@pytest.mark.slow
def test_scan_rebuild_finds_damage_no_query_would_meet(home: Path) -> None:
    """A damaged page a scan does not read is found by ``scan --rebuild`` (SQLite's quick check) and set aside."""
    _scanned(home)
    state = _state(home)
    conn = sqlite3.connect(state)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("CREATE TABLE filler (x)")  # pages at the end no scan reads
    conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 900,) for _ in range(50)])
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(state, "r+b") as fh:
        fh.seek(state.stat().st_size - 4096 + 8)
        fh.write(b"\xff" * 64)
    res = run_subprocess("scan", "--rebuild")
    assert res.returncode == 0, res.stderr
    assert "set aside as state.db.damaged" in res.stderr
    assert (
        _found(run_subprocess("search", "parse_config_v2 OR ERR_CONN_REFUSED_42", "--json", "--no-refresh")) == SESSIONS
    )


def test_a_damaged_checkpoints_db_is_named_never_set_aside(home: Path) -> None:
    _scanned(home)
    checkpoints = home / "voyager-data" / "checkpoints.db"
    checkpoints.write_bytes(b"not sqlite at all" * 100)
    res = run_subprocess("checkpoint", "list")
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "checkpoints.db is damaged" in res.stderr and "only copy" in res.stderr
    assert checkpoints.read_bytes() == b"not sqlite at all" * 100
    assert not checkpoints.with_name("checkpoints.db.damaged").exists()
    assert _found(run_subprocess("search", "parse_config_v2 OR ERR_CONN_REFUSED_42", "--json")) == SESSIONS


def test_a_state_db_locked_elsewhere_costs_one_busy_timeout_not_fifty(home: Path, monkeypatch) -> None:
    """The probe's search answered after 278 s: each write retried 50 times, each retry waiting out the 5 s busy
    timeout. Counted in retries here (no wall time): a write gives up within one busy timeout."""
    from voyager_sessions.core.errors import Busy
    from voyager_sessions.store import db

    _scanned(home)
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(_state(home), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    sleeps = 0
    real_sleep = db.time.sleep

    def counting(seconds: float) -> None:
        nonlocal sleeps
        sleeps += 1
        real_sleep(seconds)

    monkeypatch.setattr(db.time, "sleep", counting)
    try:
        from voyager_sessions.store.state import StateStore

        store = StateStore(_state(home))
        with pytest.raises(Busy, match="state.db is locked by another process"):
            store.set_meta("probe", "1")
        store.close()
    finally:
        holder.close()
    assert sleeps < 10, sleeps  # 49 before


@pytest.mark.slow
def test_a_locked_state_db_answers_search_from_the_index_and_scan_exits_3(home: Path) -> None:
    """Through the CLI: another process holds ``state.db``'s write lock; search answers from what is indexed, with
    one line saying why it was not refreshed; scan exits 3 with one line."""
    _scanned(home)
    for path in _files(home):
        os.utime(path)  # something to refresh: the search's scan must write
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(120)",
            str(_state(home)),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        res = run_subprocess("search", "parse_config_v2 OR ERR_CONN_REFUSED_42", "--json")
        assert res.returncode == 0 and _found(res) == SESSIONS, res.stderr
        assert "not refreshed" in res.stderr and "locked by another process" in res.stderr
        scanned = run_subprocess("scan")
        assert scanned.returncode == 3 and scanned.stderr.count("\n") == 1, scanned.stderr
        assert "locked by another process" in scanned.stderr
    finally:
        holder.kill()
        holder.wait()
