"""``voyager web``: the click command (loaded lazily, see ``LAZY_COMMANDS`` in :mod:`voyager_sessions.cli.app`).

It imports nothing of the web stack until it runs, so ``voyager --help`` lists it even
when the ``web`` extra is not installed; running it then says how to install it.
``voyager serve --web`` uses :func:`require_stack` and :func:`announce` (its page is served by
``voyager_sessions.serve.webpage``).
"""

from __future__ import annotations

from pathlib import Path

import click

from voyager_sessions.cli.common import data_dir
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir
from voyager_sessions.core.textsafe import printable

from voyager_sessions.web import INSTALL


def require_stack() -> None:
    """A one-line UserError when the web extra is not installed."""
    try:
        import markdown_it  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UserError(INSTALL) from None


def announce(url: str, root: object, by: str = "") -> None:
    click.echo(f"voyager: serving {printable(str(root))}{by} at\n\n    {url}\n\n(Ctrl-C stops it)", err=True)


@click.command()
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default="a free port", help="Port on 127.0.0.1 (and ::1)."
)
@click.option("--no-open", is_flag=True, help="Print the URL without opening a browser.")
def web(port: int, no_open: bool) -> None:
    """Search, read and share past sessions in your browser (a local page; Ctrl-C stops it).

    Listens on loopback only, until this command ends. The printed URL holds a token that
    is new at each start; anything without it is refused. Scripts can call the JSON API
    with the token as `Authorization: Bearer TOKEN` (docs/web.md). When `voyager serve`
    runs for the data dir, it serves the page (the index it keeps open and fresh) for as
    long as this command runs.
    """
    require_stack()
    from voyager_sessions.api import require_index
    from voyager_sessions.web.attach import borrow

    ddir = DataDir(data_dir())
    require_index(ddir)

    lent = borrow(ddir, port)
    if lent is not None:
        opened: list[Path] = []

        def tell() -> None:
            announce(lent.url, ddir.root, f" through voyager serve (pid {lent.pid})")
            if not no_open:
                _open_soon(ddir, lent.url, opened)

        try:
            lent.hold(tell)
        finally:
            for path in opened:
                path.unlink(missing_ok=True)
        return
    from voyager_sessions.web.server import serve

    serve(ddir, port, announce=lambda url: announce(url, ddir.root), open_browser=not no_open)


def _open_soon(ddir: DataDir, url: str, opened: list[Path]) -> None:
    """Open ``url`` in the browser from a thread (a browser that is slow to start never holds the command up),
    through a private redirect file (never the token on a command line); its path goes in ``opened``."""
    import threading

    from voyager_sessions.web.server import open_browser_at

    threading.Thread(target=lambda: opened.append(open_browser_at(ddir, url)), daemon=True).start()
