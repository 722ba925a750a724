"""``voyager checkpoint …``: a thin click layer over the application API's checkpoint operations.

This module owns argument parsing and printing results as text or JSON. Each command
reads its arguments into a request of :mod:`voyager_sessions.api.checkpoints`, calls the
operation and renders the result document; resolving SESSION, every decision about
state (merging, snapshots, undo, pruning: the store's) and telling the search index
happen behind the API, so ``voyager mcp``'s task-state tools behave the same. The text
renderings come from :mod:`voyager_sessions.store.checkpoints.render` (through the API).

Conventions (see docs/architecture.md): results on stdout, diagnostics on stderr; ``--json``
prints msgspec-encoded result Structs carrying ``schema_version``; errors are the one
family of :mod:`voyager_sessions.core.errors`, printed by the root group as one
``voyager: …`` line (2 for a user or environment error, 3 for a database held too long
by another writer); ``status`` of a session without a checkpoint is exit 1 ("no hits").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import click

from voyager_sessions.cli.common import emit_json
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir
from voyager_sessions.core.paths import data_dir as default_data_dir
from voyager_sessions.core.textsafe import printable

# The API module (and the store under it) is imported inside functions: `voyager --help` must not pay for it.


def __getattr__(name: str) -> Any:
    """``Resolved`` and ``Resolver`` (what an injected resolver returns and is), from the API on first use."""
    if name in ("Resolved", "Resolver"):
        from voyager_sessions.api import checkpoints as checkpoints_api

        return getattr(checkpoints_api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _warn(message: str) -> None:
    click.echo(f"warning: {printable(message)}", err=True)


def _out(text: str) -> None:
    """Print ``text`` for a person: checkpoint text comes from sessions and agents, so control characters are made visible."""
    click.echo(printable(text, multiline=True))


class _Ctx(NamedTuple):
    ddir: DataDir
    resolver: Callable[[Path, str], Any] | None  # checkpoints_api.Resolver

    def call(self) -> dict[str, Any]:
        """What every API call of a command is given: the data dir, the resolver (a test may inject one), warnings."""
        return {"data_dir": self.ddir, "resolver": self.resolver, "warn": _warn}


def _obj(ctx: click.Context) -> _Ctx:
    obj = ctx.find_object(dict) or {}
    return _Ctx(DataDir(obj.get("data_dir") or default_data_dir()), obj.get("resolver"))


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
@click.option(
    "--done", "done", multiple=True, metavar="STEP", help="Append a completed step (leaves next steps). Repeatable."
)
@click.option("--next", "next_", multiple=True, metavar="STEP", help="Append a next step. Repeatable.")
@click.option("--blocker", multiple=True, metavar="TEXT", help="Append a blocker. Repeatable.")
@click.option("--file", "file_", multiple=True, metavar="PATH", help="Append a touched file. Repeatable.")
@click.option("--note", help="Replace the notes.")
@click.option(
    "--from-json",
    "from_json",
    metavar="FILE|-",
    help="Replace the whole checkpoint with a JSON document; other options apply on top.",
)
@json_option
@click.pass_context
def save(
    ctx: click.Context,
    session: str,
    title: str | None,
    objective: str | None,
    status: str | None,
    summary: str | None,
    plan: str | None,
    done: tuple[str, ...],
    next_: tuple[str, ...],
    blocker: tuple[str, ...],
    file_: tuple[str, ...],
    note: str | None,
    from_json: str | None,
    as_json: bool,
) -> None:
    """Merge changes into SESSION's checkpoint. Given fields replace; --done/--next/--blocker/--file append.

    A save that changes nothing writes nothing (no new snapshot, no new timestamp).
    An empty value (--status "") clears a field.
    """
    from voyager_sessions.api import checkpoints as cp

    c = _obj(ctx)
    # Read and validate the document before anything else: a bad one writes nothing.
    replace = None
    if from_json is not None:
        replace = cp.parse_document(_read_document(from_json))
    result = cp.save(
        cp.SaveRequest(
            session=session,
            replace=replace,
            title=title,
            objective=objective,
            status=status,
            summary=summary,
            plan=plan,
            note=note,
            done=list(done),
            next=list(next_),
            blockers=list(blocker),
            files=list(file_),
        ),
        **c.call(),
    )
    if as_json:
        emit_json(result)
    elif result.changed:
        _out(f"saved {result.session_id} (snapshot {result.snapshot})")
    else:
        _out(f"unchanged {result.session_id}: nothing written")


def _read_document(source: str) -> bytes:
    """The ``--from-json`` document, read no further than one byte past the limit (``/dev/zero`` never ends)."""
    from voyager_sessions.api.checkpoints import MAX_PAYLOAD_BYTES, document_too_large

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
    from voyager_sessions.api import checkpoints as cp

    result = cp.status(cp.StatusRequest(session=session), **_obj(ctx).call())
    if as_json:
        emit_json(result)
    elif result.checkpoint is None:
        _out(f"no checkpoint for {result.session_id}")
    else:
        _out(cp.render_status(result.checkpoint, result.snapshots))
    if result.checkpoint is None:
        ctx.exit(1)


@checkpoint.command("list")
@json_option
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """List sessions that have a checkpoint, most recently updated first."""
    from voyager_sessions.api import checkpoints as cp

    c = _obj(ctx)
    result = cp.list_checkpoints(cp.ListRequest(), data_dir=c.ddir, warn=_warn)
    if as_json:
        emit_json(result)
        return
    rows = result.sessions
    if not rows:
        _out("no checkpoints")
        return
    for r in rows:
        title = r.title or "(untitled)"
        state = f" [{r.status}]" if r.status else ""
        _out(f"{cp.when(r.updated_at)}  {r.session_id}  {title}{state}  ({r.snapshots} snapshots)")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def snapshots(ctx: click.Context, session: str, as_json: bool) -> None:
    """List SESSION's snapshots, newest first; * marks the one the current state came from."""
    from voyager_sessions.api import checkpoints as cp

    result = cp.snapshots(cp.SnapshotsRequest(session=session), **_obj(ctx).call())
    if as_json:
        emit_json(result)
        return
    if not result.snapshots:
        _out(f"no snapshots for {result.session_id}")
        return
    when = cp.when
    for s in result.snapshots:
        mark = "*" if s.current else " "
        about = s.payload.status or s.payload.title or ""
        restored = f"  restored {when(s.restored_at)}" if s.restored_at else ""
        _out(f"{mark} {s.name:<38} {s.kind:<11} {when(s.captured_at)}  {about}{restored}".rstrip())


@checkpoint.command()
@click.argument("session")
@click.option(
    "--snapshot", "name", metavar="NAME", help="Snapshot to restore (default: the version before the current one)."
)
@json_option
@click.pass_context
def restore(ctx: click.Context, session: str, name: str | None, as_json: bool) -> None:
    """Make a snapshot SESSION's current checkpoint. The replaced state is kept for `undo`."""
    from voyager_sessions.api import checkpoints as cp

    result = cp.restore(cp.RestoreRequest(session=session, snapshot=name), **_obj(ctx).call())
    _after_restore(result, as_json, "restored")


@checkpoint.command()
@click.argument("session")
@json_option
@click.pass_context
def undo(ctx: click.Context, session: str, as_json: bool) -> None:
    """Revert SESSION's last restore."""
    from voyager_sessions.api import checkpoints as cp

    result = cp.undo(cp.UndoRequest(session=session), **_obj(ctx).call())
    _after_restore(result, as_json, "undid restore: back to")


def _after_restore(result: Any, as_json: bool, verb: str) -> None:
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
    from voyager_sessions.api import checkpoints as cp

    result = cp.clear(cp.ClearRequest(session=session), **_obj(ctx).call())
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
    from voyager_sessions.api import checkpoints as cp

    result = cp.handoff(cp.HandoffRequest(session=session), **_obj(ctx).call())
    if as_json:
        emit_json(result)
    else:
        _out(result.path)
