"""What one connection to ``voyager web`` may cost: a deadline to send its request, and a place among a bounded few.

uvicorn reads a request for as long as its client takes: a client that opens a connection and
sends half a request (no token is needed to start one) holds a file descriptor until it gives up,
so a thousand of them used up the process's descriptors ("Too many open files") and locked the
page's owner out. :func:`protocol` is uvicorn's HTTP protocol (h11) with three bounds:

- **a read deadline**: a request must have arrived whole (its head and body) within
  :data:`READ_TIMEOUT` seconds of the connection's start, or of the end of the answer before it
  on a kept-alive connection; else the connection is closed. A request being answered is never cut.
- **a cap on connections** (:func:`budget`, from the descriptors the process has left): a
  connection past it makes room by closing the one that has waited longest for a request of its
  own (a half-sent head, an idle keep-alive); when every other one is being answered, the newcomer
  is closed. So a flood of half-open connections costs at most the cap, the oldest go first, and
  the owner's connection, whose request arrives whole a moment after it opens, is read before
  the cap's worth of newer ones could push it out.
- **a bounded accept burst** (:func:`budget`): asyncio accepts up to the listening socket's backlog
  in one go and gives each its descriptor before any connection is told it exists (uvicorn's
  default, 2048, took every descriptor in one burst); on a busy machine a second burst is accepted
  before the first one's closed connections have let their descriptors go. So the backlog is
  sized from the descriptors left too: two bursts on each listening socket plus the cap fit in
  what the process has, with :data:`RESERVED_FDS` kept for the index, SQLite and the rest.
- **no busy loop, no log flood on EMFILE**: within that budget the process keeps descriptors to
  spare; if it still runs out, asyncio stops accepting for a second (its own rule) and the one line
  it logs each time is said once a minute (:class:`QuietAccept`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a request may take to arrive whole.
READ_TIMEOUT = 10.0
#: The cap's bounds, whatever the descriptor limit.
MIN_CONNECTIONS, MAX_CONNECTIONS = 8, 128
#: The backlog's bounds (connections the kernel queues, and the most asyncio accepts in one go).
MIN_BACKLOG, MAX_BACKLOG = 4, 64
#: Descriptors kept for everything else the process opens (the index's segments, SQLite, the listening sockets).
RESERVED_FDS = 32


def _spare_fds() -> int:
    """Descriptors this process may still open, less the reserve."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: count on the reserve
        used = RESERVED_FDS
    return soft - used - RESERVED_FDS


def budget(listeners: int = 2) -> tuple[int, int]:
    """``(cap, backlog)`` for ``listeners`` listening sockets, from the descriptors the process has left: at most
    two accept bursts of ``backlog`` on each socket take a quarter of them, the cap half of the rest."""
    spare = _spare_fds()
    backlog = max(MIN_BACKLOG, min(MAX_BACKLOG, spare // (8 * listeners)))
    cap = max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, (spare - 2 * listeners * backlog) // 2))
    return cap, backlog


def protocol(cap: int, read_timeout: float = READ_TIMEOUT) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the read deadline and the cap of this module's docstring (``uvicorn.Config(http=…)``)."""

    class Bounded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        #: When this connection began to wait for its next request (its start, or the end of its last answer).
        _waiting_since = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._wait()
            if len(self.connections) > cap:
                self._make_room()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._deadline is not None and not self._reading():
                self._deadline.cancel()
                self._deadline = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().connection_lost(exc)

        def _reading(self) -> bool:
            """True while the client has not yet sent a whole request (h11: waiting for a head, or reading a body)."""
            return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

        def _idle(self) -> bool:
            """True when nothing is being answered: the connection only waits for a request of its own."""
            return self._reading() and (self.cycle is None or self.cycle.response_complete)

        def _wait(self) -> None:
            self._waiting_since = self.loop.time()
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(read_timeout, self._too_slow)

        def _too_slow(self) -> None:
            self._deadline = None
            if self._reading() and not self.transport.is_closing():
                self.transport.abort()  # no answer owed: the request never came whole

        def _make_room(self) -> None:
            waiting = [
                c
                for c in self.connections
                if c is not self
                and isinstance(c, Bounded)
                and not c.transport.is_closing()  # closed already, its descriptor freed in a moment
                and c._idle()
            ]
            victim = min(waiting, key=lambda c: c._waiting_since) if waiting else self
            victim.transport.abort()

    return Bounded


class QuietAccept(logging.Filter):
    """Lets asyncio's "socket.accept() out of system resource" through once a minute (it logs it at every retry)."""

    EVERY = 60.0

    def __init__(self) -> None:
        super().__init__()
        self.last = -self.EVERY

    def filter(self, record: logging.LogRecord) -> bool:
        if "out of system resource" not in record.getMessage():
            return True
        now = time.monotonic()
        if now - self.last < self.EVERY:
            return False
        self.last = now
        return True


_quiet: list[Any] = []


def quiet_accept_errors() -> None:
    """Install :class:`QuietAccept` on asyncio's logger, once per process."""
    if not _quiet:
        _quiet.append(QuietAccept())
        logging.getLogger("asyncio").addFilter(_quiet[0])
