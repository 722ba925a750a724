"""``voyager checkpoint …``: a thin click layer over :class:`voyager_sessions.store.checkpoints.CheckpointStore`.

This module owns argument parsing, resolving what the user typed as SESSION to a
Voyager session id, and printing results as text or JSON. Every decision about state
(merging, snapshots, undo, pruning) lives in the store, and every text rendering in
:mod:`voyager_sessions.store.checkpoints.render`, so the same behaviour serves the
CLI, tests and any future server.

Conventions (see docs/architecture.md): results on stdout, diagnostics on stderr; ``--json``
prints msgspec-encoded result Structs carrying ``schema_version``; errors are the one
family of :mod:`voyager_sessions.errors`, printed by the root group as one
``voyager: …`` line (2 for a user or environment error, 3 for a database held too long
by another writer); ``status`` of a session without a checkpoint is exit 1 ("no hits").
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import click

# The operations' plumbing is the application's, shared with `voyager mcp`'s checkpoint tools.
from voyager_sessions.checkpoint_api import (  # noqa: F401  (Resolved, Resolver, DEFAULT_PROJECT: this module's API too)
    DEFAULT_PROJECT,
    Resolved,
    Resolver,
    resolve,
)
from voyager_sessions.checkpoint_api import if_stored as _if_stored
from voyager_sessions.checkpoint_api import index_hook as _index_hook
from voyager_sessions.checkpoint_api import open_store as _store
from voyager_sessions.checkpoint_api import project_for as _project_for
from voyager_sessions.checkpoint_api import writable as _writable
from voyager_sessions.cmdutil import emit_json
from voyager_sessions.errors import UserError
from voyager_sessions.paths import DataDir
from voyager_sessions.paths import data_dir as default_data_dir
from voyager_sessions.textsafe import printable

# Store modules are imported inside functions: `voyager --help` must not pay for them.


def _out(text: str) -> None:
    """Print ``text`` for a person: checkpoint text comes from sessions and agents, so control characters are made visible."""
    click.echo(printable(text, multiline=True))


# ---------------------------------------------------------------------------
# Plumbing
# ---------------------------------------------------------------------------


class _Ctx(NamedTuple):
    ddir: DataDir
    resolver: Resolver

    def resolve(self, ref: str) -> Resolved:
        return self.resolver(self.ddir.root, ref)


def _obj(ctx: click.Context) -> _Ctx:
    obj = ctx.find_object(dict) or {}
    return _Ctx(DataDir(obj.get("data_dir") or default_data_dir()), obj.get("resolver") or resolve)


json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------


@click.group()
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
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(session)
    with _store(c.ddir) as store:
        result = store.save(resolved.session_id, _project_for(store, resolved), patch)
    if result.changed and result.checkpoint is not None:
        _index_hook(c.ddir, result.session_id, result.checkpoint)
    if as_json:
        emit_json(result)
    elif result.changed:
        _out(f"saved {result.session_id} (snapshot {result.snapshot})")
    else:
        _out(f"unchanged {result.session_id}: nothing written")


def _read_document(source: str) -> bytes:
    """The ``--from-json`` document, read no further than one byte past the limit (``/dev/zero`` never ends)."""
    from voyager_sessions.store.checkpoints.model import MAX_PAYLOAD_BYTES, document_too_large

    try:
        if source == "-":
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # a text-only stdin (an embedding host): its characters, encoded
                data = sys.stdin.read(MAX_PAYLOAD_BYTES + 1).encode("utf-8")
            else:
                data = _read_capped(stream, MAX_PAYLOAD_BYTES + 1)
        else:
            with open(source, "rb") as f:
                data = _read_capped(f, MAX_PAYLOAD_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {source}: {exc.strerror or exc}") from None
    if len(data) > MAX_PAYLOAD_BYTES:
        raise document_too_large()
    return data


def _read_capped(stream: Any, limit: int) -> bytes:
    # A pipe answers a read with what it has, so loop; never ask for more than the cap.
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = stream.read(min(1 << 16, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def status(ctx: click.Context, session: str, as_json: bool) -> None:
    """Show SESSION's checkpoint. Exit 1 if it has none."""
    from voyager_sessions.store.checkpoints import StatusResult, render_status

    c = _obj(ctx)
    resolved = c.resolve(session)
    result = _if_stored(c.ddir, lambda store: store.status(resolved.session_id),
                        StatusResult(session_id=resolved.session_id, checkpoint=None, snapshots=0))
    if as_json:
        emit_json(result)
    elif result.checkpoint is None:
        _out(f"no checkpoint for {result.session_id}")
    else:
        _out(render_status(result.checkpoint, result.snapshots))
    if result.checkpoint is None:
        ctx.exit(1)


@checkpoint.command("list")
@json_option
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """List sessions that have a checkpoint, most recently updated first."""
    from voyager_sessions.store.checkpoints import CheckpointList
    from voyager_sessions.store.checkpoints.render import when

    c = _obj(ctx)
    rows = _if_stored(c.ddir, lambda store: store.list(), [])
    if as_json:
        emit_json(CheckpointList(sessions=rows))
        return
    if not rows:
        _out("no checkpoints")
        return
    for r in rows:
        title = r.title or "(untitled)"
        state = f" [{r.status}]" if r.status else ""
        _out(f"{when(r.updated_at)}  {r.session_id}  {title}{state}  ({r.snapshots} snapshots)")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def snapshots(ctx: click.Context, session: str, as_json: bool) -> None:
    """List SESSION's snapshots, newest first; * marks the one the current state came from."""
    from voyager_sessions.store.checkpoints import SnapshotList
    from voyager_sessions.store.checkpoints.render import when

    c = _obj(ctx)
    resolved = c.resolve(session)
    snaps = _if_stored(c.ddir, lambda store: store.snapshots(resolved.session_id), [])
    if as_json:
        emit_json(SnapshotList(session_id=resolved.session_id, snapshots=snaps))
        return
    if not snaps:
        _out(f"no snapshots for {resolved.session_id}")
        return
    for s in snaps:
        mark = "*" if s.current else " "
        about = s.payload.status or s.payload.title or ""
        restored = f"  restored {when(s.restored_at)}" if s.restored_at else ""
        _out(f"{mark} {s.name:<38} {s.kind:<11} {when(s.captured_at)}  {about}{restored}".rstrip())


@checkpoint.command()
@click.argument("session")
@click.option("--snapshot", "name", metavar="NAME", help="Snapshot to restore (default: the version before the current one).")
@json_option
@click.pass_context
def restore(ctx: click.Context, session: str, name: str | None, as_json: bool) -> None:
    """Make a snapshot SESSION's current checkpoint. The replaced state is kept for `undo`."""
    c = _obj(ctx)
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(session)
    with _store(c.ddir) as store:
        result = store.restore(resolved.session_id, name)
    _after_restore(c.ddir, result, as_json, "restored")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def undo(ctx: click.Context, session: str, as_json: bool) -> None:
    """Revert SESSION's last restore."""
    c = _obj(ctx)
    _writable(c.ddir.root, "data dir")
    resolved = c.resolve(session)
    with _store(c.ddir) as store:
        result = store.undo(resolved.session_id)
    _after_restore(c.ddir, result, as_json, "undid restore: back to")


def _after_restore(ddir: DataDir, result: Any, as_json: bool, verb: str) -> None:
    if result.changed:
        _index_hook(ddir, result.session_id, result.checkpoint)
    if as_json:
        emit_json(result)
    elif result.changed:
        extra = f"; previous state kept as {result.pre_restore}" if result.pre_restore else ""
        _out(f"{verb} {result.restored} for {result.session_id}{extra}")
    else:
        _out(f"unchanged {result.session_id}: already equal to {result.restored}")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def clear(ctx: click.Context, session: str, as_json: bool) -> None:
    """Delete SESSION's checkpoint and all its snapshots (permanent)."""
    from voyager_sessions.store.checkpoints import ClearResult

    c = _obj(ctx)
    resolved = c.resolve(session)
    result = _if_stored(c.ddir, lambda store: store.clear(resolved.session_id),
                        ClearResult(session_id=resolved.session_id, cleared=False, snapshots=0))
    if result.cleared:
        _index_hook(c.ddir, result.session_id, None)
    if as_json:
        emit_json(result)
    elif result.cleared:
        _out(f"cleared {result.session_id} ({result.snapshots} snapshots deleted)")
    else:
        _out(f"no checkpoint for {result.session_id}: nothing to clear")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def handoff(ctx: click.Context, session: str, as_json: bool) -> None:
    """Write a Markdown hand-off of SESSION's checkpoint and print its path.

    The file is derived output under <data dir>/checkpoints/; it is never read back.
    """
    from voyager_sessions.store.checkpoints import CheckpointError, HandoffResult

    c = _obj(ctx)
    resolved = c.resolve(session)
    if not c.ddir.checkpoints_db.exists():
        raise CheckpointError(f"session {resolved.session_id} has no checkpoint")
    out_dir = _writable(c.ddir.handoffs, "hand-off directory")
    with _store(c.ddir) as store:
        path = store.handoff(resolved.session_id, out_dir)
    if as_json:
        emit_json(HandoffResult(session_id=resolved.session_id, path=str(path)))
    else:
        _out(str(path))
