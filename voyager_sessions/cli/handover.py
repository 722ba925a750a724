"""``voyager resume`` and ``voyager export``: from a session found to the work, in its agent or in a file.

Thin click commands over :mod:`voyager_sessions.api.resume`, :mod:`voyager_sessions.export` and
the read side (:class:`voyager_sessions.api.Reader`, whose ``resolve`` is the one session
resolver). ``SESSION`` is an id, a native id, an unambiguous prefix, or ``-``: the first hit
of the last ``voyager search`` (:mod:`voyager_sessions.core.lastsearch`). Loaded only when one
of them runs (see ``LAZY_COMMANDS`` in :mod:`voyager_sessions.cli.app`).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from voyager_sessions.cli.common import UserError, data_dir
from voyager_sessions.core.paths import DataDir
from voyager_sessions.core.plural import count
from voyager_sessions.core.textsafe import printable

if TYPE_CHECKING:  # `voyager --help` loads this module for its summary line: no msgspec for that
    from voyager_sessions.core.model import SessionRecord

SESSION_HELP = "SESSION: id, native id, unambiguous prefix, or - (the first hit of the last `voyager search`)."


def resolve(reader, ref: str) -> SessionRecord:  # noqa: ANN001 - api.Reader, imported lazily
    """The session ``ref`` names; ``-`` is the last search's first hit (said on stderr, so nobody is surprised)."""
    if ref != "-":
        return reader.resolve(ref)
    from voyager_sessions.core.lastsearch import recall

    last = recall(reader.ddir)
    rec = reader.resolve(last.session_id)
    title = rec.session.title or last.title or ""
    click.echo(
        f"voyager: '-' is {printable(rec.session.id)}{' ' + repr(printable(title)) if title else ''}, "
        f"the first hit of `voyager search {printable(last.query)}`",
        err=True,
    )
    return rec


@click.command(epilog=SESSION_HELP)
@click.argument("session")
@click.option(
    "--print", "print_only", is_flag=True, help="Print the command (quoted for a shell) instead of running it."
)
def resume(session: str, print_only: bool) -> None:
    """Reopen SESSION in its own agent, in the session's working directory.

    The agent replaces voyager (it gets the terminal). Its program must be on PATH and the
    directory must still exist; what is missing is named otherwise (exit 2).
    """
    from voyager_sessions import api
    from voyager_sessions.export import agent_label
    from voyager_sessions.api.resume import hand_over, missing, recipe

    with api.reader(data_dir()) as r:
        rec = resolve(r, session)
    s = rec.session
    agent = agent_label(s.provider)
    how = recipe(s)
    if how is None:
        raise UserError(
            f"{agent} has no command that reopens a session outside its own app; hand it on instead: "
            f"voyager export {shlex.quote(s.id)} --format md -o session.md"
        )
    if print_only:
        line = how.command()
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
    gaps = missing(how)
    if gaps:
        raise UserError(
            f"cannot resume {s.id} in {agent}: {'; '.join(gaps)} "
            f"(`voyager resume {shlex.quote(s.id)} --print` shows the command)"
        )
    where = f" in {printable(how.cwd)}" if how.cwd else ""
    click.echo(f"voyager: resuming {agent} session {printable(s.native_id)}{where}", err=True)
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
    from voyager_sessions import api
    from voyager_sessions.export import FORMAT_OF_SUFFIX, build, render, write_private

    to_file = output is not None and str(output) != "-"
    if fmt is None:
        fmt = FORMAT_OF_SUFFIX.get(output.suffix.lower(), "md") if to_file else "md"  # type: ignore[union-attr]
    ddir = DataDir(data_dir())
    with api.reader(ddir) as r:
        rec = resolve(r, session)
        doc, counts = build(r, rec.session.id, redact=redact)
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
