"""The checkpoint database's schema and statements: migrations, SQL text, row decoding, snapshot names.

Tables (see ``m001_initial``)::

    projects(id, directory, created_at)
    sessions(id, project_id -> projects, created_at, UNIQUE(id, project_id))
    checkpoints(session_id PK, project_id, <payload columns>, schema_version, based_on,
                created_at, updated_at, FK(session_id, project_id) -> sessions(id, project_id))
    snapshots(id, session_id, project_id, name, kind, captured_at, payload, schema_version,
              restored_at, UNIQUE(session_id, name), FK(session_id, project_id) -> sessions)

Migrations only move forward, each in one transaction (:func:`voyager_sessions.store.db.connect`
runs them); a new one is appended to ``MIGRATIONS`` and never edits an old one.
"""

from __future__ import annotations

import itertools
from typing import Any
import os
import sqlite3
import time

import msgspec

from voyager_sessions.store.checkpoints.model import Checkpoint
from voyager_sessions.store.db import Migration

MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    # TEXT PRIMARY KEY columns are declared NOT NULL because SQLite, for historical
    # reasons, otherwise accepts NULL in them.
    db.execute(
        """
        CREATE TABLE projects (
            id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
            directory TEXT,
            created_at REAL NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
            project_id TEXT NOT NULL REFERENCES projects(id),
            created_at REAL NOT NULL,
            UNIQUE (id, project_id)
        )
        """
    )
    # Lists are JSON text: opaque task state, read and written whole; tables for them
    # would add joins and no integrity. `based_on` is the id of the snapshot holding the
    # current payload (no FK: it is a position in the history, kept alive by pruning).
    db.execute(
        """
        CREATE TABLE checkpoints (
            session_id TEXT PRIMARY KEY NOT NULL,
            project_id TEXT NOT NULL,
            title TEXT,
            objective TEXT,
            status TEXT,
            summary TEXT,
            current_plan TEXT,
            completed_steps TEXT NOT NULL DEFAULT '[]',
            next_steps TEXT NOT NULL DEFAULT '[]',
            blockers TEXT NOT NULL DEFAULT '[]',
            files_touched TEXT NOT NULL DEFAULT '[]',
            notes TEXT,
            schema_version INTEGER NOT NULL,
            based_on INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            FOREIGN KEY (session_id, project_id) REFERENCES sessions(id, project_id) ON DELETE CASCADE
        )
        """
    )
    db.execute(
        """
        CREATE TABLE snapshots (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            project_id TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('auto', 'pre-restore', 'manual')),
            captured_at REAL NOT NULL,
            payload TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            restored_at REAL,
            UNIQUE (session_id, name),
            FOREIGN KEY (session_id, project_id) REFERENCES sessions(id, project_id) ON DELETE CASCADE
        )
        """
    )
    # History order is id order; this index serves listing and pruning without a sort.
    db.execute("CREATE INDEX snapshots_history ON snapshots(session_id, id)")


# -- SQL, kept as constants so sqlite3's statement cache prepares each once ---------------

ROW_COLS = (
    "project_id, title, objective, status, summary, current_plan, completed_steps, next_steps, "
    "blockers, files_touched, notes, schema_version, created_at, updated_at"
)
LOAD = f"SELECT {ROW_COLS} FROM checkpoints WHERE session_id = ?"
LOAD_FOR_WRITE = f"SELECT {ROW_COLS}, based_on FROM checkpoints WHERE session_id = ?"
SESSION_PROJECT = "SELECT project_id FROM sessions WHERE id = ?"
UPSERT = """
    INSERT INTO checkpoints (session_id, project_id, title, objective, status, summary, current_plan,
        completed_steps, next_steps, blockers, files_touched, notes, schema_version, based_on, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET
        title = excluded.title, objective = excluded.objective, status = excluded.status,
        summary = excluded.summary, current_plan = excluded.current_plan,
        completed_steps = excluded.completed_steps, next_steps = excluded.next_steps,
        blockers = excluded.blockers, files_touched = excluded.files_touched, notes = excluded.notes,
        schema_version = excluded.schema_version, based_on = excluded.based_on, updated_at = excluded.updated_at
"""
INSERT_SNAPSHOT = """
    INSERT INTO snapshots (session_id, project_id, name, kind, captured_at, payload, schema_version)
    VALUES (?, ?, ?, ?, ?, ?, ?)
"""
# Keep: the newest `limit` snapshots, the newest pre-restore one (undo must survive),
# the one the current state is based on (so every reachable state stays in history),
# and manual ones (named by a person).
PRUNE = """
    DELETE FROM snapshots
    WHERE session_id = ?1 AND kind != 'manual'
      AND id < (SELECT min(id) FROM (SELECT id FROM snapshots WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2))
      AND id != coalesce((SELECT max(id) FROM snapshots WHERE session_id = ?1 AND kind = 'pre-restore'), -1)
      AND id != coalesce(?3, -1)
"""
SNAPSHOT_COLS = "id, name, kind, captured_at, restored_at, payload"


def row_to_checkpoint(session_id: str, r: tuple[Any, ...]) -> Checkpoint:
    """A ``checkpoints`` row (the ``ROW_COLS``, in order) as a :class:`Checkpoint`."""
    dec = _list_decoder.decode
    return Checkpoint(
        session_id=session_id,
        project_id=r[0],
        title=r[1],
        objective=r[2],
        status=r[3],
        summary=r[4],
        current_plan=r[5],
        completed_steps=dec(r[6]),
        next_steps=dec(r[7]),
        blockers=dec(r[8]),
        files_touched=dec(r[9]),
        notes=r[10],
        schema_version=r[11],
        created_at=r[12],
        updated_at=r[13],
    )


_list_decoder = msgspec.json.Decoder(tuple[str, ...])
_seq = itertools.count(1)


def snapshot_name(kind: str) -> str:
    """A fresh snapshot name: ``<kind>-<ms>-<pid><seq>``."""
    # A bare timestamp is not unique: two writers in one millisecond would collide.
    # pid + a per-process counter is; the counter is fixed-width so "pid 12, seq 3"
    # and "pid 1, seq 23" cannot spell the same digits.
    return f"{kind}-{time.time_ns() // 1_000_000}-{os.getpid()}{next(_seq) % 10_000:04d}"
