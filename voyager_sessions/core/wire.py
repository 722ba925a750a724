"""The wire protocol of ``voyager serve``, version 2: what both ends agree on (see ``docs/serve.md``).

One request per connection. The client writes one line of UTF-8 JSON::

    {"v": 2, "op": "search", "request": {…}, "data_dir": "…", "cwd": "…", "env": {…}, "voyager": […]}

``request`` holds the fields of the application API's request Struct for ``op``
(``voyager_sessions.api.OPERATIONS``: ``search``, ``list``, ``show``, ``stats``); the
server decodes it with msgspec, which checks every field and bound, calls the API
function and answers with zero or more bare newlines (the first as soon as it has read
the request: the client's sign that the server is alive; then one a second while it
works), then one header line of JSON and, after it, exactly ``header["body"]`` bytes::

    {"v": 2, "notices": [["text", quiet_ok], …], "body": 1234}

The body is the result document as msgspec encodes it (the JSON of ``--json``); the
client renders it itself (``voyager_sessions.cli.present``), so nothing the server sends is
terminal output. ``notices`` are what the search's refresh reported (``api.Notice``). A
request the API refused is answered ``{"v": 2, "notices": […], "failure": "voyager: …",
"exit": 2}``: the CLI's one line and exit code. A request the server will not answer gets
``{"v": 2, "error": "…"}`` (malformed, too large, too slow, another user) or
``{"v": 2, "fallback": "…"}`` (it would not answer as the client would: another
environment, another data dir); the client then runs the command itself. ``status`` and
``stop`` are answered with ``{"v": 2, "status": {…}}``. ``web`` (``voyager web``, request
``{"port": N}``) is answered ``{"v": 2, "web": {"url": …, "pid": …}}`` and the connection then
stays open: the server serves that page until the client closes it (``serve.webpage``).

Why JSON both ways and not msgpack: the client is every plain ``voyager search`` while a
server runs, and it imports the standard library only (no msgspec: ~5 ms of a ~15 ms
command); and the body is then the very bytes ``--json`` prints.

Standard library only: the client imports this on every plain ``voyager search``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the client pays for every import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

VERSION = 2

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

#: ``VOYAGER_*`` variables that do not change what a command prints.
_NOT_COMPARED = frozenset({"VOYAGER_HOME", "VOYAGER_DEBUG", "VOYAGER_NO_SERVER", ACK_TIMEOUT_VAR})


def client_env(environ: Mapping[str, str]) -> dict[str, str]:
    """What a client tells the server of its environment: every variable that may locate data or set a cap.

    A superset, by name alone (no agent table to import): ``HOME``, ``TZ``, ``XDG_*``,
    ``VOYAGER_*`` and every name ending in one of :data:`_LOCATION_SUFFIXES`. The server
    keeps the ones it knows change an answer (:func:`answer_env`);
    ``tests/serve/test_client.py`` holds every agent variable of the manifest's rows (``ingest/manifest.py``)
    to these names (a new agent's variable of another shape fails it until added here).
    """
    return {
        k: v
        for k, v in environ.items()
        if k in ("HOME", "TZ") or k.startswith(("VOYAGER_", "XDG_")) or k.endswith(_LOCATION_SUFFIXES)
    }


#: How the names of variables that locate an agent's data end (Windows' APPDATA and LOCALAPPDATA name some agents' homes).
_LOCATION_SUFFIXES = ("_HOME", "_DIR", "_DB", "_FILE", "_ROOT", "_DATA", "_PATH", "APPDATA")


def answer_env(environ: Mapping[str, str], agent_variables: Iterable[str]) -> dict[str, str]:
    """The part of ``environ`` that can change what a reading command answers (server side).

    Where agents keep sessions (every variable the agent manifest reads, ``ingest/manifest.py``), Voyager's own
    caps (``VOYAGER_*``), local time (``TZ``), the home shortened to ``~`` (``HOME``) and
    the data dir's default (``XDG_DATA_HOME``). A server answers only clients whose values
    match its own. ``agent_variables``: the manifest's (the server asks ``api.agent_variables``; the
    protocol itself stays below every layer and knows no agent).
    """
    names = {"HOME", "TZ", "XDG_DATA_HOME", *agent_variables}
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


def is_utf8(encoding: str | None) -> bool:
    """Whether ``encoding`` is UTF-8 however spelled (``utf-8``, ``UTF8``, ``utf_8``): the one stdout served."""
    return (encoding or "").lower().replace("-", "").replace("_", "") == "utf8"


def data_dir(environ: Mapping[str, str]) -> str:
    """``str(paths.data_dir(environ))`` without importing pathlib (a test holds the two equal)."""
    if environ.get("VOYAGER_HOME"):
        return _as_pathlib_spells(os.path.expanduser(environ["VOYAGER_HOME"]))
    if environ.get("XDG_DATA_HOME"):
        return _as_pathlib_spells(os.path.expanduser(environ["XDG_DATA_HOME"]) + "/voyager")
    return _as_pathlib_spells((environ.get("HOME") or os.path.expanduser("~")) + "/.local/share/voyager")


def _as_pathlib_spells(path: str) -> str:
    """``path`` as ``str(pathlib.PurePosixPath(path))`` spells it: no empty or ``.`` parts, ``//`` kept only alone."""
    lead = "//" if path.startswith("//") and not path.startswith("///") else "/" if path.startswith("/") else ""
    return lead + "/".join(p for p in path.split("/") if p and p != ".") or "."


def socket_path(data_dir: str) -> str:
    """The server's socket in ``data_dir`` (``paths.DataDir.socket``)."""
    return os.path.join(data_dir, "serve.sock")


#: The longest socket path ``bind``/``connect`` take (``sun_path``, with room for the NUL).
_MAX_SUN_PATH = 103 if sys.platform == "darwin" else 107


def at_socket(call: Callable[[str], object], path: str) -> None:
    """``call(address)``, a socket's ``connect`` or ``bind``, with an address for the socket at ``path``.

    A path longer than ``sun_path`` is reached through ``/proc/self/fd/N/`` of its
    directory where Linux offers it (the descriptor closed after the call); elsewhere it
    is given as is and the call fails with an OSError the caller reports.
    """
    if len(os.fsencode(path)) <= _MAX_SUN_PATH or not hasattr(os, "O_PATH"):
        call(path)
        return
    head, tail = os.path.split(path)
    fd = os.open(head or ".", os.O_PATH | os.O_DIRECTORY)
    try:
        call(f"/proc/self/fd/{fd}/{tail}")
    finally:
        os.close(fd)
