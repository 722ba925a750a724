"""``voyager checkpoint …``: a thin click layer over :class:`voyager_sessions.store.checkpoints.CheckpointStore`.

This module owns argument parsing, resolving what the user typed as SESSION to a
Voyager session id, and rendering results as text or JSON. Every decision about
state (merging, snapshots, undo, pruning) lives in the store, so the same behaviour
serves the CLI, tests and any future server.

Conventions (see DESIGN.md): results on stdout, diagnostics on stderr; ``--json``
prints msgspec-encoded result Structs carrying ``schema_version``; a user error is one
line on stderr and exit 2; a database held too long by another writer is exit 3;
``status`` of a session without a checkpoint is exit 1 ("no hits").
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import click

from voyager_sessions.cmdutil import emit_json
from voyager_sessions.paths import data_dir as default_data_dir
from voyager_sessions.paths import DataDir, ensure_private_dir

# Store modules are imported inside functions: `voyager --help` must not pay for them.

DEFAULT_PROJECT = "default"


class Resolved(NamedTuple):
    """A session the user named: its Voyager id and, when the index knows it, its working directory."""

    session_id: str
    cwd: str | None


#: ``resolver(data_dir, ref) -> Resolved``; raises :class:`CheckpointCLIError` when ``ref`` names no single session.
Resolver = Callable[[Path, str], Resolved]


class CheckpointCLIError(click.ClickException):
    """A user error: printed as one ``Error: …`` line on stderr, exit 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class BusyCLIError(CheckpointCLIError):
    """Another writer held the checkpoint database too long: exit 3, try again."""

    exit_code = 3


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


# ---------------------------------------------------------------------------
# Resolving SESSION
# ---------------------------------------------------------------------------


def resolve(data_dir: Path, ref: str) -> Resolved:
    """Turn a Voyager id, a provider-native id or an unambiguous prefix into a session id.

    The index's session table is asked first (it may not exist yet: Voyager may never
    have scanned); then sessions that already have a checkpoint; finally a ref that
    looks like a Voyager id (``provider:native``) is accepted as given, so an agent can
    checkpoint a session before the next scan has seen it.
    """
    from voyager_sessions.store.checkpoints import CheckpointError, default_path, require_id
    from voyager_sessions.store.db import StoreError

    try:
        ref = require_id(ref, "session")
    except CheckpointError as exc:
        raise CheckpointCLIError(str(exc)) from None

    ids: list[str] = []
    cwd: str | None = None
    if DataDir(data_dir).state_db.exists():
        from voyager_sessions.store.state import StateStore

        try:
            state = StateStore(DataDir(data_dir).state_db, readonly=True)
        except StoreError as exc:
            _warn(f"session index unavailable ({exc}); matching {ref!r} against checkpoints only")
        else:
            try:
                ids = state.resolve_session(ref)
                if len(ids) == 1:
                    rec = state.sessions_by_id(ids).get(ids[0])
                    cwd = rec.session.cwd if rec else None
            except Exception as exc:  # a damaged index must not block checkpoints
                _warn(f"session index unreadable ({' '.join(str(exc).split())})")
                ids = []
            finally:
                state.close()
    if not ids and default_path(data_dir).exists():
        with _store(data_dir) as store:
            ids = store.find_sessions(ref)
    if len(ids) == 1:
        return Resolved(ids[0], cwd)
    if len(ids) > 1:
        shown = ", ".join(ids[:10]) + (f" (and {len(ids) - 10} more)" if len(ids) > 10 else "")
        raise CheckpointCLIError(f"{ref!r} matches {len(ids)} sessions: {shown}; give more of the id")
    if ":" in ref:
        return Resolved(ref, None)
    raise CheckpointCLIError(f"no session matches {ref!r}; give a full id like claude:<id> (see `voyager list`)")


def _project_for(store: Any, resolved: Resolved) -> str:
    # A session keeps the project of its first save; otherwise its working directory
    # (when the index knows it) names the project.
    bound = store.project_of(resolved.session_id)
    if bound is not None:
        return bound
    if resolved.cwd:
        return os.path.normpath(resolved.cwd)
    return DEFAULT_PROJECT


# ---------------------------------------------------------------------------
# Plumbing
# ---------------------------------------------------------------------------


@contextmanager
def _store(data_dir: Path) -> Iterator[Any]:
    from voyager_sessions.store.checkpoints import CheckpointStore, default_path

    store = CheckpointStore.open(default_path(data_dir))
    try:
        yield store
    finally:
        store.close()


class _Group(click.Group):
    """Turns store errors raised by any subcommand into one-line CLI errors."""

    def invoke(self, ctx: click.Context) -> Any:
        from voyager_sessions.store.db import BusyError, StoreError

        try:
            return super().invoke(ctx)
        except BusyError as exc:
            raise BusyCLIError(str(exc)) from None
        except StoreError as exc:
            raise CheckpointCLIError(str(exc)) from None
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            raise CheckpointCLIError(f"cannot write{where}: {exc.strerror or exc}") from None


class _Ctx(NamedTuple):
    data_dir: Path
    resolver: Resolver


def _obj(ctx: click.Context) -> _Ctx:
    obj = ctx.find_object(dict) or {}
    return _Ctx(Path(obj.get("data_dir") or default_data_dir()), obj.get("resolver") or resolve)


def _writable_data_dir(path: Path) -> Path:
    try:
        return ensure_private_dir(path)
    except OSError as exc:
        raise CheckpointCLIError(f"cannot create data dir {path}: {exc.strerror or exc}") from None


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _index_hook(data_dir: Path, session_id: str, cp: Any | None) -> None:
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
        _warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    except ImportError as exc:
        _warn(f"checkpoint saved, but the search index was not updated: {exc}")
        return
    from voyager_sessions.store.checkpoints import checkpoint_text

    try:
        module.index_checkpoint(data_dir, session_id, checkpoint_text(cp) if cp is not None else "")
    except Exception as exc:
        _warn(f"checkpoint saved, but the search index was not updated: {' '.join(str(exc).split())}")


json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------


@click.group(cls=_Group)
def checkpoint() -> None:
    """Save, inspect and restore the task state of a session.

    A checkpoint is what a person or an agent wants the next one to know: objective,
    status, plan, steps done and next, blockers, files, notes. Every change is kept as
    a snapshot; `restore` goes back, `undo` reverts a restore. Checkpoints live in
    <data dir>/checkpoints.db and survive an index reset.
    """


@checkpoint.command()
@click.argument("session")
@click.option("--title", help="Replace the title.")
@click.option("--objective", help="Replace the objective.")
@click.option("--status", help="Replace the status (free text, e.g. 'in progress').")
@click.option("--summary", help="Replace the summary.")
@click.option("--plan", help="Replace the current plan.")
@click.option("--done", "done", multiple=True, metavar="STEP", help="Append a completed step (leaves next steps). Repeatable.")
@click.option("--next", "next_", multiple=True, metavar="STEP", help="Append a next step. Repeatable.")
@click.option("--blocker", multiple=True, metavar="TEXT", help="Append a blocker. Repeatable.")
@click.option("--file", "file_", multiple=True, metavar="PATH", help="Append a touched file. Repeatable.")
@click.option("--note", help="Replace the notes.")
@click.option("--from-json", "from_json", metavar="FILE|-", help="Replace the whole checkpoint with a JSON document; other options apply on top.")
@json_option
@click.pass_context
def save(
    ctx: click.Context, session: str, title: str | None, objective: str | None, status: str | None,
    summary: str | None, plan: str | None, done: tuple[str, ...], next_: tuple[str, ...],
    blocker: tuple[str, ...], file_: tuple[str, ...], note: str | None, from_json: str | None, as_json: bool,
) -> None:
    """Merge changes into SESSION's checkpoint. Given fields replace; --done/--next/--blocker/--file append.

    A save that changes nothing writes nothing (no new snapshot, no new timestamp).
    An empty value (--status "") clears a field.
    """
    from msgspec import UNSET

    from voyager_sessions.store.checkpoints import CheckpointPatch, decode_payload

    c = _obj(ctx)
    # Read and validate the document before anything else: a bad one writes nothing.
    replace = None
    if from_json is not None:
        replace = decode_payload(_read_document(from_json))
    patch = CheckpointPatch(
        replace=replace,
        title=UNSET if title is None else title,
        objective=UNSET if objective is None else objective,
        status=UNSET if status is None else status,
        summary=UNSET if summary is None else summary,
        current_plan=UNSET if plan is None else plan,
        notes=UNSET if note is None else note,
        add_done=done, add_next=next_, add_blockers=blocker, add_files=file_,
    )
    data_dir = _writable_data_dir(c.data_dir)
    resolved = c.resolver(data_dir, session)
    with _store(data_dir) as store:
        result = store.save(resolved.session_id, _project_for(store, resolved), patch)
    if result.changed and result.checkpoint is not None:
        _index_hook(data_dir, result.session_id, result.checkpoint)
    if as_json:
        emit_json(result)
    elif result.changed:
        click.echo(f"saved {result.session_id} (snapshot {result.snapshot})")
    else:
        click.echo(f"unchanged {result.session_id}: nothing written")


def _read_document(source: str) -> bytes:
    if source == "-":
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    try:
        with open(source, "rb") as f:
            return f.read()
    except OSError as exc:
        raise CheckpointCLIError(f"cannot read {source}: {exc.strerror or exc}") from None


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def status(ctx: click.Context, session: str, as_json: bool) -> None:
    """Show SESSION's checkpoint. Exit 1 if it has none."""
    from voyager_sessions.store.checkpoints import StatusResult, default_path

    c = _obj(ctx)
    resolved = c.resolver(c.data_dir, session)
    result = StatusResult(session_id=resolved.session_id, checkpoint=None, snapshots=0)
    if default_path(c.data_dir).exists():  # a read must not create the database
        with _store(c.data_dir) as store:
            result = store.status(resolved.session_id)
    if as_json:
        emit_json(result)
    elif result.checkpoint is None:
        click.echo(f"no checkpoint for {result.session_id}")
    else:
        click.echo(_render_status(result.checkpoint, result.snapshots))
    if result.checkpoint is None:
        ctx.exit(1)


def _render_status(cp: Any, snapshots: int) -> str:
    lines = [f"{cp.session_id}  (project {cp.project_id})"]
    for label, value in (("Title", cp.title), ("Status", cp.status), ("Objective", cp.objective)):
        if value:
            lines.append(f"{label + ':':<11}{value}")
    lines.append(f"{'Updated:':<11}{_when(cp.updated_at)}  ({snapshots} snapshot{'s' if snapshots != 1 else ''})")
    for label, value in (("Summary", cp.summary), ("Plan", cp.current_plan)):
        if value:
            lines += ["", f"{label}:"] + [f"  {line}" for line in value.splitlines()]
    for label, items, mark in (("Done", cp.completed_steps, "[x] "), ("Next", cp.next_steps, "[ ] "),
                               ("Blockers", cp.blockers, "! "), ("Files", cp.files_touched, "")):
        if items:
            lines += ["", f"{label}:"] + [f"  {mark}{item}" for item in items]
    if cp.notes:
        lines += ["", "Notes:"] + [f"  {line}" for line in cp.notes.splitlines()]
    return "\n".join(lines)


@checkpoint.command("list")
@json_option
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """List sessions that have a checkpoint, most recently updated first."""
    from voyager_sessions.store.checkpoints import CheckpointList, default_path

    c = _obj(ctx)
    rows = []
    if default_path(c.data_dir).exists():
        with _store(c.data_dir) as store:
            rows = store.list()
    if as_json:
        emit_json(CheckpointList(sessions=rows))
        return
    if not rows:
        click.echo("no checkpoints")
        return
    for r in rows:
        title = r.title or "(untitled)"
        state = f" [{r.status}]" if r.status else ""
        click.echo(f"{_when(r.updated_at)}  {r.session_id}  {title}{state}  ({r.snapshots} snapshots)")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def snapshots(ctx: click.Context, session: str, as_json: bool) -> None:
    """List SESSION's snapshots, newest first; * marks the one the current state came from."""
    from voyager_sessions.store.checkpoints import SnapshotList, default_path

    c = _obj(ctx)
    resolved = c.resolver(c.data_dir, session)
    snaps = []
    if default_path(c.data_dir).exists():
        with _store(c.data_dir) as store:
            snaps = store.snapshots(resolved.session_id)
    if as_json:
        emit_json(SnapshotList(session_id=resolved.session_id, snapshots=snaps))
        return
    if not snaps:
        click.echo(f"no snapshots for {resolved.session_id}")
        return
    for s in snaps:
        mark = "*" if s.current else " "
        about = s.payload.status or s.payload.title or ""
        restored = f"  restored {_when(s.restored_at)}" if s.restored_at else ""
        click.echo(f"{mark} {s.name:<38} {s.kind:<11} {_when(s.captured_at)}  {about}{restored}".rstrip())


@checkpoint.command()
@click.argument("session")
@click.option("--snapshot", "name", metavar="NAME", help="Snapshot to restore (default: the version before the current one).")
@json_option
@click.pass_context
def restore(ctx: click.Context, session: str, name: str | None, as_json: bool) -> None:
    """Make a snapshot SESSION's current checkpoint. The replaced state is kept for `undo`."""
    c = _obj(ctx)
    data_dir = _writable_data_dir(c.data_dir)
    resolved = c.resolver(data_dir, session)
    with _store(data_dir) as store:
        result = store.restore(resolved.session_id, name)
    _after_restore(data_dir, result, as_json, "restored")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def undo(ctx: click.Context, session: str, as_json: bool) -> None:
    """Revert SESSION's last restore."""
    c = _obj(ctx)
    data_dir = _writable_data_dir(c.data_dir)
    resolved = c.resolver(data_dir, session)
    with _store(data_dir) as store:
        result = store.undo(resolved.session_id)
    _after_restore(data_dir, result, as_json, "undid restore: back to")


def _after_restore(data_dir: Path, result: Any, as_json: bool, verb: str) -> None:
    if result.changed:
        _index_hook(data_dir, result.session_id, result.checkpoint)
    if as_json:
        emit_json(result)
    elif result.changed:
        extra = f"; previous state kept as {result.pre_restore}" if result.pre_restore else ""
        click.echo(f"{verb} {result.restored} for {result.session_id}{extra}")
    else:
        click.echo(f"unchanged {result.session_id}: already equal to {result.restored}")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def clear(ctx: click.Context, session: str, as_json: bool) -> None:
    """Delete SESSION's checkpoint and all its snapshots (permanent)."""
    from voyager_sessions.store.checkpoints import ClearResult, default_path

    c = _obj(ctx)
    resolved = c.resolver(c.data_dir, session)
    if default_path(c.data_dir).exists():
        with _store(c.data_dir) as store:
            result = store.clear(resolved.session_id)
    else:
        result = ClearResult(session_id=resolved.session_id, cleared=False, snapshots=0)
    if result.cleared:
        _index_hook(c.data_dir, result.session_id, None)
    if as_json:
        emit_json(result)
    elif result.cleared:
        click.echo(f"cleared {result.session_id} ({result.snapshots} snapshots deleted)")
    else:
        click.echo(f"no checkpoint for {result.session_id}: nothing to clear")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def handoff(ctx: click.Context, session: str, as_json: bool) -> None:
    """Write a Markdown hand-off of SESSION's checkpoint and print its path.

    The file is derived output under <data dir>/checkpoints/; it is never read back.
    """
    from voyager_sessions.store.checkpoints import CheckpointError, HandoffResult, default_path

    c = _obj(ctx)
    resolved = c.resolver(c.data_dir, session)
    if not default_path(c.data_dir).exists():
        raise CheckpointError(f"session {resolved.session_id} has no checkpoint")
    out_dir = _writable_data_dir(c.data_dir / "checkpoints")
    with _store(c.data_dir) as store:
        path = store.handoff(resolved.session_id, out_dir)
    if as_json:
        emit_json(HandoffResult(session_id=resolved.session_id, path=str(path)))
    else:
        click.echo(str(path))
