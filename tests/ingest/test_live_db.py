"""Reading a rollback-journal database while its agent writes (issue #28, item 4).

Goose keeps its sessions in ``sessions.db`` in SQLite's default rollback-journal mode. A scan
during the agent's write transaction must index only committed rows: a row of a transaction
still open (even with its pages already spilled into the database file) is never searchable,
a database locked past the busy wait is a notice and a retry on the next scan (exit 0, the
source kept as it was), and nothing is created beside the agent's file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.support.samples.goose import MAIN, messages, text, write_db
from tests.support.scanning import hits, scan
from voyager_sessions.ingest import sqlite as ingest_sqlite

PENDING = "UNCOMMITTED_ROW_MARKER"


@pytest.fixture
def db(home, monkeypatch) -> Path:
    monkeypatch.setattr(ingest_sqlite, "BUSY_TIMEOUT_S", 0.2)
    path = write_db(home, [MAIN], [m for m in messages() if m[0] == MAIN["id"]])
    assert open(path, "rb").read(20)[18] == 1  # a rollback journal, not WAL
    return path


def _writer(path: Path, *, spill: bool) -> sqlite3.Connection:
    """An agent in the middle of a write: a row inserted, not committed. ``spill``: with a one-page
    cache, so its pages are already written into the database file (under an EXCLUSIVE lock)."""
    conn = sqlite3.connect(path, isolation_level=None)
    if spill:
        conn.execute("PRAGMA cache_size=1")
    conn.execute("BEGIN")
    big = [text(f"{PENDING} " + "filler words " * 2000)]
    for _ in range(20 if spill else 1):
        conn.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES (?, 'user', ?, 1793000050, '{\"userVisible\":true,\"agentVisible\":true}')",
            (MAIN["id"], json.dumps(big)),
        )
    return conn


def test_rows_of_an_open_transaction_are_not_indexed_until_committed(home, run, db):
    listing = sorted(os.listdir(db.parent))
    writer = _writer(db, spill=False)
    try:
        doc = scan(run)
        assert doc["failed"] == 0 and not hits(run, PENDING)
        assert hits(run, "chmod")  # the committed rows were read
        writer.execute("COMMIT")
    finally:
        writer.close()
    scan(run)
    assert hits(run, PENDING)
    assert sorted(os.listdir(db.parent)) == listing  # no -journal, -wal or -shm left by a read


def test_a_database_locked_mid_write_is_retried_not_half_read(home, run, db):
    """Pages of an open transaction already in the file: the scan waits, gives up, says so, exits 0."""
    writer = _writer(db, spill=True)
    try:
        res = run("scan", "--json")
        assert not hits(run, PENDING)
        assert res.exit_code == 0, res.stderr
        doc = json.loads(res.stdout)
        assert "locked" in res.stderr and doc["retrying"] == 1, res.stderr
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    # The next scan reads it again although it looks unchanged, and what was rolled back never shows.
    again = scan(run)
    assert again["failed"] == 0 and again["sessions"] == 1
    assert hits(run, "chmod") and not hits(run, PENDING)


def test_a_transaction_committed_while_locked_is_read_on_the_next_scan(home, run, db):
    writer = _writer(db, spill=True)
    try:
        assert run("scan").exit_code == 0
        writer.execute("COMMIT")
    finally:
        writer.close()
    scan(run)
    assert hits(run, PENDING)
