"""The pages ``voyager serve`` lends to ``voyager web``: the web UI served from the server's process.

(``voyager serve --web``'s page is one too, held for the server's whole life: :meth:`WebPages.beside`.)

When a server runs for the data dir, ``voyager web`` sends it a ``web`` request (protocol
op, see :mod:`.protocol`) and keeps the connection open. The server binds a page on
loopback (``voyager_sessions.web.server.in_thread``: a new token, the port asked for),
answers ``{"v": 2, "web": {"url": …, "pid": …}}`` and serves the page, reading from the
server's own pooled readers, until that connection closes (the command ended, however it
ended: Ctrl-C, SIGTERM, SIGKILL) or the server stops. Only then is its connection closed,
so a command that half-closes and waits for that close knows that nothing listens any more.

Why the page lives here rather than in the command: the index is opened once, by the
process that keeps it fresh, and a page request costs what the same request costs
``voyager serve --web`` (no second hop through the socket per request, no second set of
Tantivy readers for a 1M-event index).
"""

from __future__ import annotations

import os
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

from voyager_sessions.core.errors import VoyagerError, failure
from voyager_sessions.core.paths import DataDir
from voyager_sessions.web import INSTALL


#: Seconds between looks at the stop flag while a page is lent.
POLL = 0.2

#: Bytes a client may send on a lent connection before it is closed (it should send none).
MAX_CHATTER = 1 << 16


class WebPages:
    """Pages lent to ``voyager web`` commands, each for as long as its command's connection stays open."""

    def __init__(self, ddir: DataDir, pool: Any, stopping: threading.Event) -> None:
        self.ddir = ddir
        self.pool = pool
        self.stopping = stopping
        self._lock = threading.Lock()
        self._open: dict[int, float] = {}

    def ports(self) -> list[int]:
        """The ports of the pages served now (``voyager serve status``)."""
        with self._lock:
            return sorted(self._open)

    def lend(self, sock: socket.socket, port: Any, send: Callable[[dict[str, Any]], None]) -> None:
        """Serve a page on ``port`` until ``sock``'s peer closes it or the server stops; ``send`` answers the request."""
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            send({"error": "malformed request: port must be a whole number from 0 to 65535"})
            return
        bound = None
        try:
            with ExitStack() as stack:
                try:
                    from voyager_sessions.web.server import in_thread

                    url = stack.enter_context(in_thread(self.ddir, port, pool=self.pool))
                except ImportError:
                    send({"notices": [], "failure": f"voyager: {INSTALL}", "exit": 2})
                    return
                except VoyagerError as exc:  # the port is taken, say: the command reports it as its own
                    line, code = failure(exc)
                    send({"notices": [], "failure": line, "exit": code})
                    return
                bound = urlsplit(url).port or port
                with self._lock:
                    self._open[bound] = time.time()
                send({"web": {"url": url, "pid": os.getpid()}})
                self._hold(sock)
            # Leaving the block stopped the page and closed its sockets; the caller closes ``sock`` now.
        finally:
            if bound is not None:
                with self._lock:
                    self._open.pop(bound, None)

    @contextmanager
    def beside(self, port: int, announce: Callable[[str], None]) -> Iterator[str]:
        """``voyager serve --web``: a page for the whole life of the server (the ``with`` block); its URL is announced."""
        from voyager_sessions.web.server import in_thread

        with in_thread(self.ddir, port, pool=self.pool) as url:
            bound = urlsplit(url).port or port
            with self._lock:
                self._open[bound] = time.time()
            try:
                announce(url)
                yield url
            finally:
                with self._lock:
                    self._open.pop(bound, None)

    def _hold(self, sock: socket.socket) -> None:
        """Return when the client closes its end (or sends too much) or the server stops."""
        received = 0
        with selectors.DefaultSelector() as sel:
            sel.register(sock, selectors.EVENT_READ)
            while not self.stopping.is_set():
                if not sel.select(timeout=POLL):
                    continue
                try:
                    chunk = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    return
                received += len(chunk)
                if not chunk or received > MAX_CHATTER:
                    return
