"""Serving the web UI: loopback sockets, a per-start token, uvicorn in the foreground.

:func:`serve` binds 127.0.0.1 (and ::1 on the same port when the machine has IPv6), makes
a random token, prints the URL that carries it (in its fragment, ``/#token=…``, which no
browser sends to a server) and runs uvicorn on those sockets until Ctrl-C or SIGTERM; the
sockets are closed when it returns, so nothing listens after the command ends.
:func:`in_thread` runs the same server beside ``voyager serve``. Nothing here binds any
other address. The sockets are bound with ``SO_REUSEADDR``: a restart on the same port
right after Ctrl-C does not wait out the old connections' TIME_WAIT (on Linux this never
lets a second server listen on a port in use).

:func:`open_browser` opens the page without the token on any command line (``/proc/*/cmdline``
is readable by every user, and a browser keeps its argv for its whole life): it writes a
private redirect file in the data dir and opens that, as Jupyter does.
"""

from __future__ import annotations

import html
import os
import secrets
import socket
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir


def bind_loopback(port: int, backlog: int) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1:``port`` (0: any free port) and, when possible, [::1] on the same port; the
    kernel queues ``backlog`` connections on each (connections.py says how it is sized)."""
    v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        v4.bind(("127.0.0.1", port))
    except OSError as exc:
        v4.close()
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc} (try another --port)") from None
    v4.listen(backlog)
    socks = [v4]
    if socket.has_ipv6:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            v6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            v6.bind(("::1", v4.getsockname()[1]))
            v6.listen(backlog)
            socks.append(v6)
        except OSError:  # no IPv6 loopback here, or the port is taken on it: IPv4 alone serves
            v6.close()
    for s in socks:
        s.setblocking(False)
    return socks


def make(ddir: DataDir, port: int, token: str | None = None, pool: Any = None):  # noqa: ANN201 - (sockets, uvicorn.Server, url, Library)
    """Everything a start needs, not yet running: sockets bound, the app guarded, the URL with its token.

    ``pool``: the readers to borrow (``voyager serve``'s, when it serves the page); else the page opens its own.
    """
    import uvicorn

    from voyager_sessions.web.app import build_app
    from voyager_sessions.web.data import Library
    from voyager_sessions.web.guard import Guard

    from voyager_sessions.web import connections

    token = token or secrets.token_urlsafe(32)
    library = Library(ddir, pool=pool)
    # Sized once the library holds what it keeps open: the cap and the accept burst fit what is left.
    cap, backlog = connections.budget()
    try:
        socks = bind_loopback(port, backlog)
    except BaseException:
        library.close()
        raise
    bound = socks[0].getsockname()[1]
    app = Guard(build_app(library), token, bound)
    connections.quiet_accept_errors()
    config = uvicorn.Config(
        app,
        # A deadline to send a request, a cap on connections (connections.py).
        http=connections.protocol(cap, connections.READ_TIMEOUT),
        backlog=backlog,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        date_header=False,
    )
    return socks, uvicorn.Server(config), f"http://127.0.0.1:{bound}/#token={token}", library


def serve(ddir: DataDir, port: int, *, announce: Callable[[str], None], open_browser: bool) -> None:
    """Serve until interrupted; ``announce`` is told the URL once the sockets listen."""
    socks, server, url, library = make(ddir, port)

    def stop(signum: int, frame: object) -> None:
        server.should_exit = True

    # A Ctrl-C that comes after the URL is printed but before uvicorn has taken the signals (a busy machine,
    # a script that stops what it started) must still stop it: until then, these handlers ask it to.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    announce(url)
    opened: list[Path] = []
    if open_browser:
        # After a moment, so the first request finds uvicorn running; a failure to open is not an error.
        threading.Timer(0.3, lambda: opened.append(open_browser_at(ddir, url))).start()
    try:
        server.run(sockets=socks)
    finally:
        for s in socks:
            s.close()
        library.close()
        for path in opened:
            path.unlink(missing_ok=True)


def redirect_file(ddir: DataDir, url: str) -> Path:
    """A private (0600) page in the data dir (0700) that sends the browser to ``url``: the token stays in files
    only this user reads, never in a browser's argv. Replaced if one of this process is left from before."""
    path = ddir.root / f"web-open-{os.getpid()}.html"
    page = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={html.escape(url, quote=True)}">'
        "<title>Voyager</title></head><body>"
        f'<p><a href="{html.escape(url, quote=True)}">Open Voyager</a></p></body></html>'
    )
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(page)
    return path


def open_browser_at(ddir: DataDir, url: str) -> Path:
    """Open ``url`` in the browser through :func:`redirect_file` (whose path is returned: remove it when the page
    stops). A browser that cannot be started is not an error: the URL is printed."""
    import webbrowser

    path = redirect_file(ddir, url)
    try:
        webbrowser.open(path.as_uri())
    except Exception:  # noqa: BLE001 - no browser here: the printed URL is the way in
        pass
    return path


@contextmanager
def in_thread(ddir: DataDir, port: int, *, pool: Any = None) -> Iterator[str]:
    """The server running in a thread of this process for the ``with`` block (``voyager serve --web``, and the
    page ``voyager serve`` lends a ``voyager web``); its URL.

    It stops, and its sockets close, when the block ends, however it ends. ``pool``: as :func:`make`'s.
    """
    socks, server, url, library = make(ddir, port, pool=pool)
    thread = threading.Thread(target=server.run, kwargs={"sockets": socks}, name="voyager-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        for s in socks:
            s.close()
        library.close()
