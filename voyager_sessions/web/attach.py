"""``voyager web`` beside a running ``voyager serve``: ask it for the page, hold it, give it back.

The server serves the page from its own process for as long as this command keeps its
connection open (see ``voyager_sessions.serve.webpage`` for why the page lives there). When
the command ends by Ctrl-C or SIGTERM it half-closes the connection and waits for the
server to close it, which the server does only after the page's sockets are closed: when
the command returns, nothing listens. If the command is killed outright, the kernel closes
the connection and the server stops the page a moment later.

Standard library only, as the socket client it uses (:mod:`voyager_sessions.core.remote`).
"""

from __future__ import annotations

import _socket
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass

from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.core.paths import DataDir
from voyager_sessions.core import remote as client
from voyager_sessions.core import wire as protocol

#: Seconds to wait for the server to close a page given back (its uvicorn stops within a few).
GIVE_BACK_TIMEOUT = 35.0


class ServerStopped(VoyagerError):
    """The server that served the page stopped (``voyager serve stop``, a restart): the page is gone with it."""


@dataclass
class Lent:
    """A page ``voyager serve`` serves for this command: its URL (with the token) and the server's pid."""

    url: str
    pid: int
    sock: _socket.socket  # what the client's ``hold`` returns (the C module's socket: ``socket.socket``'s base)

    def hold(self, announce: Callable[[], None]) -> None:
        """Announce the page, then keep it until Ctrl-C or SIGTERM (and give it back), or until the server closes it
        (ServerStopped). A signal that comes as soon as the URL is printed gives it back too."""

        def stop(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            announce()
            self.sock.settimeout(None)
            while True:
                if not self.sock.recv(4096):
                    raise ServerStopped(f"the server (pid {self.pid}) stopped, and the page with it")
        except KeyboardInterrupt:
            self.give_back()
        except OSError:
            raise ServerStopped(f"the server (pid {self.pid}) stopped, and the page with it") from None
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.sock.close()

    def give_back(self) -> None:
        """Say this command is done (half-close) and wait until the server has closed the page."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(GIVE_BACK_TIMEOUT)
            while self.sock.recv(4096):
                pass
        except OSError:
            pass  # the server is gone, or slow: its page stops when it notices


def borrow(ddir: DataDir, port: int) -> Lent | None:
    """The page of the server running for ``ddir``, on ``port`` (0: any); None when no server will serve it.

    A server that answers with a failure (the port is taken) makes it this command's failure.
    """
    if os.environ.get(client.NO_SERVER_VAR):
        return None
    root = str(ddir.root)
    request = client.base_request("web", root, {"port": port})
    got = client.hold(client.socket_path(root), request, ack_timeout=protocol.ack_timeout(os.environ))
    if got is None:
        return None
    header, sock = got
    page = header.get("web")
    if isinstance(page, dict) and isinstance(page.get("url"), str) and isinstance(page.get("pid"), int):
        if page["url"].startswith("http://127.0.0.1:"):
            return Lent(url=page["url"], pid=page["pid"], sock=sock)
    sock.close()
    if "failure" in header:
        exc = VoyagerError(header["failure"].removeprefix("voyager: "))
        exc.exit_code = header["exit"]
        raise exc
    return None  # a fallback (another build, another environment) or a server that does not lend pages
