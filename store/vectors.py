"""Meaning vectors in ``meaning.db``: one vector a session, and which version of the session it describes.

The embedder (``voyager_sessions.scan.meaning``) writes a session's vector together with
the session's *stamp* as ``state.db`` had it when the text was read (its event count and
last activity); a vector is used only while that stamp is still the session's stamp in
``state.db``, so a session that changed since is never ranked by what it said before, even
when the process that was to replace its vector was killed (its new vector is simply
missing, and counted so). The scan also forgets a changed session's vector right after
the index commit and before the state rows that describe it, which covers a change that
keeps the count and the last time.

A database of its own (not a table of ``state.db``): it is derived from the index by an
optional model, written by a background thread while a scan may hold ``state.db``'s
writer, and deleting it only costs the time to embed again. ``state.db`` is read through
a read-only connection of its own (never attached: a write transaction would then lock it
too, and a ``file:`` URI in ``ATTACH`` is honoured only by some SQLite builds), and the
stamps are compared here. Vectors are stored as bytes (``search.embed`` owns their
encoding); nothing here imports numpy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from voyager_sessions.core.errors import StoreError
from voyager_sessions.store.db import BUSY_TIMEOUT_MS, Migration, connect, readonly_uri, transaction

MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


@migration
def m001_vectors(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE vectors (
            session_id TEXT PRIMARY KEY,
            events INTEGER NOT NULL,
            updated REAL,
            model TEXT NOT NULL,
            vec BLOB NOT NULL
        )
        """
    )


#: A session's stamp as ``state.db`` has it: (event count, last activity).
Stamp = tuple[int, float | None]


class VectorStore:
    """``meaning.db``, and ``state.db`` read-only beside it; one thread at a time uses it.

    ``readonly``: a searcher's connection (it never creates or migrates the file).
    """

    def __init__(self, path: Path, state_db: Path, *, readonly: bool = False, lendable: bool = False) -> None:
        self.path = path
        self.conn = connect(path, MIGRATIONS, readonly=readonly, check_same_thread=not lendable)
        try:
            self.state = sqlite3.connect(
                readonly_uri(state_db), uri=True, isolation_level=None, check_same_thread=not lendable
            )
            self.state.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        except sqlite3.Error:
            self.conn.close()
            raise

    @classmethod
    def open_if_exists(
        cls, path: Path, state_db: Path, *, readonly: bool = False, lendable: bool = False
    ) -> VectorStore | None:
        """The store, or None when no vector was ever written (nothing to read, nothing to forget).

        A reader also gets None for a file the embedder has just created and not yet given its tables (or one a
        newer Voyager wrote): no vector it can use is there."""
        if not path.exists() or not state_db.exists():
            return None
        try:
            return cls(path, state_db, readonly=readonly, lendable=lendable)
        except StoreError:
            if readonly:
                return None
            raise

    def close(self) -> None:
        self.conn.close()
        self.state.close()

    def data_version(self) -> tuple[int, int]:
        """Changes whenever another connection commits to either database (a cache's key)."""
        return (
            self.conn.execute("PRAGMA data_version").fetchone()[0],
            self.state.execute("PRAGMA data_version").fetchone()[0],
        )

    def _sessions(self) -> dict[str, tuple[Stamp, float]]:
        """Every session with events: id -> (stamp, recency)."""
        rows = self.state.execute("SELECT id, events, updated, started FROM sessions WHERE events > 0")
        return {sid: ((events, updated), updated or started or 0.0) for sid, events, updated, started in rows}

    def _vector_stamps(self, model: str) -> dict[str, Stamp]:
        rows = self.conn.execute("SELECT session_id, events, updated FROM vectors WHERE model = ?", (model,))
        return {sid: (events, updated) for sid, events, updated in rows}

    def pending(self, model: str) -> list[tuple[str, Stamp]]:
        """Sessions with no vector of ``model`` for their current stamp: (id, stamp), newest first
        (people search recent work first)."""
        have = self._vector_stamps(model)
        todo = [(sid, stamp, recency) for sid, (stamp, recency) in self._sessions().items() if have.get(sid) != stamp]
        todo.sort(key=lambda t: (-t[2], t[0]))
        return [(sid, stamp) for sid, stamp, _ in todo]

    def stamps(self, ids: Iterable[str]) -> dict[str, Stamp]:
        """The current stamps of ``ids`` in ``state.db`` (a session gone has none)."""
        out: dict[str, Stamp] = {}
        ids = list(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = f"SELECT id, events, updated FROM sessions WHERE id IN ({', '.join('?' * len(chunk))})"
            for sid, events, updated in self.state.execute(sql, chunk):
                out[sid] = (events, updated)
        return out

    def put(self, model: str, rows: Iterable[tuple[str, Stamp, bytes]]) -> None:
        """Store each (session id, the stamp its text was read at, vector bytes), in one transaction."""
        with transaction(self.conn) as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors (session_id, events, updated, model, vec) VALUES (?, ?, ?, ?, ?)",
                [(sid, st[0], st[1], model, vec) for sid, st, vec in rows],
            )

    def forget(self, ids: Iterable[str]) -> None:
        """Drop the vectors of ``ids`` (sessions that changed or went)."""
        rows = [(sid,) for sid in ids]
        if rows:
            with transaction(self.conn) as db:
                db.executemany("DELETE FROM vectors WHERE session_id = ?", rows)

    def prune(self, model: str) -> int:
        """Drop the vectors of sessions the state no longer has, and of other models; how many went."""
        known = self._sessions()
        gone = [
            (sid,)
            for sid, m in self.conn.execute("SELECT session_id, model FROM vectors")
            if m != model or sid not in known
        ]
        if gone:
            with transaction(self.conn) as db:
                db.executemany("DELETE FROM vectors WHERE session_id = ?", gone)
        return len(gone)

    def fresh(self, model: str) -> tuple[list[str], list[bytes]]:
        """Every usable vector of ``model`` (its stamp is still its session's): session ids and vectors' bytes."""
        ids, stamps, vecs = self.every(model)
        keep = self.usable(ids, stamps)
        return [sid for sid, ok in zip(ids, keep) if ok], [vec for vec, ok in zip(vecs, keep) if ok]

    def every(self, model: str) -> tuple[list[str], list[Stamp], list[bytes]]:
        """Every stored vector of ``model``, usable or not: session ids, the stamps they were computed at, bytes
        (what changes only with ``meaning.db``: a reader keeps it while only ``state.db`` moves, see ``usable``)."""
        ids: list[str] = []
        stamps: list[Stamp] = []
        vecs: list[bytes] = []
        rows = self.conn.execute(
            "SELECT session_id, events, updated, vec FROM vectors WHERE model = ? ORDER BY rowid", (model,)
        )
        for sid, events, updated, vec in rows:
            ids.append(sid)
            stamps.append((events, updated))
            vecs.append(vec)
        return ids, stamps, vecs

    def usable(self, ids: Sequence[str], stamps: Sequence[Stamp]) -> list[bool]:
        """Per vector (its session ``ids[i]``, computed at ``stamps[i]``): whether that is still its session's
        stamp, in a session with events."""
        rows = self.state.execute("SELECT id, events, updated FROM sessions WHERE events > 0")
        known = {sid: (events, updated) for sid, events, updated in rows}
        return [known.get(sid) == stamp for sid, stamp in zip(ids, stamps)]

    def counts(self, model: str) -> tuple[int, int]:
        """(sessions with a usable vector of ``model``, sessions with events the state knows)."""
        known = self._sessions()
        have = self._vector_stamps(model)
        return sum(1 for sid, (stamp, _) in known.items() if have.get(sid) == stamp), len(known)
