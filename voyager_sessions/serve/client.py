"""The client side of ``voyager serve``: hand a command to the server, or say that none answered.

:func:`forward` is what a plain ``voyager search`` (``list``, ``show``, ``stats``) tries
first (see :mod:`voyager_sessions.main`). It imports the standard library only (no
click, msgspec or tantivy: ``tests/serve/test_client.py`` checks ``sys.modules``), so
asking a server costs little more than starting Python. Nothing is written to stdout
or stderr until the whole answer has arrived: whatever goes wrong before (no socket, a
stale one, a server that does not acknowledge within :data:`~.protocol.ACK_TIMEOUT`,
one that dies or falls silent mid-answer, an answer it will not give) leaves the
caller free to run the command itself, with nothing printed twice.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` spends milliseconds building enums this client never uses
import json
import os
import sys

from voyager_sessions.serve import protocol

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every `voyager search` pays for imports
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Set to any non-empty value to never ask a server (every command runs in its own process).
NO_SERVER_VAR = "VOYAGER_NO_SERVER"


def socket_path(data_dir: str | os.PathLike[str]) -> str:
    return protocol.socket_path(os.fspath(data_dir))


def exchange(path: str, request: Mapping[str, Any], *, ack_timeout: float = protocol.ACK_TIMEOUT,
             idle_timeout: float = protocol.IDLE_TIMEOUT) -> tuple[dict[str, Any], bytes] | None:
    """Send ``request`` to the server at ``path``; its header and stdout bytes, or None if it did not answer.

    The server must acknowledge (its first byte) within ``ack_timeout`` seconds, then
    never fall silent for ``idle_timeout``. A header with an ``exit`` code is an answer
    and is checked whole (its ``stderr`` pieces in order, within the stdout received).
    """
    # ASCII with \u escapes: a lone surrogate (an undecodable byte of argv) reaches the server unchanged.
    line = json.dumps(request, separators=(",", ":")).encode("ascii") + b"\n"
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(ack_timeout)
        protocol.at_socket(sock.connect, path)
        sock.sendall(line)
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
        header = json.loads(data[start:end])
        if not isinstance(header, dict) or header.get("v") != protocol.VERSION:
            return None
        size = header.get("stdout", 0)
        if not isinstance(size, int) or size < 0:
            return None
        if "exit" in header and not (isinstance(header["exit"], int)
                                     and _well_formed(header.setdefault("stderr", []), size)):
            return None
        body = data[end + 1:]
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


def base_request(cmd: str, data_dir: str, args: Mapping[str, Any] | None = None, *,
                 environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A request for ``cmd``, describing this process (its ``environ``) as the server needs to answer for it."""
    return {
        "v": protocol.VERSION, "cmd": cmd, "args": dict(args or {}), "data_dir": data_dir, "cwd": _cwd(),
        "voyager": build_id(),
        "env": protocol.client_env(os.environ if environ is None else environ),
        "tty": [_isatty(sys.stdout), _isatty(sys.stderr)],
        "stdout": [getattr(sys.stdout, "encoding", None), getattr(sys.stdout, "errors", None)], "origin": "cli",
    }


def forward(cmd: str, params: Mapping[str, Any], data_dir: str | None = None) -> int | None:
    """Run reading command ``cmd`` (``params`` as click would pass them) on the server; its exit code.

    Writes the command's stdout and stderr here, in their original order. None (with
    nothing written) when no server answered; the caller then runs the command itself.
    """
    if os.environ.get(NO_SERVER_VAR) or os.environ.get("VOYAGER_DEBUG"):
        return None  # VOYAGER_DEBUG: a failure must raise here, with its traceback
    if not _utf8(sys.stdout):
        return None  # click would re-encode for a misconfigured stream: leave that to it
    data_dir = protocol.data_dir(os.environ) if data_dir is None else data_dir
    args = jsonable(params)
    if "color" in args:
        args["color"] = color(args["color"])  # decided here, where the terminal is
    got = exchange(socket_path(data_dir), base_request(cmd, data_dir, args),
                   ack_timeout=protocol.ack_timeout(os.environ))
    if got is None:
        return None
    header, out = got
    if "exit" not in header:
        return None  # refused, or left to this process: run the command here
    _replay(out, header["stderr"])
    return header["exit"]


def jsonable(params: Mapping[str, Any]) -> dict[str, Any]:
    """A command's parameters as a request carries them: tuples (``multiple`` options, the query's words) as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def _replay(out: bytes, parts: list[list[Any]]) -> None:
    """Write stdout and stderr as the command wrote them, interleaved at the recorded offsets."""
    try:
        pos = 0
        for offset, text in parts:
            if offset > pos:
                sys.stdout.buffer.write(out[pos:offset])
                sys.stdout.buffer.flush()
                pos = offset
            sys.stderr.write(text)
            sys.stderr.flush()
        if pos < len(out):
            sys.stdout.buffer.write(out[pos:])
            sys.stdout.buffer.flush()
    except BrokenPipeError:
        os._exit(0)  # `voyager search … | head` closed the pipe: not an error (as in-process)


def _well_formed(parts: Any, size: int) -> bool:
    if not isinstance(parts, list):
        return False
    last = 0
    for part in parts:
        if not (isinstance(part, list) and len(part) == 2 and isinstance(part[0], int) and isinstance(part[1], str)):
            return False
        if not last <= part[0] <= size:
            return False
        last = part[0]
    return True


def color(mode: str) -> str:
    """``--color MODE`` resolved against this process's stdout: what ``cmdutil.use_color`` decides (a test holds them equal)."""
    if mode == "always":
        return "always"
    if mode == "never" or os.environ.get("NO_COLOR"):
        return "never"
    return "always" if _isatty(sys.stdout) else "never"


def build_id() -> list[str]:
    """This process's Voyager: its version and where it is installed (a server answers only a client of its own build)."""
    import voyager_sessions

    return [voyager_sessions.__version__, os.path.dirname(os.path.abspath(voyager_sessions.__file__))]


def _cwd() -> str | None:
    try:
        return os.getcwd()  # a relative data dir is relative to it
    except OSError:
        return None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _utf8(stream: Any) -> bool:
    return protocol.is_utf8(getattr(stream, "encoding", None)) and hasattr(stream, "buffer")
