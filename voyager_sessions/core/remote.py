"""The client side of ``voyager serve``: hand an API request to the server, or say that none answered.

:func:`ask` is what a plain ``voyager search`` (``list``, ``show``, ``stats``) tries
first (see :mod:`voyager_sessions.cli.main`, which renders the answer), and what ``voyager
mcp`` tries for a tool call. It imports the standard library only (no click, msgspec or
tantivy: ``tests/serve/test_client.py`` checks ``sys.modules``), so asking a server
costs little more than starting Python. It writes nothing: whatever goes wrong before
the whole answer has arrived (no socket, a stale one, a server that does not
acknowledge within :data:`~.protocol.ACK_TIMEOUT`, one that dies or falls silent
mid-answer, an answer it will not give) leaves the caller free to run the request
itself, with nothing printed twice.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` spends milliseconds building enums this client never uses
import os

from voyager_sessions.core import jsontext
from voyager_sessions.core import wire as protocol

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every `voyager search` pays for imports
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Set to any non-empty value to never ask a server (every command runs in its own process).
NO_SERVER_VAR = "VOYAGER_NO_SERVER"


def socket_path(data_dir: str | os.PathLike[str]) -> str:
    return protocol.socket_path(os.fspath(data_dir))


def exchange(
    path: str,
    request: Mapping[str, Any],
    *,
    ack_timeout: float = protocol.ACK_TIMEOUT,
    idle_timeout: float = protocol.IDLE_TIMEOUT,
) -> tuple[dict[str, Any], bytes] | None:
    """Send ``request`` to the server at ``path``; its header and body bytes, or None if it did not answer.

    The server must acknowledge (its first byte) within ``ack_timeout`` seconds, then
    never fall silent for ``idle_timeout``. A header with a ``body`` or a ``failure`` is an
    answer and is checked whole (its notices, the failure's line and exit code).
    """
    sock = _send(path, request, ack_timeout)
    if sock is None:
        return None
    try:
        got = _header(sock, idle_timeout)
        if got is None:
            return None
        header, body = got
        size = header.get("body", 0)
        if not isinstance(size, int) or size < 0:
            return None
        while len(body) < size:
            chunk = sock.recv(max(65536, size - len(body)))
            if not chunk:
                return None
            body += chunk
        return header, bytes(body[:size])
    except (OSError, ValueError, UnicodeError):
        return None
    finally:
        sock.close()


def hold(
    path: str, request: Mapping[str, Any], *, ack_timeout: float = protocol.ACK_TIMEOUT
) -> tuple[dict[str, Any], _socket.socket] | None:
    """Send ``request`` and read the header of an answer that lasts as long as the connection: the header and the
    open socket (the caller closes it), or None if the server did not answer.

    For ``voyager web``: the server serves a page until this connection closes (see ``.webpage``).
    """
    sock = _send(path, request, ack_timeout)
    if sock is None:
        return None
    try:
        got = _header(sock, protocol.IDLE_TIMEOUT)
    except (OSError, ValueError, UnicodeError):
        got = None
    if got is None:
        sock.close()
        return None
    return got[0], sock


def _send(path: str, request: Mapping[str, Any], ack_timeout: float) -> _socket.socket | None:
    """A connection to the server at ``path`` with ``request`` sent on it, or None if it cannot be made."""
    # ASCII with \u escapes: a lone surrogate (an undecodable byte of argv) reaches the server unchanged.
    line = jsontext.dumps(request).encode("ascii") + b"\n"
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(ack_timeout)
        protocol.at_socket(sock.connect, path)
        sock.sendall(line)
    except OSError:
        sock.close()
        return None
    return sock


def _header(sock: _socket.socket, idle_timeout: float) -> tuple[dict[str, Any], bytearray] | None:
    """The answer's header line (keep-alive newlines skipped) and the bytes read past it; None if malformed.

    The first byte must come within the socket's timeout (the acknowledgement), the rest
    without a silence of ``idle_timeout``.
    """
    data = bytearray()
    acknowledged = False
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        if not acknowledged:
            acknowledged = True
            sock.settimeout(idle_timeout)
        data += chunk
        start = len(data) - len(data.lstrip(b"\n"))  # keep-alive newlines come before the header only
        end = data.find(b"\n", start)
        if end >= 0:
            break
        if len(data) > protocol.MAX_REQUEST_BYTES:
            return None
    header = jsontext.loads(data[start:end])
    if not isinstance(header, dict) or header.get("v") != protocol.VERSION:
        return None
    if ("body" in header or "failure" in header) and not _well_formed(header):
        return None
    return header, data[end + 1 :]


def base_request(
    op: str, data_dir: str, fields: Mapping[str, Any] | None = None, *, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A request for API operation ``op`` (``fields``: its request's), describing this process as the server needs."""
    return {
        "v": protocol.VERSION,
        "op": op,
        "request": dict(fields or {}),
        "data_dir": data_dir,
        "cwd": _cwd(),
        "voyager": build_id(),
        "env": protocol.client_env(os.environ if environ is None else environ),
    }


def ask(op: str, fields: Mapping[str, Any], data_dir: str | None = None) -> tuple[dict[str, Any], bytes] | None:
    """API operation ``op`` answered by the server for ``data_dir``: its header and body, or None when none answered.

    The header has ``notices`` and then either ``body`` (the body is the result
    document's JSON) or ``failure`` and ``exit`` (the CLI's one line and exit code).
    """
    if os.environ.get(NO_SERVER_VAR) or os.environ.get("VOYAGER_DEBUG"):
        return None  # VOYAGER_DEBUG: a failure must raise here, with its traceback
    data_dir = protocol.data_dir(os.environ) if data_dir is None else data_dir
    got = exchange(
        socket_path(data_dir), base_request(op, data_dir, fields), ack_timeout=protocol.ack_timeout(os.environ)
    )
    if got is None or not ("body" in got[0] or "failure" in got[0]):
        return None  # refused, or left to this process: run the request here
    return got


def _well_formed(header: dict[str, Any]) -> bool:
    notices = header.get("notices")
    if not isinstance(notices, list) or not all(
        isinstance(n, list) and len(n) == 2 and isinstance(n[0], str) and isinstance(n[1], bool) for n in notices
    ):
        return False
    if "failure" in header:
        return (
            isinstance(header["failure"], str)
            and isinstance(header.get("exit"), int)
            and not isinstance(header["exit"], bool)
        )
    return True


def build_id() -> list[str]:
    """This process's Voyager: its version and where it is installed (a server answers only a client of its own build)."""
    import voyager_sessions

    return [voyager_sessions.__version__, os.path.dirname(os.path.abspath(voyager_sessions.__file__))]


def _cwd() -> str | None:
    try:
        return os.getcwd()  # a relative data dir is relative to it
    except OSError:
        return None
