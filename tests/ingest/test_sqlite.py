"""Provider databases read through ingest/sqlite.py: one corrupt value costs that value only, and nothing
beside a database is changed or created."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from voyager_sessions.ingest.sqlite import connect_readonly, open_store


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO messages (text) VALUES ('first'), (CAST(X'41FFFE42' AS TEXT)), ('third')")
    conn.commit()
    conn.close()
    return db


def test_a_text_cell_that_is_not_utf8_costs_only_its_bad_bytes(tmp_path: Path) -> None:
    # sqlite3's default raised OperationalError ("Could not decode to UTF-8") for the whole query:
    # every adapter reading a store with one such cell lost the store.
    db = _db(tmp_path)
    conn = connect_readonly(db)
    assert [r["text"] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "first",
        "A\ufffd\ufffdB",
        "third",
    ]
    conn.close()
    opened = open_store(str(db), "Test", {"messages": frozenset({"text"})})
    assert isinstance(opened, tuple) and opened[0].execute("SELECT count(*) FROM messages").fetchone()[0] == 3
    opened[0].close()


def test_strict_text_is_still_available(tmp_path: Path) -> None:
    conn = connect_readonly(_db(tmp_path), lenient_text=False)
    try:
        conn.execute("SELECT text FROM messages").fetchall()
    except sqlite3.OperationalError as exc:
        assert "UTF-8" in str(exc)
    else:
        raise AssertionError("a strict connection decoded invalid UTF-8")
    finally:
        conn.close()


def _wal_db(tmp_path: Path) -> Path:
    db = tmp_path / "wal.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES ('kept')")
    conn.commit()
    conn.close()  # a clean close folds the WAL in and removes -wal and -shm
    db.chmod(0o644)
    return db


@pytest.mark.parametrize("odd", ["empty", "fifo", "directory"])
def test_a_wal_that_holds_no_pages_is_left_alone(tmp_path: Path, odd: str) -> None:
    # SQLite opened an empty -wal (chmod-ing it to the database's mode, and creating -shm beside it),
    # and a FIFO by that name the same way: a provider's files changed by a read.
    db = _wal_db(tmp_path)
    wal = tmp_path / "wal.db-wal"
    if odd == "empty":
        wal.touch()
    elif odd == "fifo":
        os.mkfifo(wal)
    else:
        wal.mkdir()
    os.chmod(wal, 0o700 if odd == "directory" else 0o600)
    before = sorted(os.listdir(tmp_path)), os.lstat(wal).st_mode
    conn = connect_readonly(db)
    assert [r[0] for r in conn.execute("SELECT x FROM t")] == ["kept"]
    conn.close()
    assert (sorted(os.listdir(tmp_path)), os.lstat(wal).st_mode) == before
