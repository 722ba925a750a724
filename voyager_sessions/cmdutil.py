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

from voyager_sessions.paths import data_dir

EXIT_OK, EXIT_NONE, EXIT_USAGE, EXIT_BUSY = 0, 1, 2, 3
#: The largest count or offset an option takes (what SQLite and Tantivy can hold).
MAX_INT = 2**62


class VoyagerError(Exception):
    """A failure reported as one line on stderr (``voyager: <message>``), exit ``exit_code``."""

    exit_code = EXIT_USAGE


class UserError(VoyagerError):
    """A mistake the user can fix: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE


class Busy(VoyagerError):
    """Another scan holds the writer: exit 3."""

    exit_code = EXIT_BUSY


def private_umask() -> None:
    """Everything Voyager writes is private to the user (the root command's first act)."""
    os.umask(0o077)


def echo(message: str = "", *, err: bool = False, color: bool | None = None) -> None:
    """``click.echo``, importing click only when something is printed as text (``--json`` never is)."""
    import click

    click.echo(message, err=err, color=color)


#: What a command that needs the index says when there is none.
NO_INDEX = "no index yet: run `voyager scan` (or `voyager demo` to try it)"


def emit_json(obj: Any) -> None:
    import msgspec

    sys.stdout.buffer.write(msgspec.json.encode(obj) + b"\n")
    sys.stdout.flush()


def use_color(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def run_scan(*, quiet: bool, providers: list[str] | None = None, keep_missing: bool = False, wait: float = 0.0,
             env: Any = None, ddir: Path | None = None) -> Any:
    """Scan ``ddir`` (default: the data dir) with progress and skip notices on stderr; raises Busy if a scan runs."""
    from voyager_sessions.ingest.pipeline import scan
    from voyager_sessions.lock import ScanBusy

    ddir = ddir or data_dir()
    progress = None
    if not quiet and sys.stderr.isatty():
        progress = _progress_printer()

    def on_notice(n: Any) -> None:
        if not quiet:
            echo(f"voyager: skipped {n.describe()}", err=True)

    try:
        summary = scan(ddir, env, providers=providers, keep_missing=keep_missing, wait=wait,
                       progress=progress, on_notice=on_notice)
    except ScanBusy as exc:
        raise Busy(str(exc)) from None
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
