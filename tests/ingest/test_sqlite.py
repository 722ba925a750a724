"""Provider databases read through ingest/sqlite.py: one corrupt value costs that value only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
    assert [r["text"] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == ["first", "A\ufffd\ufffdB", "third"]
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
