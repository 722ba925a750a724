"""Serving the web UI: loopback sockets, a per-start token, uvicorn in the foreground.

:func:`serve` binds 127.0.0.1 (and ::1 on the same port when the machine has IPv6), makes
a random token, prints the URL that carries it and runs uvicorn on those sockets until
Ctrl-C or SIGTERM; the sockets are closed when it returns, so nothing listens after the
command ends. :func:`in_thread` runs the same server beside ``voyager serve``. Nothing here binds any other address.
"""

from __future__ import annotations

import secrets
import socket
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir


def bind_loopback(port: int) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1:``port`` (0: any free port) and, when possible, [::1] on the same port."""
    v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        v4.bind(("127.0.0.1", port))
    except OSError as exc:
        v4.close()
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc} (try another --port)") from None
    v4.listen(64)
    socks = [v4]
    if socket.has_ipv6:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            v6.bind(("::1", v4.getsockname()[1]))
            v6.listen(64)
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

    token = token or secrets.token_urlsafe(32)
    socks = bind_loopback(port)
    bound = socks[0].getsockname()[1]
    library = Library(ddir, pool=pool)
    app = Guard(build_app(library), token, bound)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", server_header=False, date_header=False
    )
    return socks, uvicorn.Server(config), f"http://127.0.0.1:{bound}/?token={token}", library


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
    if open_browser:
        import webbrowser

        # After a moment, so the first request finds uvicorn running; a failure to open is not an error.
        threading.Timer(0.3, lambda: webbrowser.open(url)).start()
    try:
        server.run(sockets=socks)
    finally:
        for s in socks:
            s.close()
        library.close()


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
