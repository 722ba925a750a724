"""The application's checkpoint operations: save, status, list, snapshots, restore, undo, handoff.

Every front end that changes or reads checkpoints (``voyager checkpoint …``, ``voyager
mcp``'s checkpoint tools) goes through these functions, which return the store's result
Structs. Every decision about state (the atomic read-merge-write of a save, a save that
changes nothing writing nothing, snapshots, undo never pruned) stays in
:class:`voyager_sessions.store.checkpoints.CheckpointStore`; this module owns what lies
around it: resolving what the caller typed as a session to a Voyager id, the project a
session's first save binds it to, creating the data dir privately, and telling the search
index after a change. No click: warnings go to stderr through ``warn``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from voyager_sessions.errors import DiskFull, UserError, no_space, one_line
from voyager_sessions.paths import DataDir, ensure_private_dir
from voyager_sessions.textsafe import printable

# Store modules are imported inside functions: `voyager --help` must not pay for them.

DEFAULT_PROJECT = "default"


def warn(message: str) -> None:
    """A warning on stderr (the CLI's terminal, the MCP server's log); session text made visible, not obeyed."""
    sys.stderr.write(f"warning: {printable(message)}\n")
    sys.stderr.flush()


class Resolved(NamedTuple):
    """A session the caller named: its Voyager id and, when the index knows it, its working directory."""

    session_id: str
    cwd: str | None


#: ``resolver(data_dir, ref) -> Resolved``; raises a one-line ``UserError`` when ``ref`` names no single session.
Resolver = Callable[[Path, str], Resolved]


def resolve(data_dir: Path, ref: str) -> Resolved:
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
    catalog = _Sessions(DataDir(data_dir), ref)
    try:
        sid = resolve_ids(catalog, ref)[0]
        return Resolved(sid, catalog.cwd(sid))
    finally:
        catalog.close()


class _Sessions:
    """The session catalog ``resolve`` hands the shared resolver: the index, then checkpoints, then the ref itself."""

    def __init__(self, ddir: DataDir, ref: str) -> None:
        self.ddir = ddir
        self.state: Any = None
        if ddir.state_db.exists():
            from voyager_sessions.store.state import StateStore

            try:
                self.state = StateStore(ddir.state_db, readonly=True)
            except Exception as exc:  # a damaged index must not block checkpoints
                warn(f"session index unavailable ({one_line(exc)}); matching {ref!r} against checkpoints only")

    def resolve_session(self, ref: str, limit: int = 50) -> list[str]:
        ids = self._indexed(lambda state: state.resolve_session(ref, limit), [])
        if not ids:
            ids = if_stored(self.ddir, lambda store: store.find_sessions(ref, limit), [])
        if not ids and ":" in ref:
            ids = [ref]
        return ids

    def cwd(self, session_id: str) -> str | None:
        rec = self._indexed(lambda state: state.sessions_by_id([session_id]).get(session_id), None)
        return rec.session.cwd if rec is not None else None

    def _indexed(self, ask: Callable[[Any], Any], default: Any) -> Any:
        if self.state is None:
            return default
        try:
            return ask(self.state)
        except Exception as exc:  # a damaged index must not block checkpoints
            warn(f"session index unreadable ({one_line(exc)})")
            self.close()
            return default

    def close(self) -> None:
        if self.state is not None:
            self.state.close()
            self.state = None


def project_for(store: Any, resolved: Resolved) -> str:
    """The project a save files the session under."""
    # A session keeps the project of its first save; otherwise its working directory
    # (when the index knows it) names the project.
    bound = store.project_of(resolved.session_id)
    if bound is not None:
        return bound
    if resolved.cwd:
        return os.path.normpath(resolved.cwd)
    return DEFAULT_PROJECT


@contextmanager
def open_store(ddir: DataDir) -> Iterator[Any]:
    from voyager_sessions.store.checkpoints import CheckpointStore

    store = CheckpointStore.open(ddir.checkpoints_db)
    try:
        yield store
    finally:
        store.close()


def if_stored(ddir: DataDir, ask: Callable[[Any], Any], default: Any) -> Any:
    """``ask(store)`` of the checkpoint database, or ``default`` when there is none: only a save creates it."""
    if not ddir.checkpoints_db.exists():
        return default
    with open_store(ddir) as store:
        return ask(store)


def writable(path: Path, what: str) -> Path:
    """``path`` created (0700) if missing; a one-line error saying why it cannot be."""
    try:
        return ensure_private_dir(path)
    except OSError as exc:
        if no_space(exc):
            raise DiskFull.at(path) from None
        raise UserError(f"cannot create {what} {path}: {exc.strerror or exc}") from None


def index_hook(ddir: DataDir, session_id: str, cp: Any | None) -> None:
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
        warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    except ImportError as exc:
        warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    from voyager_sessions.store.checkpoints import checkpoint_text

    try:
        module.index_checkpoint(ddir.root, session_id, checkpoint_text(cp) if cp is not None else "")
    except Exception as exc:
        warn(f"checkpoint saved, but the search index was not updated: {one_line(exc)}")


# -- the operations ---------------------------------------------------------------------------


def save(ddir: DataDir, ref: str, patch: Any, resolver: Resolver = resolve) -> Any:
    """Merge ``patch`` (a ``CheckpointPatch``) into the session's checkpoint; the store's ``SaveResult``."""
    writable(ddir.root, "data dir")
    resolved = resolver(ddir.root, ref)
    with open_store(ddir) as store:
        result = store.save(resolved.session_id, project_for(store, resolved), patch)
    if result.changed and result.checkpoint is not None:
        index_hook(ddir, result.session_id, result.checkpoint)
    return result


def status(ddir: DataDir, ref: str, resolver: Resolver = resolve) -> Any:
    """The session's checkpoint and snapshot count (``checkpoint`` None when it has none)."""
    from voyager_sessions.store.checkpoints import StatusResult

    resolved = resolver(ddir.root, ref)
    return if_stored(
        ddir,
        lambda store: store.status(resolved.session_id),
        StatusResult(session_id=resolved.session_id, checkpoint=None, snapshots=0),
    )


def list_checkpoints(ddir: DataDir) -> Any:
    """Sessions that have a checkpoint, most recently updated first (a ``CheckpointList``)."""
    from voyager_sessions.store.checkpoints import CheckpointList

    return CheckpointList(sessions=if_stored(ddir, lambda store: store.list(), []))


def snapshots(ddir: DataDir, ref: str, resolver: Resolver = resolve) -> Any:
    """The session's snapshots, newest first (a ``SnapshotList``)."""
    from voyager_sessions.store.checkpoints import SnapshotList

    resolved = resolver(ddir.root, ref)
    return SnapshotList(
        session_id=resolved.session_id,
        snapshots=if_stored(ddir, lambda store: store.snapshots(resolved.session_id), []),
    )


def restore(ddir: DataDir, ref: str, name: str | None = None, resolver: Resolver = resolve) -> Any:
    """Make snapshot ``name`` (default: the version before the current one) current; the replaced state stays for undo."""
    writable(ddir.root, "data dir")
    resolved = resolver(ddir.root, ref)
    with open_store(ddir) as store:
        result = store.restore(resolved.session_id, name)
    if result.changed:
        index_hook(ddir, result.session_id, result.checkpoint)
    return result


def undo(ddir: DataDir, ref: str, resolver: Resolver = resolve) -> Any:
    """Revert the session's last restore."""
    writable(ddir.root, "data dir")
    resolved = resolver(ddir.root, ref)
    with open_store(ddir) as store:
        result = store.undo(resolved.session_id)
    if result.changed:
        index_hook(ddir, result.session_id, result.checkpoint)
    return result


def handoff(ddir: DataDir, ref: str, resolver: Resolver = resolve) -> Any:
    """Write the Markdown hand-off of the session's checkpoint (a ``HandoffResult`` with its path)."""
    from voyager_sessions.store.checkpoints import CheckpointError, HandoffResult

    resolved = resolver(ddir.root, ref)
    if not ddir.checkpoints_db.exists():
        raise CheckpointError(f"session {resolved.session_id} has no checkpoint")
    out_dir = writable(ddir.handoffs, "hand-off directory")
    with open_store(ddir) as store:
        path = store.handoff(resolved.session_id, out_dir)
    return HandoffResult(session_id=resolved.session_id, path=str(path))
