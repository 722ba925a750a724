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
from pathlib import Path
from typing import Any

from voyager_sessions.errors import (  # noqa: F401  (re-exported: the commands' vocabulary)
    EXIT_BUSY,
    EXIT_NONE,
    EXIT_OK,
    EXIT_USAGE,
    MAX_INT,
    Busy,
    UserError,
    VoyagerError,
)
from voyager_sessions.paths import data_dir


def private_umask() -> None:
    """Everything Voyager writes is private to the user (the root command's first act)."""
    os.umask(0o077)


def echo(message: str = "", *, err: bool = False, color: bool | None = None) -> None:
    """``click.echo``, importing click only when something is printed as text (``--json`` never is)."""
    import click

    click.echo(message, err=err, color=color)


def emit_json(obj: Any) -> None:
    """``obj`` as one JSON document on stdout (C1 controls and DEL escaped: see ``textsafe``)."""
    import msgspec

    from voyager_sessions.textsafe import escape_json_controls

    sys.stdout.buffer.write(escape_json_controls(msgspec.json.encode(obj)) + b"\n")
    sys.stdout.flush()


def use_color(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def run_scan(*, quiet: bool, providers: list[str] | None = None, keep_missing: bool = False, wait: float = 0.0,
             env: Any = None, ddir: Path | None = None, rebuild: bool = False) -> Any:
    """Scan ``ddir`` (default: the data dir) with progress and skip notices on stderr; raises Busy if a scan runs."""
    from voyager_sessions.scan import scan
    ddir = ddir or data_dir()
    progress = None
    if not quiet and sys.stderr.isatty():
        progress = _progress_printer()

    def on_notice(n: Any) -> None:
        if not quiet:
            from voyager_sessions.textsafe import printable

            echo(f"voyager: skipped {printable(n.describe())}", err=True)

    try:
        summary = scan(ddir, env, providers=providers, keep_missing=keep_missing, wait=wait,
                       progress=progress, on_notice=on_notice, rebuild=rebuild)
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
