"""The checkpoint store: ``<data dir>/checkpoints.db``, its transactions, history, undo and pruning.

A separate file from the index's ``state.db`` on purpose: the index can always be
rebuilt from provider files, checkpoints cannot (they are user-authored), so resetting
the index must never touch them. What a checkpoint is and how changes merge is
:mod:`.model`; how it reads is :mod:`.render`; the tables are :mod:`.schema`.

History model: every changed save records the version it wrote as an ``auto``
snapshot, so the snapshot list is the checkpoint's history and ``based_on`` points at
the snapshot the current state equals. ``restore`` first copies the current state into
a ``pre-restore`` snapshot, which is what ``undo`` puts back.
"""

from __future__ import annotations

import builtins
import functools
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from voyager_sessions.core.errors import DiskFull, VoyagerError, no_space, one_line
from voyager_sessions.store.checkpoints import model, schema
from voyager_sessions.store.checkpoints.model import (
    EMPTY,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_VERSION,
    Checkpoint,
    CheckpointError,
    CheckpointPatch,
    CheckpointPayload,
    CheckpointSummary,
    ClearResult,
    RestoreResult,
    SaveResult,
    Snapshot,
    StatusResult,
    payload_fields,
    require_id,
    require_session_id,
)
from voyager_sessions.store.checkpoints.render import handoff_filename, render_handoff
from voyager_sessions.store.checkpoints.schema import (
    INSERT_SNAPSHOT,
    LOAD,
    LOAD_FOR_WRITE,
    MIGRATIONS,
    PRUNE,
    SESSION_PROJECT,
    SNAPSHOT_COLS,
    UPSERT,
    row_to_checkpoint,
)
from voyager_sessions.store.db import BusyError, StoreError, connect, disk_full, like_prefix, transaction

#: Snapshots kept per session besides the protected ones (see ``schema.PRUNE``).
DEFAULT_HISTORY_LIMIT = 20

_payload_decoder = msgspec.json.Decoder(CheckpointPayload)
_encode = msgspec.json.Encoder().encode


F = TypeVar("F", bound=Callable[..., object])


def _sql_errors(action: str) -> Callable[[F], F]:
    """Turn any sqlite3 error raised by the wrapped method into one of the error family (see ``_error``)."""

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

    Errors are the family of :mod:`voyager_sessions.core.errors`, each with a one-line message:
    :class:`CheckpointError` (a ``UserError``) for refused requests, ``BusyError`` (exit 3)
    if another writer held the lock too long, ``StoreError`` when the database cannot be used.
    """

    def __init__(self, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT, readonly: bool = False) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self.path = Path(path)
        self.history_limit = history_limit
        self.conn = connect(self.path, MIGRATIONS, readonly=readonly)

    @classmethod
    def open(cls, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT, readonly: bool = False) -> CheckpointStore:
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

    def _error(self, action: str, exc: sqlite3.Error) -> VoyagerError:
        # Every write runs in one transaction, which SQLite rolls back when it fails, so
        # each of these means "nothing was written; the previous checkpoint stands".
        msg = one_line(str(exc))
        low = msg.lower()
        if "locked" in low or "busy" in low:
            return BusyError(f"cannot {action}: {self.path} is busy (another writer held it too long)")
        if "readonly" in low or "read-only" in low:
            return StoreError(f"cannot {action}: {self.path} is read-only")
        if disk_full(exc, self.path):
            return DiskFull.at(self.path)
        return StoreError(f"cannot {action}: {msg} ({self.path})")

    # -- reads -------------------------------------------------------------------

    def load(self, session_id: str) -> Checkpoint | None:
        """The session's current checkpoint, or ``None``."""
        sid = require_session_id(session_id)
        try:
            row = self.conn.execute(LOAD, (sid,)).fetchone()
        except sqlite3.Error as exc:
            raise self._error("read checkpoint", exc) from exc
        return None if row is None else row_to_checkpoint(sid, row)

    @_sql_errors("read checkpoint")
    def status(self, session_id: str) -> StatusResult:
        """The checkpoint and its snapshot count, read in one transaction so they agree."""
        sid = require_session_id(session_id)
        self.conn.execute("BEGIN")
        try:
            row = self.conn.execute(LOAD, (sid,)).fetchone()
            n = self.conn.execute("SELECT count(*) FROM snapshots WHERE session_id = ?", (sid,)).fetchone()[0]
        finally:
            if self.conn.in_transaction:  # an error may already have ended it
                self.conn.execute("COMMIT")
        cp = None if row is None else row_to_checkpoint(sid, row)
        return StatusResult(session_id=sid, checkpoint=cp, snapshots=n)

    @_sql_errors("read checkpoint")
    def project_of(self, session_id: str) -> str | None:
        """The project a session is bound to, or ``None`` if the store does not know the session."""
        row = self.conn.execute(SESSION_PROJECT, (require_session_id(session_id),)).fetchone()
        return str(row[0]) if row else None

    @_sql_errors("list checkpoints")
    def list(self, project_id: str | None = None) -> list[CheckpointSummary]:  # noqa: A003 - the API name
        """Sessions that have a checkpoint, most recently updated first (optionally one project's)."""
        sql = (
            "SELECT c.session_id, c.project_id, c.title, c.status, c.updated_at, "
            "(SELECT count(*) FROM snapshots s WHERE s.session_id = c.session_id) FROM checkpoints c"
        )
        args: tuple[object, ...] = ()
        if project_id is not None:
            sql += " WHERE c.project_id = ?"
            args = (require_id(project_id, "project id"),)
        sql += " ORDER BY c.updated_at DESC, c.session_id"
        return [
            CheckpointSummary(
                session_id=r[0], project_id=r[1], title=r[2], status=r[3], updated_at=r[4], snapshots=r[5]
            )
            for r in self.conn.execute(sql, args)
        ]

    @_sql_errors("list snapshots")
    def snapshots(self, session_id: str) -> builtins.list[Snapshot]:
        """The session's snapshot history, newest first."""
        sid = require_session_id(session_id)
        row = self.conn.execute("SELECT based_on FROM checkpoints WHERE session_id = ?", (sid,)).fetchone()
        based_on = row[0] if row else None
        rows = self.conn.execute(
            f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? ORDER BY id DESC", (sid,)
        ).fetchall()
        return [self._snapshot(r, based_on) for r in rows]

    @staticmethod
    def _snapshot(r: tuple[Any, ...], based_on: int | None) -> Snapshot:
        return Snapshot(
            name=r[1],
            kind=r[2],
            captured_at=r[3],
            restored_at=r[4],
            current=r[0] == based_on,
            payload=_payload_decoder.decode(r[5]),
        )

    @_sql_errors("find sessions")
    def find_sessions(self, ref: str, limit: int = 50) -> builtins.list[str]:
        """Ids of sessions with a checkpoint matching ``ref``: exactly, by prefix, or by the part after ``provider:``."""
        ref = require_session_id(ref, "session reference")
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
        sid = require_session_id(session_id)
        pid = require_id(project_id, "project id")
        with transaction(self.conn) as db:
            row = db.execute(LOAD_FOR_WRITE, (sid,)).fetchone()
            if row is not None:
                stored = row_to_checkpoint(sid, row)
                if stored.project_id != pid:
                    raise self._project_mismatch(sid, stored.project_id, pid)
                current = stored.payload()
            else:
                stored = None
                bound = db.execute(SESSION_PROJECT, (sid,)).fetchone()
                if bound is not None and bound[0] != pid:
                    raise self._project_mismatch(sid, bound[0], pid)
                current = EMPTY
            merged = model.merge(current, changes)
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
        cp = Checkpoint(session_id=sid, project_id=pid, **payload_fields(merged), created_at=created, updated_at=now)
        return SaveResult(session_id=sid, changed=True, snapshot=name, checkpoint=cp)

    @_sql_errors("restore checkpoint")
    def restore(self, session_id: str, name: str | None = None) -> RestoreResult:
        """Make snapshot ``name`` (default: the previous version) the current state.

        The state being replaced is first copied into a ``pre-restore`` snapshot, so
        :meth:`undo` can bring it back. Restoring a payload equal to the current one
        writes nothing.
        """
        sid = require_session_id(session_id)
        if name is not None:
            name = require_id(name, "snapshot name")
        with transaction(self.conn) as db:
            stored, based_on = self._current_for_write(db, sid)
            current_json = _encode(stored.payload())
            if name is not None:
                target = db.execute(
                    f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND name = ?", (sid, name)
                ).fetchone()
                if target is None:
                    raise CheckpointError(f"session {sid} has no snapshot named {name!r}")
            else:
                # "Before the current state": older than the snapshot the current state
                # came from, so repeated restores walk back through history, and with a
                # different payload, so a restore is never a no-op when history has more
                # (after an undo the auto snapshot just below holds the current payload).
                # The payload column is TEXT: compared with a BLOB it never equals, so
                # the current payload is bound as text.
                target = db.execute(
                    f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND kind != 'pre-restore' "
                    "AND id < ? AND payload != ? ORDER BY id DESC LIMIT 1",
                    (sid, based_on if based_on is not None else 1 << 62, current_json.decode()),
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
        sid = require_session_id(session_id)
        with transaction(self.conn) as db:
            stored, _ = self._current_for_write(db, sid)
            target = db.execute(
                f"SELECT {SNAPSHOT_COLS} FROM snapshots WHERE session_id = ? AND kind = 'pre-restore' "
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
        sid = require_session_id(session_id)
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
        try:
            _atomic_write(path, render_handoff(cp).encode("utf-8"))
        except OSError as exc:
            if no_space(exc):
                raise DiskFull.at(path) from None
            raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
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
            name = schema.snapshot_name(kind)
            try:
                cur = db.execute(INSERT_SNAPSHOT, (sid, pid, name, kind, now, payload_json.decode(), PAYLOAD_VERSION))
            except sqlite3.IntegrityError as exc:
                # Cannot happen with pid + counter, but if a clock step ever made it
                # happen, pick another name rather than lose or replace history.
                if "UNIQUE" not in str(exc):
                    raise
                continue
            return name, cur.lastrowid  # type: ignore[return-value]
        raise CheckpointError(f"could not pick a unique snapshot name for {sid}")

    def _write(
        self,
        db: sqlite3.Connection,
        sid: str,
        pid: str,
        p: CheckpointPayload,
        based_on: int,
        created: float,
        now: float,
    ) -> None:
        enc = _encode
        db.execute(
            UPSERT,
            (
                sid,
                pid,
                p.title,
                p.objective,
                p.status,
                p.summary,
                p.current_plan,
                enc(p.completed_steps).decode(),
                enc(p.next_steps).decode(),
                enc(p.blockers).decode(),
                enc(p.files_touched).decode(),
                p.notes,
                PAYLOAD_VERSION,
                based_on,
                created,
                now,
            ),
        )

    def _prune(self, db: sqlite3.Connection, sid: str, based_on: int) -> None:
        db.execute(PRUNE, (sid, self.history_limit, based_on))

    def _current_for_write(self, db: sqlite3.Connection, sid: str) -> tuple[Checkpoint, int | None]:
        row = db.execute(LOAD_FOR_WRITE, (sid,)).fetchone()
        if row is None:
            raise CheckpointError(f"session {sid} has no checkpoint")
        return row_to_checkpoint(sid, row), row[14]

    def _apply(
        self,
        db: sqlite3.Connection,
        sid: str,
        stored: Checkpoint,
        current_json: bytes,
        target: tuple[Any, ...],
        *,
        take_pre_restore: bool,
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
        cp = Checkpoint(
            session_id=sid,
            project_id=stored.project_id,
            **payload_fields(payload),
            created_at=stored.created_at,
            updated_at=now,
        )
        return RestoreResult(session_id=sid, changed=True, restored=snap_name, pre_restore=pre, checkpoint=cp)


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
