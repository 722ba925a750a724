"""What the commands share and that needs no click: exit codes, user errors, output helpers, the refresh scan.

``voyager search`` runs without importing click when its arguments are plain (see
:mod:`voyager_sessions.main`), so everything it calls lives here or below; :mod:`voyager_sessions.cli`
imports the same names for the other commands. Errors are plain exceptions carrying
their exit code; whichever path raised one, :class:`voyager_sessions.cli.LazyGroup` prints it
as one ``voyager: …`` line on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from voyager_sessions.errors import (  # noqa: F401  (re-exported: the commands' vocabulary)
    EXIT_BUSY,
    EXIT_INTERNAL,
    EXIT_NONE,
    EXIT_OK,
    Busy,
    UserError,
    VoyagerError,
)
from voyager_sessions import invocation
from voyager_sessions.paths import data_dir as _default_data_dir


def data_dir() -> Path:
    """The data dir this command works on: the client's, for a command a server runs for one."""
    inv = invocation.current()
    return _default_data_dir() if inv is None else inv.data_dir


def data_dir_label() -> str:
    """The data dir as this command's user named it (what ``stats`` prints)."""
    inv = invocation.current()
    return str(_default_data_dir()) if inv is None else inv.data_dir_label


def private_umask() -> None:
    """Everything Voyager writes is private to the user (the root command's first act)."""
    os.umask(0o077)


def echo(message: str = "", *, err: bool = False, color: bool | None = None) -> None:
    """``click.echo``, importing click only when something is printed as text (``--json`` never is).

    Output goes where the current invocation says (a client's captured streams under
    ``voyager serve``), so click strips colours or not exactly as it would there.
    """
    import click

    click.echo(message, file=invocation.text_stream(err), err=err, color=color)


def emit_json(obj: Any) -> None:
    """``obj`` as one JSON document on stdout (C1 controls and DEL escaped: see ``textsafe``)."""
    emit_jsonl((obj,))


def emit_jsonl(objs: Iterable[Any]) -> None:
    """Each of ``objs`` as one JSON document a line on stdout (``--jsonl``), escaped as :func:`emit_json` does."""
    import msgspec

    from voyager_sessions.textsafe import escape_json_controls

    encode = msgspec.json.Encoder().encode
    out = invocation.binary_stdout()
    for obj in objs:
        out.write(escape_json_controls(encode(obj)) + b"\n")
    out.flush()


def use_color(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return invocation.isatty(err=False)


def failure(exc: BaseException) -> tuple[str, int]:
    """The one line (without newline) and the exit code a command's failure is reported with.

    A ``VoyagerError`` is its message; an interrupt is exit 130; anything else is a bug,
    exit 4 with a hint (``VOYAGER_DEBUG=1`` makes the CLI raise instead). The click CLI
    and ``voyager serve`` report through this one function, so they say the same.
    """
    from voyager_sessions.textsafe import printable

    if isinstance(exc, VoyagerError):
        return f"voyager: {printable(str(exc))}", exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return "voyager: interrupted", 130
    return (f"voyager: internal error: {type(exc).__name__}: {printable(str(exc))} "
            "(set VOYAGER_DEBUG=1 for a traceback)", EXIT_INTERNAL)


def notice_line(notice: Any) -> str:
    """How a skipped piece met during a scan is reported on stderr."""
    from voyager_sessions.textsafe import printable

    return f"voyager: skipped {printable(notice.describe())}"


def open_reader(ddir: Path) -> Any:
    """A context manager yielding an ``api.Reader`` of ``ddir``: the server's, or one opened for this command."""
    inv = invocation.current()
    if inv is not None and inv.backend is not None:
        return inv.backend.reader(ddir)
    from voyager_sessions import api

    return api.reader(ddir)


def refresh_scan(ddir: Path, *, quiet: bool) -> None:
    """The refresh before a search: ``run_scan`` here, the server's own scan there; raises as ``run_scan`` does."""
    inv = invocation.current()
    if inv is not None and inv.backend is not None:
        inv.backend.refresh(ddir, quiet)
    else:
        run_scan(quiet=quiet, ddir=ddir)


def run_scan(*, quiet: bool, providers: list[str] | None = None, keep_missing: bool = False, wait: float = 0.0,
             env: Any = None, ddir: Path | None = None, rebuild: bool = False, workers: int | None = None,
             changes: Any = None) -> Any:
    """Scan ``ddir`` (default: the data dir) with progress and skip notices on stderr; raises Busy if a scan runs."""
    from voyager_sessions.scan import scan
    ddir = ddir or data_dir()
    progress = None
    # A progress bar only on this process's own terminal: never into a capture for a client.
    if not quiet and invocation.current() is None and sys.stderr.isatty():
        progress = _progress_printer()

    def on_notice(n: Any) -> None:
        if not quiet:
            echo(notice_line(n), err=True)

    try:
        summary = scan(ddir, env, providers=providers, keep_missing=keep_missing, wait=wait,
                       progress=progress, on_notice=on_notice, rebuild=rebuild, workers=workers, changes=changes)
    finally:
        if progress is not None:
            echo("", err=True)
    return summary


def _progress_printer() -> Any:
    import time

    t0 = time.monotonic()

    def show(done: int, total: int, events: int) -> None:
        el = max(time.monotonic() - t0, 1e-6)
        rate = events / el
        eta = (total - done) * (el / done) if done else 0
        width = 24
        fill = int(width * done / total) if total else width
        sys.stderr.write(
            f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} sources  {events} events  "
            f"{rate:,.0f}/s  eta {eta:4.0f}s "
        )
        sys.stderr.flush()

    return show
