"""Checkpoints: the task state a person or an agent saves for a session, with history and undo.

This module owns ``<data dir>/checkpoints.db``. It is a separate file from the
index's ``state.db`` on purpose: the index can always be rebuilt from provider files,
checkpoints cannot (they are user-authored), so resetting the index must never touch
them.

Tables (see ``m001_initial``)::

    projects(id, directory, created_at)
    sessions(id, project_id -> projects, created_at, UNIQUE(id, project_id))
    checkpoints(session_id PK, project_id, <payload columns>, schema_version, based_on,
                created_at, updated_at, FK(session_id, project_id) -> sessions(id, project_id))
    snapshots(id, session_id, project_id, name, kind, captured_at, payload, schema_version,
              restored_at, UNIQUE(session_id, name), FK(session_id, project_id) -> sessions)

Guarantees (each pinned by a test in ``tests/store/test_checkpoints.py``):

1. Session isolation: every statement is scoped by a validated session id; an empty,
   non-string or malformed id raises :class:`CheckpointError` before any SQL runs.
2. Atomic read-merge-write: :meth:`CheckpointStore.save` reads, merges and writes in one
   ``BEGIN IMMEDIATE`` transaction, so concurrent writers never lose each other's fields.
3. No phantom progress: a save that changes nothing writes nothing.
4. Undo survives pruning: pruning keeps the newest ``history_limit`` snapshots, the
   newest pre-restore snapshot and the snapshot the current state came from.
5. Snapshot names ``auto-<ms>-<pid><seq>`` are unique per session (and UNIQUE in SQL).
6. Hand-off files are derived from committed rows, never read back, and their names
   cannot leave the directory they are written to.
7. A row cannot claim a project its session does not belong to (composite foreign key).
8. The schema is versioned by ``PRAGMA user_version``; a newer database is refused.

History model: every changed save records the version it wrote as an ``auto``
snapshot, so the snapshot list is the checkpoint's history and ``based_on`` points at
the snapshot the current state equals. ``restore`` first copies the current state into
a ``pre-restore`` snapshot, which is what ``undo`` puts back.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from voyager_sessions.model import SCHEMA_VERSION
from voyager_sessions.store.db import BusyError, Migration, StoreError, connect, like_prefix, transaction

__all__ = [
    "PAYLOAD_VERSION",
    "Checkpoint",
    "CheckpointError",
    "CheckpointList",
    "CheckpointPatch",
    "CheckpointPayload",
    "CheckpointStore",
    "CheckpointSummary",
    "ClearResult",
    "HandoffResult",
    "RestoreResult",
    "SaveResult",
    "Snapshot",
    "SnapshotList",
    "StatusResult",
    "checkpoint_text",
    "decode_payload",
    "default_path",
    "handoff_filename",
    "merge",
    "render_handoff",
]

#: Version of the payload shape stored in rows and snapshots (and accepted by ``--from-json``).
PAYLOAD_VERSION = 1

#: Snapshots kept per session besides the protected ones (see ``_PRUNE``).
DEFAULT_HISTORY_LIMIT = 20

#: A checkpoint is a note about a task, not a log: a cap keeps loads cheap and catches
#: a mistaken ``--from-json`` of some unrelated large file.
MAX_PAYLOAD_BYTES = 1 << 20

_MAX_ID_CHARS = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

SnapshotKind = Literal["auto", "pre-restore", "manual"]


class CheckpointError(StoreError):
    """A request the checkpoint store refuses: a bad id, nothing to restore, a bad document."""


# ---------------------------------------------------------------------------
# Structs: the one schema for rows, snapshots, the CLI's JSON and --from-json.
# ---------------------------------------------------------------------------


class CheckpointPayload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """The user-authored part of a checkpoint: what a snapshot freezes and ``--from-json`` replaces.

    Text fields are ``None`` when unset; list fields are tuples so a payload compares
    by value (that comparison is how an unchanged save is detected).
    """

    title: str | None = None
    objective: str | None = None
    status: str | None = None
    summary: str | None = None
    current_plan: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    files_touched: tuple[str, ...] = ()
    notes: str | None = None


PAYLOAD_FIELDS: tuple[str, ...] = CheckpointPayload.__struct_fields__
TEXT_FIELDS: tuple[str, ...] = ("title", "objective", "status", "summary", "current_plan", "notes")
LIST_FIELDS: tuple[str, ...] = ("completed_steps", "next_steps", "blockers", "files_touched")
_EMPTY = CheckpointPayload()


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A session's current checkpoint: its payload plus where it belongs and when it changed.

    Times are float seconds since the Unix epoch, like everywhere in Voyager.
    """

    session_id: str
    project_id: str
    title: str | None = None
    objective: str | None = None
    status: str | None = None
    summary: str | None = None
    current_plan: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    files_touched: tuple[str, ...] = ()
    notes: str | None = None
    schema_version: int = PAYLOAD_VERSION
    created_at: float
    updated_at: float

    def payload(self) -> CheckpointPayload:
        """The user-authored fields alone."""
        return CheckpointPayload(**_fields(self))


class CheckpointPatch(msgspec.Struct, frozen=True, kw_only=True):
    """Changes for :meth:`CheckpointStore.save`.

    ``replace`` (if given) becomes the base instead of the current payload; then every
    text field that is not ``UNSET`` replaces (an empty or blank string clears it);
    then the ``add_*`` items are appended to their lists, skipping items already there
    so that re-running a save is idempotent. An item added with ``add_done`` also
    leaves ``next_steps``: finishing a step moves it.
    """

    replace: CheckpointPayload | None = None
    title: str | None | UnsetType = UNSET
    objective: str | None | UnsetType = UNSET
    status: str | None | UnsetType = UNSET
    summary: str | None | UnsetType = UNSET
    current_plan: str | None | UnsetType = UNSET
    notes: str | None | UnsetType = UNSET
    add_done: tuple[str, ...] = ()
    add_next: tuple[str, ...] = ()
    add_blockers: tuple[str, ...] = ()
    add_files: tuple[str, ...] = ()


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """One frozen version of a session's payload.

    ``auto``: written by a save (the version that save produced). ``pre-restore``: the
    state a restore replaced, which ``undo`` puts back. ``manual``: reserved for named
    snapshots; this version never writes one, and pruning never removes one.
    ``current`` marks the snapshot the current state was saved as or restored from.
    """

    name: str
    kind: SnapshotKind
    captured_at: float
    restored_at: float | None
    current: bool
    payload: CheckpointPayload


class SaveResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a save did. ``changed=False`` means nothing was written; ``checkpoint`` is then the
    stored one (``None`` if the session has none)."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    changed: bool
    snapshot: str | None
    checkpoint: Checkpoint | None


class RestoreResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a restore or an undo did: which snapshot it applied and where the replaced state went."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    changed: bool
    restored: str
    pre_restore: str | None
    checkpoint: Checkpoint


class ClearResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a clear removed."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    cleared: bool
    snapshots: int


class StatusResult(msgspec.Struct, frozen=True, kw_only=True):
    """A session's checkpoint (``None`` if it has none) and how many snapshots it keeps."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    checkpoint: Checkpoint | None
    snapshots: int


class HandoffResult(msgspec.Struct, frozen=True, kw_only=True):
    """Where a hand-off file was written."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    path: str


class CheckpointSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``list``: a session that has a checkpoint."""

    session_id: str
    project_id: str
    title: str | None
    status: str | None
    updated_at: float
    snapshots: int


class CheckpointList(msgspec.Struct, frozen=True, kw_only=True):
    schema_version: int = SCHEMA_VERSION
    sessions: list[CheckpointSummary]


class SnapshotList(msgspec.Struct, frozen=True, kw_only=True):
    schema_version: int = SCHEMA_VERSION
    session_id: str
    snapshots: list[Snapshot]


class _PayloadDocument(CheckpointPayload, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # What ``--from-json`` accepts: a payload, optionally with the metadata that
    # ``status --json`` prints, so its ``checkpoint`` object can be edited and fed back.
    # Metadata is ignored (the target session is the one named on the command line).
    schema_version: int = PAYLOAD_VERSION
    session_id: str | None = None
    project_id: str | None = None
    created_at: float | None = None
    updated_at: float | None = None


_document_decoder = msgspec.json.Decoder(_PayloadDocument)
_payload_decoder = msgspec.json.Decoder(CheckpointPayload)
_list_decoder = msgspec.json.Decoder(tuple[str, ...])
_encode = msgspec.json.Encoder().encode


def decode_payload(data: bytes | str) -> CheckpointPayload:
    """Validate a JSON checkpoint document into a payload; one-line :class:`CheckpointError` if it is not one."""
    try:
        doc = _document_decoder.decode(data)
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        raise CheckpointError(f"invalid checkpoint document: {_one_line(str(exc))}") from None
    if doc.schema_version != PAYLOAD_VERSION:
        raise CheckpointError(
            f"invalid checkpoint document: schema_version {doc.schema_version}, this Voyager reads {PAYLOAD_VERSION}"
        )
    return _normalize(CheckpointPayload(**_fields(doc)))


# ---------------------------------------------------------------------------
# Pure functions: validation, merge, rendering. No SQL here.
# ---------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def require_id(value: object, what: str = "session id") -> str:
    """``value`` if it is a usable id, else :class:`CheckpointError`.

    This is the gate of session isolation: nothing reaches SQL as a key without
    passing here, so ``None`` can never be bound and match nothing (or everything).
    """
    if not isinstance(value, str):
        raise CheckpointError(f"{what} must be a string, not {type(value).__name__}")
    if not value or value.isspace():
        raise CheckpointError(f"{what} is empty")
    if len(value) > _MAX_ID_CHARS:
        raise CheckpointError(f"{what} is longer than {_MAX_ID_CHARS} characters")
    if value != value.strip() or _CONTROL.search(value):
        raise CheckpointError(f"{what} {value!r} has surrounding blanks or control characters")
    return value


def _clean_text(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CheckpointError(f"{field} must be text, not {type(value).__name__}")
    # A blank value clears the field: `--status ""` is the natural way to unset it.
    return None if not value or value.isspace() else value


def _clean_items(items: tuple[str, ...] | list[str], field: str) -> tuple[str, ...]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise CheckpointError(f"{field}[{i}] must be text, not {type(item).__name__}")
        item = item.strip()
        if not item:
            raise CheckpointError(f"{field}[{i}] is empty")
        out.append(item)
    return tuple(out)


def _normalize(payload: CheckpointPayload) -> CheckpointPayload:
    changes: dict[str, object] = {}
    for f in TEXT_FIELDS:
        v = getattr(payload, f)
        c = _clean_text(v, f)
        if c is not v:
            changes[f] = c
    for f in LIST_FIELDS:
        v = getattr(payload, f)
        c = _clean_items(v, f)
        if c != v:
            changes[f] = c
    return msgspec.structs.replace(payload, **changes) if changes else payload


def merge(current: CheckpointPayload, patch: CheckpointPatch) -> CheckpointPayload:
    """The payload ``patch`` turns ``current`` into (see :class:`CheckpointPatch` for the rules)."""
    base = _normalize(patch.replace) if patch.replace is not None else current
    changes: dict[str, object] = {}
    for f in TEXT_FIELDS:
        v = getattr(patch, f)
        if v is not UNSET:
            changes[f] = _clean_text(v, f)
    if patch.add_done or patch.add_next or patch.add_blockers or patch.add_files:
        done = list(base.completed_steps)
        nxt = list(base.next_steps)
        for step in _clean_items(patch.add_done, "done"):
            if step in nxt:
                nxt.remove(step)
            if step not in done:
                done.append(step)
        for step in _clean_items(patch.add_next, "next"):
            if step not in nxt:
                nxt.append(step)
        changes["completed_steps"] = tuple(done)
        changes["next_steps"] = tuple(nxt)
        for field, items in (("blockers", patch.add_blockers), ("files_touched", patch.add_files)):
            values = list(getattr(base, field))
            for item in _clean_items(items, field):
                if item not in values:
                    values.append(item)
            changes[field] = tuple(values)
    return msgspec.structs.replace(base, **changes) if changes else base


def checkpoint_text(cp: Checkpoint | CheckpointPayload) -> str:
    """The checkpoint as plain searchable text: objective, status, plan, steps, blockers, files, notes.

    Pure and deterministic, so the search index can store it as one document and a
    changed checkpoint simply replaces it.
    """
    parts: list[str] = []
    for label, field in (("Title", "title"), ("Objective", "objective"), ("Status", "status"),
                         ("Summary", "summary"), ("Plan", "current_plan")):
        value = getattr(cp, field)
        if value:
            parts.append(f"{label}: {value}")
    for label, field in (("Done", "completed_steps"), ("Next", "next_steps"),
                         ("Blocker", "blockers"), ("File", "files_touched")):
        parts.extend(f"{label}: {item}" for item in getattr(cp, field))
    if cp.notes:
        parts.append(f"Notes: {cp.notes}")
    return "\n".join(parts)


def _fmt_time(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(ts))


def render_handoff(cp: Checkpoint) -> str:
    """A Markdown hand-off for the next person or agent picking up the session."""

    def heading_text(s: str) -> str:
        return _one_line(s)  # a newline would end the heading and spill into the body

    lines = [f"# Hand-off: {heading_text(cp.title or cp.session_id)}", ""]
    lines.append(f"- Session: `{cp.session_id}`")
    lines.append(f"- Project: `{cp.project_id}`")
    if cp.status:
        lines.append(f"- Status: {heading_text(cp.status)}")
    lines.append(f"- Updated: {_fmt_time(cp.updated_at)}")
    for label, field in (("Objective", "objective"), ("Summary", "summary"), ("Current plan", "current_plan")):
        value = getattr(cp, field)
        if value:
            lines += ["", f"## {label}", "", value]
    for label, field, mark in (("Completed", "completed_steps", "- [x] "), ("Next steps", "next_steps", "- [ ] "),
                               ("Blockers", "blockers", "- "), ("Files touched", "files_touched", "- ")):
        items = getattr(cp, field)
        if items:
            lines += ["", f"## {label}", ""] + [mark + heading_text(i) for i in items]
    if cp.notes:
        lines += ["", "## Notes", "", cp.notes]
    lines += ["", "---", "", "_Written by `voyager checkpoint handoff` from the saved checkpoint. "
              "Edits here are not read back; use `voyager checkpoint save` to change the checkpoint._", ""]
    return "\n".join(lines)


def handoff_filename(session_id: str) -> str:
    """``handoff-<slug>-<hash>.md``: safe on any filesystem, and injective.

    The slug keeps ASCII letters, digits, ``_`` and ``-`` only, so no separator, ``..``
    or odd Unicode can reach the path; the hash of the full id keeps ``a/b`` and ``a_b``
    (or two long ids sharing a prefix) from sharing a file.
    """
    sid = require_id(session_id)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", sid).strip("_-")[:64] or "session"
    digest = hashlib.sha256(sid.encode("utf-8")).hexdigest()[:12]
    return f"handoff-{slug}-{digest}.md"


def default_path(data_dir: Path) -> Path:
    """Where the checkpoint database lives in a data dir."""
    from voyager_sessions.paths import DataDir

    return DataDir(data_dir).checkpoints_db


# ---------------------------------------------------------------------------
# Schema
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# SQL, kept as constants so sqlite3's statement cache prepares each once.
# ---------------------------------------------------------------------------

_ROW_COLS = (
    "project_id, title, objective, status, summary, current_plan, completed_steps, next_steps, "
    "blockers, files_touched, notes, schema_version, created_at, updated_at"
)
_LOAD = f"SELECT {_ROW_COLS} FROM checkpoints WHERE session_id = ?"
_LOAD_FOR_WRITE = f"SELECT {_ROW_COLS}, based_on FROM checkpoints WHERE session_id = ?"
_SESSION_PROJECT = "SELECT project_id FROM sessions WHERE id = ?"
_UPSERT = """
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
_INSERT_SNAPSHOT = """
    INSERT INTO snapshots (session_id, project_id, name, kind, captured_at, payload, schema_version)
    VALUES (?, ?, ?, ?, ?, ?, ?)
"""
# Keep: the newest `limit` snapshots, the newest pre-restore one (undo must survive),
# the one the current state is based on (so every reachable state stays in history),
# and manual ones (named by a person).
_PRUNE = """
    DELETE FROM snapshots
    WHERE session_id = ?1 AND kind != 'manual'
      AND id < (SELECT min(id) FROM (SELECT id FROM snapshots WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2))
      AND id != coalesce((SELECT max(id) FROM snapshots WHERE session_id = ?1 AND kind = 'pre-restore'), -1)
      AND id != coalesce(?3, -1)
"""
_SNAPSHOT_COLS = "id, name, kind, captured_at, restored_at, payload"


def _row_to_checkpoint(session_id: str, r: tuple) -> Checkpoint:
    dec = _list_decoder.decode
    return Checkpoint(
        session_id=session_id, project_id=r[0], title=r[1], objective=r[2], status=r[3], summary=r[4],
        current_plan=r[5], completed_steps=dec(r[6]), next_steps=dec(r[7]), blockers=dec(r[8]),
        files_touched=dec(r[9]), notes=r[10], schema_version=r[11], created_at=r[12], updated_at=r[13],
    )


_seq = itertools.count(1)


def _snapshot_name(kind: str) -> str:
    # A bare timestamp is not unique: two writers in one millisecond would collide.
    # pid + a per-process counter is; the counter is fixed-width so "pid 12, seq 3"
    # and "pid 1, seq 23" cannot spell the same digits.
    return f"{kind}-{time.time_ns() // 1_000_000}-{os.getpid()}{next(_seq) % 10_000:04d}"


F = TypeVar("F", bound=Callable[..., object])


def _sql_errors(action: str) -> Callable[[F], F]:
    """Turn any sqlite3 error raised by the wrapped method into a one-line StoreError."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(self: CheckpointStore, *args: object, **kwargs: object) -> object:
            try:
                return fn(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise self._error(action, exc) from exc

        return wrapper  # type: ignore[return-value]

    return wrap


class CheckpointStore:
    """Per-session checkpoints and their snapshot history in one SQLite file.

    ``CheckpointStore.open(path)`` (or the constructor) creates or migrates the
    database; use it as a context manager or call :meth:`close`. One instance per
    process and thread; any number of processes may share the file.

    - :meth:`save` ``(session_id, project_id, patch) -> SaveResult``: merge and write atomically.
    - :meth:`load` ``(session_id) -> Checkpoint | None``: one primary-key SELECT.
    - :meth:`status` ``(session_id) -> StatusResult``: the checkpoint plus its snapshot count.
    - :meth:`list` ``() -> list[CheckpointSummary]``: sessions that have a checkpoint, newest first.
    - :meth:`snapshots` ``(session_id) -> list[Snapshot]``: history, newest first.
    - :meth:`restore` ``(session_id, name=None) -> RestoreResult``: default is the newest
      non-pre-restore snapshot older than the current state with a different payload.
    - :meth:`undo` ``(session_id) -> RestoreResult``: put back the newest pre-restore snapshot not yet used.
    - :meth:`clear` ``(session_id) -> ClearResult``: forget the session, history included.
    - :meth:`handoff` ``(session_id, out_dir) -> Path``: write the Markdown hand-off.
    - :meth:`project_of` / :meth:`find_sessions`: what a caller needs to pick a project and resolve an id.

    Errors are :class:`~voyager_sessions.store.db.StoreError` (``BusyError`` if another writer
    held the lock too long, :class:`CheckpointError` for refused requests), each with a
    one-line message.
    """

    def __init__(self, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT, readonly: bool = False) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.path = Path(path)
        self.history_limit = history_limit
        self.conn = connect(self.path, MIGRATIONS, readonly=readonly)

    @classmethod
    def open(
        cls, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT, readonly: bool = False
    ) -> CheckpointStore:
        """Open (creating and migrating unless ``readonly``) the checkpoint database at ``path``."""
        return cls(path, history_limit=history_limit, readonly=readonly)

    def close(self) -> None:
        # No explicit checkpoint: SQLite's own close of the last connection folds the
        # (small, autocheckpointed) WAL back, and forcing a FULL/TRUNCATE one here would
        # only add an fsync to every command.
        self.conn.close()

    def __enter__(self) -> CheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(self, action: str, exc: sqlite3.Error) -> StoreError:
        msg = _one_line(str(exc))
        low = msg.lower()
        if "locked" in low or "busy" in low:
            return BusyError(f"cannot {action}: {self.path} is busy (another writer held it too long)")
        if "readonly" in low or "read-only" in low:
            return StoreError(f"cannot {action}: {self.path} is read-only")
        if "full" in low:
            return StoreError(f"cannot {action}: disk or database full ({self.path}); nothing was written")
        return StoreError(f"cannot {action}: {msg} ({self.path})")

    # -- reads -------------------------------------------------------------------

    def load(self, session_id: str) -> Checkpoint | None:
        """The session's current checkpoint, or ``None``."""
        sid = require_id(session_id)
        try:
            row = self.conn.execute(_LOAD, (sid,)).fetchone()
        except sqlite3.Error as exc:
            raise self._error("read checkpoint", exc) from exc
        return None if row is None else _row_to_checkpoint(sid, row)

    @_sql_errors("read checkpoint")
    def status(self, session_id: str) -> StatusResult:
        """The checkpoint and its snapshot count, read in one transaction so they agree."""
        sid = require_id(session_id)
        self.conn.execute("BEGIN")
        try:
            row = self.conn.execute(_LOAD, (sid,)).fetchone()
            n = self.conn.execute("SELECT count(*) FROM snapshots WHERE session_id = ?", (sid,)).fetchone()[0]
        finally:
            if self.conn.in_transaction:  # an error may already have ended it
                self.conn.execute("COMMIT")
        cp = None if row is None else _row_to_checkpoint(sid, row)
        return StatusResult(session_id=sid, checkpoint=cp, snapshots=n)

    @_sql_errors("read checkpoint")
    def project_of(self, session_id: str) -> str | None:
        """The project a session is bound to, or ``None`` if the store does not know the session."""
        row = self.conn.execute(_SESSION_PROJECT, (require_id(session_id),)).fetchone()
        return row[0] if row else None

    @_sql_errors("list checkpoints")
    def list(self, project_id: str | None = None) -> list[CheckpointSummary]:  # noqa: A003 - the API name
        """Sessions that have a checkpoint, most recently updated first (optionally one project's)."""
        sql = (
            "SELECT c.session_id, c.project_id, c.title, c.status, c.updated_at, "
            "(SELECT count(*) FROM snapshots s WHERE s.session_id = c.session_id) FROM checkpoints c"
        )
        args: tuple = ()
        if project_id is not None:
            sql += " WHERE c.project_id = ?"
            args = (require_id(project_id, "project id"),)
        sql += " ORDER BY c.updated_at DESC, c.session_id"
        return [
            CheckpointSummary(session_id=r[0], project_id=r[1], title=r[2], status=r[3], updated_at=r[4], snapshots=r[5])
            for r in self.conn.execute(sql, args)
        ]

    @_sql_errors("list snapshots")
    def snapshots(self, session_id: str) -> list[Snapshot]:
        """The session's snapshot history, newest first."""
        sid = require_id(session_id)
        row = self.conn.execute("SELECT based_on FROM checkpoints WHERE session_id = ?", (sid,)).fetchone()
        based_on = row[0] if row else None
        rows = self.conn.execute(
            f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? ORDER BY id DESC", (sid,)
        ).fetchall()
        return [self._snapshot(r, based_on) for r in rows]

    @staticmethod
    def _snapshot(r: tuple, based_on: int | None) -> Snapshot:
        return Snapshot(
            name=r[1], kind=r[2], captured_at=r[3], restored_at=r[4], current=r[0] == based_on,
            payload=_payload_decoder.decode(r[5]),
        )

    @_sql_errors("find sessions")
    def find_sessions(self, ref: str, limit: int = 50) -> list[str]:
        """Ids of sessions with a checkpoint matching ``ref``: exactly, by prefix, or by the part after ``provider:``."""
        ref = require_id(ref, "session reference")
        exact = self.conn.execute("SELECT id FROM sessions WHERE id = ?", (ref,)).fetchall()
        if exact:
            return [exact[0][0]]
        rows = self.conn.execute(
            "SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' OR substr(id, instr(id, ':') + 1) LIKE ?1 ESCAPE '\\' "
            "ORDER BY id LIMIT ?2",
            (like_prefix(ref), limit),
        ).fetchall()
        return [r[0] for r in rows]

    # -- writes ------------------------------------------------------------------

    @_sql_errors("save checkpoint")
    def save(self, session_id: str, project_id: str, changes: CheckpointPatch) -> SaveResult:
        """Apply ``changes`` to the session's checkpoint in one ``BEGIN IMMEDIATE`` transaction.

        The first save binds the session to ``project_id``; a later save naming another
        project is refused (ask :meth:`project_of` first if the caller's idea of the
        project can change). If the merged payload equals the stored one nothing is
        written: no row update, no ``updated_at`` move, no snapshot.
        """
        sid = require_id(session_id)
        pid = require_id(project_id, "project id")
        with transaction(self.conn) as db:
            row = db.execute(_LOAD_FOR_WRITE, (sid,)).fetchone()
            if row is not None:
                stored = _row_to_checkpoint(sid, row)
                if stored.project_id != pid:
                    raise self._project_mismatch(sid, stored.project_id, pid)
                current = stored.payload()
            else:
                stored = None
                bound = db.execute(_SESSION_PROJECT, (sid,)).fetchone()
                if bound is not None and bound[0] != pid:
                    raise self._project_mismatch(sid, bound[0], pid)
                current = _EMPTY
            merged = merge(current, changes)
            if merged == current:
                return SaveResult(session_id=sid, changed=False, snapshot=None, checkpoint=stored)
            payload_json = _encode(merged)
            if len(payload_json) > MAX_PAYLOAD_BYTES:
                raise CheckpointError(f"checkpoint is {len(payload_json)} bytes; the limit is {MAX_PAYLOAD_BYTES}")
            now = time.time()
            if stored is None:
                self._bind(db, sid, pid, now)
            name, snap_id = self._insert_snapshot(db, sid, pid, "auto", now, payload_json)
            created = stored.created_at if stored is not None else now
            self._write(db, sid, pid, merged, snap_id, created, now)
            self._prune(db, sid, snap_id)
        cp = Checkpoint(session_id=sid, project_id=pid, **_fields(merged), created_at=created, updated_at=now)
        return SaveResult(session_id=sid, changed=True, snapshot=name, checkpoint=cp)

    @_sql_errors("restore checkpoint")
    def restore(self, session_id: str, name: str | None = None) -> RestoreResult:
        """Make snapshot ``name`` (default: the previous version) the current state.

        The state being replaced is first copied into a ``pre-restore`` snapshot, so
        :meth:`undo` can bring it back. Restoring a payload equal to the current one
        writes nothing.
        """
        sid = require_id(session_id)
        if name is not None:
            name = require_id(name, "snapshot name")
        with transaction(self.conn) as db:
            stored, based_on = self._current_for_write(db, sid)
            current_json = _encode(stored.payload())
            if name is not None:
                target = db.execute(
                    f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND name = ?", (sid, name)
                ).fetchone()
                if target is None:
                    raise CheckpointError(f"session {sid} has no snapshot named {name!r}")
            else:
                # "Before the current state": older than the snapshot the current state
                # came from, so repeated restores walk back through history, and with a
                # different payload, so a restore is never a no-op when history has more.
                target = db.execute(
                    f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND kind != 'pre-restore' "
                    "AND id < ? AND payload != ? ORDER BY id DESC LIMIT 1",
                    (sid, based_on if based_on is not None else 1 << 62, current_json),
                ).fetchone()
                if target is None:
                    raise CheckpointError(f"session {sid} has no earlier snapshot to restore")
            return self._apply(db, sid, stored, current_json, target, take_pre_restore=True)

    @_sql_errors("undo restore")
    def undo(self, session_id: str) -> RestoreResult:
        """Revert the last restore by putting back its pre-restore snapshot.

        Each pre-restore snapshot is used once; a second undo reverts the restore
        before that, if its snapshot is still kept. Undo takes no pre-restore snapshot
        itself: the state it replaces is already in history (pruning keeps it).
        """
        sid = require_id(session_id)
        with transaction(self.conn) as db:
            stored, _ = self._current_for_write(db, sid)
            target = db.execute(
                f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND kind = 'pre-restore' "
                "AND restored_at IS NULL ORDER BY id DESC LIMIT 1",
                (sid,),
            ).fetchone()
            if target is None:
                raise CheckpointError(f"session {sid} has no restore to undo")
            result = self._apply(db, sid, stored, _encode(stored.payload()), target, take_pre_restore=False)
            if not result.changed:
                # The state already equals what the restore replaced; mark the snapshot
                # used so the next undo moves on instead of answering "unchanged" forever.
                db.execute("UPDATE snapshots SET restored_at = ? WHERE id = ?", (time.time(), target[0]))
            return result

    @_sql_errors("clear checkpoint")
    def clear(self, session_id: str) -> ClearResult:
        """Delete the session's checkpoint and its whole history. Permanent."""
        sid = require_id(session_id)
        with transaction(self.conn) as db:
            n = db.execute("SELECT count(*) FROM snapshots WHERE session_id = ?", (sid,)).fetchone()[0]
            # Deleting the session row cascades to its checkpoint and snapshots, and
            # releases its project binding.
            cleared = db.execute("DELETE FROM sessions WHERE id = ?", (sid,)).rowcount > 0
        return ClearResult(session_id=sid, cleared=cleared, snapshots=n)

    def handoff(self, session_id: str, out_dir: Path) -> Path:
        """Write ``out_dir/handoff-<sanitized id>.md`` from the committed checkpoint; return its path.

        The file is written to a temporary name and renamed, so a reader never sees half
        of it. It is derived output: nothing ever reads it back as state.
        """
        cp = self.load(session_id)
        if cp is None:
            raise CheckpointError(f"session {session_id} has no checkpoint")
        out_dir = Path(out_dir)
        path = out_dir / handoff_filename(cp.session_id)
        # Belt and braces: the name is built from a safe alphabet, but check anyway.
        if path.resolve().parent != out_dir.resolve():
            raise CheckpointError(f"hand-off path for {cp.session_id!r} escapes {out_dir}")
        _atomic_write(path, render_handoff(cp).encode("utf-8"))
        return path

    # -- internals ---------------------------------------------------------------

    def _project_mismatch(self, sid: str, bound: str, asked: str) -> CheckpointError:
        return CheckpointError(f"session {sid} belongs to project {bound!r}, not {asked!r}")

    def _bind(self, db: sqlite3.Connection, sid: str, pid: str, now: float) -> None:
        # A project id that is an absolute path names a directory; "default" does not.
        directory = pid if pid.startswith("/") else None
        db.execute("INSERT OR IGNORE INTO projects (id, directory, created_at) VALUES (?, ?, ?)", (pid, directory, now))
        db.execute("INSERT OR IGNORE INTO sessions (id, project_id, created_at) VALUES (?, ?, ?)", (sid, pid, now))

    def _insert_snapshot(
        self, db: sqlite3.Connection, sid: str, pid: str, kind: str, now: float, payload_json: bytes
    ) -> tuple[str, int]:
        for _ in range(5):
            name = _snapshot_name(kind)
            try:
                cur = db.execute(_INSERT_SNAPSHOT, (sid, pid, name, kind, now, payload_json.decode(), PAYLOAD_VERSION))
            except sqlite3.IntegrityError as exc:
                # Cannot happen with pid + counter, but if a clock step ever made it
                # happen, pick another name rather than lose or replace history.
                if "UNIQUE" not in str(exc):
                    raise
                continue
            return name, cur.lastrowid  # type: ignore[return-value]
        raise CheckpointError(f"could not pick a unique snapshot name for {sid}")

    def _write(
        self, db: sqlite3.Connection, sid: str, pid: str, p: CheckpointPayload, based_on: int, created: float, now: float
    ) -> None:
        enc = _encode
        db.execute(
            _UPSERT,
            (
                sid, pid, p.title, p.objective, p.status, p.summary, p.current_plan,
                enc(p.completed_steps).decode(), enc(p.next_steps).decode(), enc(p.blockers).decode(),
                enc(p.files_touched).decode(), p.notes, PAYLOAD_VERSION, based_on, created, now,
            ),
        )

    def _prune(self, db: sqlite3.Connection, sid: str, based_on: int) -> None:
        db.execute(_PRUNE, (sid, self.history_limit, based_on))

    def _current_for_write(self, db: sqlite3.Connection, sid: str) -> tuple[Checkpoint, int | None]:
        row = db.execute(_LOAD_FOR_WRITE, (sid,)).fetchone()
        if row is None:
            raise CheckpointError(f"session {sid} has no checkpoint")
        return _row_to_checkpoint(sid, row), row[14]

    def _apply(
        self, db: sqlite3.Connection, sid: str, stored: Checkpoint, current_json: bytes, target: tuple,
        *, take_pre_restore: bool,
    ) -> RestoreResult:
        snap_id, snap_name, payload_text = target[0], target[1], target[5]
        if payload_text == current_json.decode():
            # Already there: nothing to write, nothing to undo later.
            return RestoreResult(session_id=sid, changed=False, restored=snap_name, pre_restore=None, checkpoint=stored)
        now = time.time()
        pre = None
        if take_pre_restore:
            pre, _ = self._insert_snapshot(db, sid, stored.project_id, "pre-restore", now, current_json)
        payload = _payload_decoder.decode(payload_text)
        self._write(db, sid, stored.project_id, payload, snap_id, stored.created_at, now)
        db.execute("UPDATE snapshots SET restored_at = ? WHERE id = ?", (now, snap_id))
        self._prune(db, sid, snap_id)
        cp = Checkpoint(session_id=sid, project_id=stored.project_id, **_fields(payload),
                        created_at=stored.created_at, updated_at=now)
        return RestoreResult(session_id=sid, changed=True, restored=snap_name, pre_restore=pre, checkpoint=cp)


def _fields(p: object) -> dict[str, Any]:
    """The payload fields of ``p`` (a payload, a checkpoint or a checkpoint document)."""
    return {f: getattr(p, f) for f in PAYLOAD_FIELDS}


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".handoff-", suffix=".tmp", dir=path.parent)  # created 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
