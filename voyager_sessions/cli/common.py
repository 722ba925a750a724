"""What the commands share and that needs no click: exit codes, user errors, output helpers, the refresh scan.

``voyager search`` runs without importing click when its arguments are plain (see
:mod:`voyager_sessions.cli.main`), so everything it calls lives here or below; :mod:`voyager_sessions.cli.app`
imports the same names for the other commands. Errors are plain exceptions carrying
their exit code; whichever path raised one, :class:`voyager_sessions.cli.app.LazyGroup` prints it
as one ``voyager: …`` line on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from voyager_sessions.core.errors import (  # noqa: F401  (re-exported: the commands' vocabulary)
    EXIT_BUSY,
    EXIT_INTERNAL,
    EXIT_NONE,
    EXIT_OK,
    Busy,
    UserError,
    VoyagerError,
)
from voyager_sessions.cli import present
from voyager_sessions.core.errors import failure  # noqa: F401  (re-exported: how the CLI reports a failure)
from voyager_sessions.core.paths import data_dir as _default_data_dir


def data_dir() -> Path:
    """The data dir this command works on."""
    return _default_data_dir()


def private_umask() -> None:
    """Everything Voyager writes is private to the user (the root command's first act)."""
    os.umask(0o077)


def echo(message: str = "", *, err: bool = False, color: bool | None = None) -> None:
    """``click.echo`` of one line: through click when a command of click's runs (its context may say the colour),
    else written here as click writes it, so that a search printing text does not import click (with ``inspect``,
    ~21 ms of CPU, a third of a search's start-up)."""
    if "click" in sys.modules:
        import click

        click.echo(message, err=err, color=color)
        return
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # no stream attached (pythonw): nothing to write to
        return
    if "\x1b" in message and (not color if color is not None else not _isatty(stream)):
        import re

        message = re.sub(r"\033\[[0-?]*[ -/]*[@-~]", "", message)  # click's strip_ansi: styles only on a terminal
    line = message + "\n"
    try:
        stream.write(line)
    except UnicodeEncodeError:  # a stream set up as ASCII: click writes UTF-8 under it, and so does this
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            raise
        stream.flush()
        buffer.write(line.encode("utf-8", "replace"))
    stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def emit_json(obj: Any) -> None:
    """``obj`` as one JSON document on stdout (C1 controls and DEL escaped: see ``textsafe``)."""
    emit_jsonl((obj,))


def emit_jsonl(objs: Iterable[Any]) -> None:
    """Each of ``objs`` as one JSON document a line on stdout (``--jsonl``), escaped as :func:`emit_json` does."""
    import msgspec

    from voyager_sessions.core.textsafe import as_unicode, escape_json_controls

    encode = msgspec.json.Encoder().encode
    out = sys.stdout.buffer
    for obj in objs:
        try:
            data = encode(obj)
        except UnicodeEncodeError:  # a name that is not UTF-8 (doctor's paths from an agent's variable)
            data = encode(as_unicode(msgspec.to_builtins(obj)))
        out.write(escape_json_controls(data) + b"\n")
    out.flush()


def use_color(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def notice_line(notice: Any) -> str:
    """How a skipped piece met during a scan is reported on stderr."""
    from voyager_sessions.core.textsafe import printable

    return f"voyager: {'' if getattr(notice, 'repair', False) else 'skipped '}{printable(notice.describe())}"


class _Terminal(present.Streams):
    """``present.Writer`` for this process's own streams: text through click (as every command), JSON as bytes."""

    def text(self, line: str, *, err: bool = False, color: bool | None = None) -> None:
        echo(line, err=err, color=color)


def _refreshing_backend(*, bar: bool) -> Any:
    """``api.LocalBackend`` drawing a progress bar on this process's terminal while it refreshes (when ``bar``)."""
    from voyager_sessions import api

    class Refresh(api.LocalBackend):
        def refresh(self, ddir: Path, notice: Any) -> None:
            from voyager_sessions.cli.progress import Bar

            shown = Bar() if bar and sys.stderr.isatty() else None
            self.progress = shown
            try:
                super().refresh(ddir, notice)
            finally:
                if shown is not None:
                    shown.close()

    return Refresh()


def run_reading_command(cmd: str, params: dict[str, Any]) -> None:
    """Run reading command ``cmd`` (``params`` as click passes them) in this process: the API, then its renderer.

    The typed result is rendered by :mod:`voyager_sessions.cli.present`, which renders the bytes a
    ``voyager serve`` sends the same way: the same output either way. Exits with the command's code;
    an error propagates for the CLI to report.
    """
    import msgspec

    from voyager_sessions import api

    fields, view = present.request(cmd, params, use_color)
    req = api.decode_request(cmd, fields)
    ddir = data_dir()
    result: msgspec.Struct
    if isinstance(req, api.SearchRequest):
        quiet = present.quiet(view, sys.stderr.isatty())

        def notice(text: str, quiet_ok: bool) -> None:
            if not (quiet and quiet_ok):
                echo(present.notice_line(text), err=True)

        result = api.search(req, data_dir=ddir, backend=_refreshing_backend(bar=not quiet), notice=notice)
    else:
        result = api.OPERATIONS[cmd].run()(req, data_dir=ddir)
        if cmd == "stats":  # the data dir as the user named it
            result = msgspec.structs.replace(result, data_dir=str(ddir))
    code = present.render(cmd, fields, result, view, _Terminal())
    sys.exit(code)


def run_scan(
    *,
    quiet: bool,
    providers: list[str] | None = None,
    keep_missing: bool = False,
    wait: float = 0.0,
    env: Any = None,
    ddir: Path | None = None,
    rebuild: bool = False,
    workers: int | None = None,
    changes: Any = None,
) -> Any:
    """Scan ``ddir`` (default: the data dir) with progress and skip notices on stderr; raises Busy if a scan runs.

    Another process building the index (a first index a search left running in the background) is no
    reason to fail: this scan follows its progress (on a terminal) until it is done, then scans.
    """
    import time

    from voyager_sessions.api.freshness import building_elsewhere, scan
    from voyager_sessions.cli.progress import Bar, follow
    from voyager_sessions.core.paths import DataDir

    ddir = ddir or data_dir()
    drawn = not quiet and sys.stderr.isatty()

    def on_notice(n: Any) -> None:
        if not quiet:
            echo(notice_line(n), err=True)

    deadline = time.monotonic() + max(0.0, wait)
    while True:
        bar = Bar() if drawn else None
        try:
            return scan(
                ddir,
                env,
                providers=providers,
                keep_missing=keep_missing,
                wait=max(0.0, deadline - time.monotonic()),
                progress=bar,
                on_notice=on_notice,
                rebuild=rebuild,
                workers=workers,
                changes=changes,
            )
        except Busy:
            if changes is not None or not building_elsewhere(DataDir(ddir)):
                raise
        finally:
            if bar is not None:
                bar.close()
        follower = Bar() if drawn else None
        try:
            follow(DataDir(ddir), follower)
        finally:
            if follower is not None:
                follower.close()
        deadline = time.monotonic() + 30  # that scan is done: this one takes the lock as soon as it is free


def run_meaning(*, quiet: bool, ddir: Path | None = None, threads: int | None = None) -> Any:
    """Embed every session that has no meaning vector (``api.meaning``), a progress bar on a terminal's stderr;
    returns when every session has one. ``ModelMissing`` (one line: how to get it) without the model."""
    from voyager_sessions.api.meaning import embed_missing

    progress = None
    if not quiet and sys.stderr.isatty():
        import time

        t0 = time.monotonic()

        def progress(done: int, total: int) -> None:
            el = max(time.monotonic() - t0, 1e-6)
            eta = (total - done) * (el / done) if done else 0
            width = 24
            fill = int(width * done / total) if total else width
            sys.stderr.write(
                f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} sessions by meaning  "
                f"{done / el:,.1f}/s  eta {eta:4.0f}s "
            )
            sys.stderr.flush()

    try:
        return embed_missing(ddir or data_dir(), progress=progress, threads=threads or os.cpu_count() or 1)
    finally:
        if progress is not None:
            echo("", err=True)
