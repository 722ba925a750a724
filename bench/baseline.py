"""The previous generation's design, rebuilt as a yardstick: SQLite FTS5 with the ``trigram`` tokenizer.

What it keeps of that design, on purpose:

* each event's body is cut to its first **600 bytes** before indexing (needles further
  in are lost, which is what the recall numbers show);
* the FTS5 ``trigram`` tokenizer (case-insensitive substring search) answers terms of
  three or more characters; shorter terms (two-character CJK words, say) fall back to
  ``LIKE '%…%'`` over the stored bodies;
* ranking is FTS5's bm25 (``ORDER BY rank``); LIKE-only queries come newest first.

Where it is given the benefit of the doubt: an external-content FTS table (bodies are
stored once), B-tree indexes on ``ts`` and ``(provider, kind, ts)`` for filters, bulk
insertion in one transaction with ``synchronous=OFF``, and no total count per query.
Query syntax understood: words, ``"phrases"``, ``prefix*`` (as a substring),
``provider:`` and ``kind:`` filters — the subset the bench's query mix uses.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from voyager_sessions.search.syntax import KIND_ALIASES

from voyager_sessions.core.model import Event

from bench.util import file_bytes

#: The old design's per-event cap, in UTF-8 bytes.
BODY_CAP_BYTES = 600

_SCHEMA = """
CREATE TABLE events (
    id INTEGER PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT NULL, provider TEXT NOT NULL,
    kind TEXT NOT NULL, ts REAL, body TEXT NOT NULL
);
CREATE VIRTUAL TABLE events_fts USING fts5(body, content='events', content_rowid='id', tokenize='trigram');
"""
_INDEXES = """
CREATE INDEX events_ts ON events(ts);
CREATE INDEX events_filter ON events(provider, kind, ts);
"""

_TOKEN = re.compile(r'"([^"]*)"|(\S+)')


def cap(text: str) -> str:
    """``text`` cut to ``BODY_CAP_BYTES`` UTF-8 bytes (never mid-character)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= BODY_CAP_BYTES:
        return text
    return data[:BODY_CAP_BYTES].decode("utf-8", "ignore")


class BaselineQuery:
    """A query translated to SQL pieces: FTS5 MATCH terms, LIKE terms, filters."""

    def __init__(self, query: str) -> None:
        self.match: list[str] = []
        self.like: list[str] = []
        self.providers: list[str] = []
        self.kinds: list[str] = []
        for m in _TOKEN.finditer(query):
            phrase, word = m.group(1), m.group(2)
            if word is not None and ":" in word:
                field, _, value = word.partition(":")
                if field == "provider":
                    self.providers.append(value)
                    continue
                if field == "kind":
                    self.kinds.extend(KIND_ALIASES.get(value, (value,)))
                    continue
            text = phrase if phrase is not None else word.rstrip("*")
            if not text:
                continue
            # Trigram needs three characters; shorter terms are the LIKE fallback.
            (self.match if len(text) >= 3 else self.like).append(text)

    def match_expr(self) -> str:
        return " AND ".join('"' + t.replace('"', '""') + '"' for t in self.match)

    def where(self, alias: str) -> tuple[list[str], list[object]]:
        clauses: list[str] = []
        args: list[object] = []
        for t in self.like:
            clauses.append(f"{alias}.body LIKE ? ESCAPE '\\'")
            args.append("%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if self.providers:
            clauses.append(f"{alias}.provider IN ({', '.join('?' * len(self.providers))})")
            args.extend(self.providers)
        if self.kinds:
            clauses.append(f"{alias}.kind IN ({', '.join('?' * len(self.kinds))})")
            args.extend(self.kinds)
        return clauses, args


class Fts5Baseline:
    """One SQLite file: ``events`` rows (bodies capped) and their FTS5 trigram index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'events'").fetchone():
            self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def size_bytes(self) -> int:
        return file_bytes(self.path)

    def build(self, batches: Iterable[list[Event]]) -> int:
        """Insert every event in one transaction, then build the filter indexes; returns events added."""
        c = self.conn
        c.execute("PRAGMA synchronous=OFF")
        c.execute("BEGIN")
        n = 0
        for batch in batches:
            rows = [
                (n + k + 1, ev.session, ev.seq, ev.session.partition(":")[0], ev.kind, ev.ts, cap(ev.text))
                for k, ev in enumerate(batch)
            ]
            c.executemany(
                "INSERT INTO events (id, session, seq, provider, kind, ts, body) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
            )
            c.executemany("INSERT INTO events_fts (rowid, body) VALUES (?, ?)", [(r[0], r[6]) for r in rows])
            n += len(rows)
        for stmt in _INDEXES.strip().splitlines():
            c.execute(stmt)
        c.execute("COMMIT")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.execute("PRAGMA synchronous=NORMAL")
        return n

    def search(self, query: str, *, limit: int = 20, sessions: bool = False) -> list[tuple[str, int, str]]:
        """(session, seq, snippet) of the best ``limit`` hits; in ``sessions`` mode one row per session."""
        q = BaselineQuery(query)
        clauses, args = q.where("e")
        if q.match:
            where = " AND ".join(["events_fts MATCH ?"] + clauses)
            if sessions:
                sql = (
                    f"SELECT e.session, min(e.seq), count(*), min(events_fts.rank) AS best FROM events_fts "
                    f"JOIN events e ON e.id = events_fts.rowid WHERE {where} "
                    "GROUP BY e.session ORDER BY best LIMIT ?"
                )
                return [(r[0], r[1], "") for r in self.conn.execute(sql, [q.match_expr(), *args, limit])]
            sql = (
                f"SELECT e.session, e.seq, snippet(events_fts, 0, '[', ']', '…', 16) FROM events_fts "
                f"JOIN events e ON e.id = events_fts.rowid WHERE {where} ORDER BY events_fts.rank LIMIT ?"
            )
            return list(self.conn.execute(sql, [q.match_expr(), *args, limit]))
        where = " AND ".join(clauses) or "1"
        if sessions:
            sql = (
                f"SELECT e.session, max(e.seq), count(*) FROM events e WHERE {where} "
                f"GROUP BY e.session ORDER BY max(e.ts) DESC LIMIT ?"
            )
            return [(r[0], r[1], "") for r in self.conn.execute(sql, [*args, limit])]
        sql = f"SELECT e.session, e.seq, substr(e.body, 1, 160) FROM events e WHERE {where} ORDER BY e.ts DESC LIMIT ?"
        return list(self.conn.execute(sql, [*args, limit]))
