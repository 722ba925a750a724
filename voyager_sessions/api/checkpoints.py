"""The application API's checkpoint operations: save, status, list, snapshots, restore, undo, clear, handoff.

Part of the application API (:mod:`voyager_sessions.api` holds the reading operations):
one request Struct and one function per operation, each returning the store's result
document (``SaveResult``, ``StatusResult`` …, pinned by docs/checkpoints.md). The
``voyager checkpoint`` CLI reads argv into a request and renders the result; ``voyager
mcp`` builds the same requests for an agent's task-state tools, scoped to the calling
session. Every guarantee is the store's (atomic read-merge-write, no phantom progress,
undo never pruned: :mod:`voyager_sessions.store.checkpoints`); what lives here is what
each operation needs around the store:

* resolving what was typed as SESSION to a Voyager id (:func:`resolve`: the index, then
  the sessions that already have a checkpoint, then a well-formed id taken as given);
* the project a session's first save binds it to (its working directory);
* the data dir made writable before a write, and the search index told of the change
  (a failure there is a warning: the checkpoint is already committed).

Nothing here prints: warnings go to the ``warn`` callback each function takes.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import msgspec

from voyager_sessions.core.errors import DiskFull, UserError, no_space, one_line
from voyager_sessions.core.paths import DataDir, ensure_private_dir
from voyager_sessions.core.paths import data_dir as default_data_dir
from voyager_sessions.store.checkpoints import (
    MAX_PAYLOAD_BYTES as MAX_PAYLOAD_BYTES,  # re-exported: what --from-json reads
    CheckpointError,
    CheckpointList,
    CheckpointPatch,
    CheckpointPayload,
    ClearResult,
    HandoffResult,
    RestoreResult,
    SaveResult,
    Snapshot,
    SnapshotList,
    StatusResult,
    decode_payload,
)
from voyager_sessions.store.checkpoints.model import document_too_large as document_too_large  # for readers
from voyager_sessions.store.checkpoints.render import render_status as render_status  # the CLI's text
from voyager_sessions.store.checkpoints.render import when as when

if TYPE_CHECKING:
    from voyager_sessions.store.checkpoints import CheckpointStore
    from voyager_sessions.store.state import StateStore

T = TypeVar("T")

#: The project of a session whose working directory nobody knows.
DEFAULT_PROJECT = "default"


class Resolved(NamedTuple):
    """A session the caller named: its Voyager id and, when the index knows it, its working directory."""

    session_id: str
    cwd: str | None


#: ``resolver(data_dir, ref) -> Resolved``; raises a one-line ``UserError`` when ``ref`` names no single session.
Resolver = Callable[[Path, str], Resolved]

#: Where a warning goes (``warning: …`` on the CLI's stderr).
Warn = Callable[[str], None]


def _ignore(message: str) -> None:
    pass


# -- requests -------------------------------------------------------------------------------


class SaveRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Merge changes into a session's checkpoint: given fields replace (``""`` clears), lists append."""

    session: str
    #: A whole checkpoint document replacing the current one (``--from-json``); the fields below apply on top.
    replace: CheckpointPayload | None = None
    title: str | None = None
    objective: str | None = None
    status: str | None = None
    summary: str | None = None
    plan: str | None = None
    note: str | None = None
    done: list[str] = []
    next: list[str] = []
    blockers: list[str] = []
    files: list[str] = []


class StatusRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A session's checkpoint (``checkpoint`` None when it has none)."""

    session: str


class ListRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Sessions that have a checkpoint, most recently updated first."""


class SnapshotsRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A session's snapshots, newest first."""

    session: str


class RestoreRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Make a snapshot the current checkpoint (default: the version before the current one)."""

    session: str
    snapshot: str | None = None


class UndoRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Revert a session's last restore."""

    session: str


class ClearRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Delete a session's checkpoint and all its snapshots (permanent)."""

    session: str


class HandoffRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Write the Markdown hand-off of a session's checkpoint under ``<data dir>/checkpoints/``."""

    session: str


def parse_document(data: bytes | str) -> CheckpointPayload:
    """A checkpoint JSON document (``--from-json``) as a payload; the one-line "invalid checkpoint document" error."""
    return decode_payload(data)


# -- resolving SESSION --------------------------------------------------------------------------


def resolve(data_dir: Path, ref: str, warn: Warn = _ignore) -> Resolved:
    """Turn a Voyager id, a provider-native id or an unambiguous prefix into a session id.

    The one resolver (:func:`voyager_sessions.api.resolve_ids`, which ``show`` uses too)
    decides and words "no session" and "ambiguous"; what it asks is, in order: the
    index's session table (it may not exist yet: Voyager may never have scanned), then
    the sessions that already have a checkpoint, and finally a ref that is a well-formed
    Voyager id (``provider:native``) is taken as given, so an agent can checkpoint a
    session before the next scan has seen it.
    """
    from voyager_sessions.api import resolve_ids
    from voyager_sessions.store.checkpoints import require_session_id

    ref = require_session_id(ref, "session")
    catalog = _Sessions(DataDir(data_dir), ref, warn)
    try:
        sid = resolve_ids(catalog, ref)[0]
        return Resolved(sid, catalog.cwd(sid))
    finally:
        catalog.close()


class _Sessions:
    """The session catalog ``resolve`` hands the shared resolver: the index, then checkpoints, then the ref itself."""

    def __init__(self, ddir: DataDir, ref: str, warn: Warn) -> None:
        self.ddir = ddir
        self.warn = warn
        self.state: StateStore | None = None
        if ddir.state_db.exists():
            from voyager_sessions.store.state import StateStore

            try:
                self.state = StateStore(ddir.state_db, readonly=True)
            except Exception as exc:  # a damaged index must not block checkpoints
                warn(f"session index unavailable ({one_line(exc)}); matching {ref!r} against checkpoints only")

    def resolve_session(self, ref: str, limit: int = 50) -> list[str]:
        ids: list[str] = self._indexed(lambda state: state.resolve_session(ref, limit), [])
        if not ids:
            ids = _if_stored(self.ddir, lambda store: store.find_sessions(ref, limit), [])
        if not ids and ":" in ref:
            ids = [ref]
        return ids

    def cwd(self, session_id: str) -> str | None:
        rec = self._indexed(lambda state: state.sessions_by_id([session_id]).get(session_id), None)
        return rec.session.cwd if rec is not None else None

    def _indexed(self, ask: Callable[[StateStore], T], default: T) -> T:
        if self.state is None:
            return default
        try:
            return ask(self.state)
        except Exception as exc:  # a damaged index must not block checkpoints
            self.warn(f"session index unreadable ({one_line(exc)})")
            self.close()
            return default

    def close(self) -> None:
        if self.state is not None:
            self.state.close()
            self.state = None


class _Call(NamedTuple):
    """One operation's surroundings: the data dir, how SESSION is resolved, where warnings go."""

    ddir: DataDir
    resolver: Resolver | None
    warn: Warn

    def resolve(self, ref: str) -> Resolved:
        if self.resolver is not None:
            return self.resolver(self.ddir.root, ref)
        return resolve(self.ddir.root, ref, self.warn)


def _call(data_dir: DataDir | Path | None, resolver: Resolver | None, warn: Warn) -> _Call:
    ddir = data_dir if isinstance(data_dir, DataDir) else DataDir(data_dir or default_data_dir())
    return _Call(ddir, resolver, warn)


def _project_for(store: CheckpointStore, resolved: Resolved) -> str:
    # A session keeps the project of its first save; otherwise its working directory
    # (when the index knows it) names the project.
    bound = store.project_of(resolved.session_id)
    if bound is not None:
        return bound
    if resolved.cwd:
        return os.path.normpath(resolved.cwd)
    return DEFAULT_PROJECT


@contextmanager
def _store(ddir: DataDir) -> Iterator[CheckpointStore]:
    from voyager_sessions.store.checkpoints import CheckpointStore

    store = CheckpointStore.open(ddir.checkpoints_db)
    try:
        yield store
    finally:
        store.close()


def _if_stored(ddir: DataDir, ask: Callable[[CheckpointStore], T], default: T) -> T:
    """``ask(store)`` of the checkpoint database, or ``default`` when there is none: only a save creates it."""
    if not ddir.checkpoints_db.exists():
        return default
    with _store(ddir) as store:
        return ask(store)


def _writable(path: Path, what: str) -> Path:
    try:
        return ensure_private_dir(path)
    except OSError as exc:
        if no_space(exc):
            raise DiskFull.at(path) from None
        raise UserError(f"cannot create {what} {path}: {exc.strerror or exc}") from None


def _index_hook(c: _Call, session_id: str, cp: Any | None) -> None:
    """Tell the search index the checkpoint changed (``cp=None``: it is gone), if this build can.

    The hook lives in ``voyager_sessions.search.checkpoints`` (owned by the search code); empty
    text removes the session's checkpoint document. The checkpoint is already
    committed, so a failing hook is a warning, never an error: a stale search entry is
    fixed by the next save, a lost save could not be.
    """
    try:
        module = importlib.import_module("voyager_sessions.search.checkpoints")
    except ModuleNotFoundError as exc:
        if exc.name in ("voyager_sessions.search", "voyager_sessions.search.checkpoints"):
            return  # this build has no search integration for checkpoints
        c.warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    except ImportError as exc:
        c.warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    from voyager_sessions.store.checkpoints import checkpoint_text

    try:
        module.index_checkpoint(c.ddir.root, session_id, checkpoint_text(cp) if cp is not None else "")
    except Exception as exc:
        c.warn(f"checkpoint saved, but the search index was not updated: {one_line(exc)}")


# -- the operations ----------------------------------------------------------------------------


def save(
    req: SaveRequest, *, data_dir: DataDir | Path | None = None, resolver: Resolver | None = None, warn: Warn = _ignore
) -> SaveResult:
    """Merge ``req`` into the session's checkpoint (one transaction); a save that changes nothing writes nothing."""
    from msgspec import UNSET

    c = _call(data_dir, resolver, warn)

    def given(value: str | None) -> Any:
        return UNSET if value is None else value

    patch = CheckpointPatch(
        replace=req.replace,
        title=given(req.title),
        objective=given(req.objective),
        status=given(req.status),
        summary=given(req.summary),
        current_plan=given(req.plan),
        notes=given(req.note),
        add_done=tuple(req.done),
        add_next=tuple(req.next),
        add_blockers=tuple(req.blockers),
        add_files=tuple(req.files),
    )
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(req.session)
    with _store(c.ddir) as store:
        result = store.save(resolved.session_id, _project_for(store, resolved), patch)
    if result.changed and result.checkpoint is not None:
        _index_hook(c, result.session_id, result.checkpoint)
    return result


def status(
    req: StatusRequest,
    *,
    data_dir: DataDir | Path | None = None,
    resolver: Resolver | None = None,
    warn: Warn = _ignore,
) -> StatusResult:
    """The session's checkpoint and how many snapshots it has (``checkpoint`` None when it has none)."""
    c = _call(data_dir, resolver, warn)
    resolved = c.resolve(req.session)
    return _if_stored(
        c.ddir,
        lambda store: store.status(resolved.session_id),
        StatusResult(session_id=resolved.session_id, checkpoint=None, snapshots=0),
    )


def list_checkpoints(
    req: ListRequest, *, data_dir: DataDir | Path | None = None, warn: Warn = _ignore
) -> CheckpointList:
    """Every session with a checkpoint, most recently updated first."""
    c = _call(data_dir, None, warn)
    return CheckpointList(sessions=_if_stored(c.ddir, lambda store: store.list(), []))


def snapshots(
    req: SnapshotsRequest,
    *,
    data_dir: DataDir | Path | None = None,
    resolver: Resolver | None = None,
    warn: Warn = _ignore,
) -> SnapshotList:
    """The session's snapshots, newest first."""
    c = _call(data_dir, resolver, warn)
    resolved = c.resolve(req.session)
    snaps: list[Snapshot] = _if_stored(c.ddir, lambda store: store.snapshots(resolved.session_id), [])
    return SnapshotList(session_id=resolved.session_id, snapshots=snaps)


def restore(
    req: RestoreRequest,
    *,
    data_dir: DataDir | Path | None = None,
    resolver: Resolver | None = None,
    warn: Warn = _ignore,
) -> RestoreResult:
    """Make snapshot ``req.snapshot`` (default: the one before the current) current; the replaced state kept for undo."""
    c = _call(data_dir, resolver, warn)
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(req.session)
    with _store(c.ddir) as store:
        result = store.restore(resolved.session_id, req.snapshot)
    if result.changed:
        _index_hook(c, result.session_id, result.checkpoint)
    return result


def undo(
    req: UndoRequest, *, data_dir: DataDir | Path | None = None, resolver: Resolver | None = None, warn: Warn = _ignore
) -> RestoreResult:
    """Revert the session's last restore."""
    c = _call(data_dir, resolver, warn)
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(req.session)
    with _store(c.ddir) as store:
        result = store.undo(resolved.session_id)
    if result.changed:
        _index_hook(c, result.session_id, result.checkpoint)
    return result


def clear(
    req: ClearRequest, *, data_dir: DataDir | Path | None = None, resolver: Resolver | None = None, warn: Warn = _ignore
) -> ClearResult:
    """Delete the session's checkpoint and every snapshot of it."""
    c = _call(data_dir, resolver, warn)
    resolved = c.resolve(req.session)
    result = _if_stored(
        c.ddir,
        lambda store: store.clear(resolved.session_id),
        ClearResult(session_id=resolved.session_id, cleared=False, snapshots=0),
    )
    if result.cleared:
        _index_hook(c, result.session_id, None)
    return result


def handoff(
    req: HandoffRequest,
    *,
    data_dir: DataDir | Path | None = None,
    resolver: Resolver | None = None,
    warn: Warn = _ignore,
) -> HandoffResult:
    """Write the session's Markdown hand-off (derived output, never read back); its path."""
    c = _call(data_dir, resolver, warn)
    resolved = c.resolve(req.session)
    if not c.ddir.checkpoints_db.exists():
        raise CheckpointError(f"session {resolved.session_id} has no checkpoint")
    out_dir = _writable(c.ddir.handoffs, "hand-off directory")
    with _store(c.ddir) as store:
        path = store.handoff(resolved.session_id, out_dir)
    return HandoffResult(session_id=resolved.session_id, path=str(path))
