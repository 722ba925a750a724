"""The socket protocol of ``voyager serve``, version 1: what both ends agree on (see ``docs/serve.md``).

One request per connection. The client writes one line of UTF-8 JSON::

    {"v": 1, "cmd": "search", "args": {…}, "data_dir": "…", "env": {…},
     "tty": [stdout_is_a_terminal, stderr_is_a_terminal], "stdout": ["utf-8", "strict"]}

``args`` are the parameters click would pass the command (``voyager_sessions.commands``
checks every one). The server answers with zero or more bare newlines (the first as
soon as it has read the request: the client's sign that the server is alive; then one a
second while it works), then one header line of JSON and, after it, exactly
``header["stdout"]`` bytes::

    {"v": 1, "exit": 0, "stdout": 1234, "stderr": [[offset, "text"], …]}

which are the exit code, stdout and stderr the command would have produced in the
client's own process (stderr pieces carry the stdout offset they were written at). A
request the server will not answer gets ``{"v": 1, "error": "…"}`` (malformed, too
large, too slow, another user) or ``{"v": 1, "fallback": "…"}`` (it would not answer
as the client would: another environment, another data dir); the client then runs the
command itself. ``status`` and ``stop`` are answered with ``{"v": 1, "status": {…}}``.

Standard library only: the client imports this on every plain ``voyager search``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from voyager_sessions.paths import agent_variables

VERSION = 1

#: The largest request line the server reads (a query pasted from a log fits many times over).
MAX_REQUEST_BYTES = 1 << 20

#: Seconds a client has to send its whole request line.
REQUEST_DEADLINE = 2.0

#: Seconds between the server's keep-alive newlines while it works on a request.
HEARTBEAT_INTERVAL = 1.0

#: Seconds a client waits for the server's first newline: a dead or hung server costs no more.
ACK_TIMEOUT = 0.05

#: Milliseconds to wait for that newline instead (a machine so loaded that 50 ms is too short).
ACK_TIMEOUT_VAR = "VOYAGER_SERVER_WAIT_MS"

#: Seconds without a byte (no heartbeat) after which a client gives up and runs the command itself.
IDLE_TIMEOUT = 5.0

#: Variables outside the data dir that change an answer (where agents keep sessions, caps,
#: local time, the home shortened to ``~``). A server answers only clients whose values
#: match its own; ``VOYAGER_*`` variables count too, but for these, which do not change one.
_NOT_COMPARED = frozenset({"VOYAGER_HOME", "VOYAGER_DEBUG", "VOYAGER_NO_SERVER", ACK_TIMEOUT_VAR})


def answer_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of ``environ`` that can change what a reading command answers."""
    names = {"HOME", "TZ", "XDG_DATA_HOME", *agent_variables()}
    names.update(k for k in environ if k.startswith("VOYAGER_"))
    return {k: environ[k] for k in sorted(names - _NOT_COMPARED) if k in environ}


def ack_timeout(environ: Mapping[str, str]) -> float:
    """The client's wait for the server's acknowledgement, in seconds (``VOYAGER_SERVER_WAIT_MS`` or 50 ms)."""
    raw = environ.get(ACK_TIMEOUT_VAR)
    if raw:
        try:
            return min(60.0, max(0.001, int(raw) / 1000))
        except ValueError:
            pass
    return ACK_TIMEOUT


def env_difference(mine: Mapping[str, str], theirs: Mapping[str, str]) -> list[str]:
    """Names of the variables whose values differ between two ``answer_env`` results."""
    return sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))


#: The longest socket path ``bind``/``connect`` take (``sun_path``, with room for the NUL).
_MAX_SUN_PATH = 103 if sys.platform == "darwin" else 107


@contextmanager
def socket_address(path: str) -> Iterator[str]:
    """An address for the socket at ``path`` that ``bind`` and ``connect`` accept, however long ``path`` is.

    A path longer than ``sun_path`` is reached through ``/proc/self/fd/N/`` of its
    directory where Linux offers it; elsewhere it is given as is and the call fails
    with an OSError the caller reports.
    """
    if len(os.fsencode(path)) <= _MAX_SUN_PATH or not hasattr(os, "O_PATH"):
        yield path
        return
    head, tail = os.path.split(path)
    fd = os.open(head or ".", os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{tail}"
    finally:
        os.close(fd)
