"""``voyager resume`` and ``voyager export``: from a session found to the work, in its agent or in a file.

Thin click commands over the API's session operations (:mod:`voyager_sessions.api.sessions`: the resume
plan, the export document) and the renderers of :mod:`voyager_sessions.export`. ``SESSION`` is an id, a
native id, an unambiguous prefix, or ``-``: the first hit of the last ``voyager search``
(:mod:`voyager_sessions.core.lastsearch`). Loaded only when one of them runs (see ``LAZY_COMMANDS`` in
:mod:`voyager_sessions.cli.app`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from voyager_sessions.cli.common import data_dir
from voyager_sessions.core.plural import count
from voyager_sessions.core.textsafe import printable

SESSION_HELP = "SESSION: id, native id, unambiguous prefix, or - (the first hit of the last `voyager search`)."


def said_last_search(session_id: str, title: str | None, query: str | None) -> None:
    """When ``-`` named the session: which one, on stderr, so nobody is surprised."""
    if query is None:
        return
    click.echo(
        f"voyager: '-' is {printable(session_id)}{' ' + repr(printable(title)) if title else ''}, "
        f"the first hit of `voyager search {printable(query)}`",
        err=True,
    )


@click.command(epilog=SESSION_HELP)
@click.argument("session")
@click.option(
    "--print", "print_only", is_flag=True, help="Print the command (quoted for a shell) instead of running it."
)
def resume(session: str, print_only: bool) -> None:
    """Reopen SESSION in its own agent, in the session's working directory.

    The agent replaces voyager (it gets the terminal). Its program must be on PATH and the
    directory must still exist, belong to you (or root) and be writable by no other user; what
    is missing is named otherwise (exit 2).
    """
    from voyager_sessions.api import SessionRequest
    from voyager_sessions.api.resume import hand_over
    from voyager_sessions.api.sessions import require_resumable
    from voyager_sessions.api.sessions import resume as plan_of

    plan = plan_of(SessionRequest(session=session), data_dir=data_dir())
    row = plan.session
    said_last_search(row.session_id, row.title, plan.via_last_search)
    if print_only and plan.command is not None:
        line = plan.command
        shown = printable(line)
        if shown != line and sys.stdout.isatty():
            # Control characters would drive this terminal: shown as stand-ins here, exact when piped.
            click.echo(
                "voyager: the command holds control characters (shown as stand-ins); "
                "pipe it to a shell to run it exactly",
                err=True,
            )
            line = shown
        click.echo(line)
        return
    how = require_resumable(plan)
    where = f" in {printable(how.cwd)}" if how.cwd else ""
    click.echo(f"voyager: resuming {plan.agent} session {printable(row.native_id)}{where}", err=True)
    hand_over(how)


@click.command(epilog=SESSION_HELP)
@click.argument("session")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html"]),
    help="md (GitHub-ready Markdown), json (the `show --json` document) or html (one self-contained "
    "page). Default: from -o's extension, else md.",
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="Write to this file (private, atomic) instead of stdout."
)
@click.option("--force", is_flag=True, help="Replace the -o file if it exists.")
@click.option(
    "--redact",
    is_flag=True,
    help="Replace API keys, tokens and passwords of well-known shapes (docs/export.md lists them).",
)
def export(session: str, fmt: str | None, output: Path | None, force: bool, redact: bool) -> None:
    """Write SESSION's whole timeline as Markdown, JSON or HTML.

    Human turns, replies, reasoning and tool calls with their output (folded, long output
    capped, exit codes), the checkpoint, and the session's facts.
    """
    from voyager_sessions.api import ExportRequest
    from voyager_sessions.api.sessions import export as exported
    from voyager_sessions.export import FORMAT_OF_SUFFIX, render, write_private

    to_file = output is not None and str(output) != "-"
    if fmt is None:
        fmt = FORMAT_OF_SUFFIX.get(output.suffix.lower(), "md") if to_file else "md"  # type: ignore[union-attr]
    got = exported(ExportRequest(session=session, redact=redact), data_dir=data_dir())
    doc, counts = got.doc, got.redacted
    said_last_search(doc.timeline.session.session_id, doc.timeline.session.title, got.via_last_search)
    data = render(doc, fmt)
    if redact:
        named = ", ".join(f"{name} ×{n}" for name, n in sorted(counts.items()))
        click.echo(
            f"voyager: redacted {count(sum(counts.values()), 'match')}{f' ({named})' if named else ''}", err=True
        )
    if to_file:
        write_private(output, data, force=force)  # type: ignore[arg-type]
        click.echo(
            f"voyager: wrote {printable(str(output))} ({fmt}, {len(doc.timeline.events)} events, {len(data):,} bytes)",
            err=True,
        )
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
