"""``voyager mcp``: an MCP server on stdio, so agents can search their own past sessions.

It speaks the part of the Model Context Protocol a tools-only server needs, itself:
newline-delimited JSON-RPC 2.0 on stdin/stdout, in both eras of the protocol (a *dual-era*
server, as the 2026-07-28 revision calls it): the ``initialize`` handshake (versions
2024-11-05 to 2025-11-25: ``initialize``, ``notifications/initialized``, ``ping``,
``tools/list``, ``tools/call``), and 2026-07-28's stateless requests, each carrying its
protocol version and client in ``_meta`` (``server/discover``, ``tools/list``,
``tools/call``). The official Python SDK is not used at run time because importing it costs
~0.8-1 s (pydantic models for the whole protocol), which is longer than Codex waits for an
optional server; this module imports only the standard library, so ``initialize`` (or
``server/discover``) is answered about as fast as Python starts. The SDK's client stays in
the tests as the reference client (``tests/serve/test_mcp.py``).

The tools (:mod:`voyager_sessions.mcp.tools`: schemas derived from the API's request Structs)
and their work (:mod:`voyager_sessions.mcp.calls`: the application API, in process or through
``voyager serve``) are imported in the background once the handshake is answered. A tool's
failure is a tool result with ``isError`` and one line of text, exactly the message ``voyager``
prints after ``voyager: ``; a malformed message is a JSON-RPC error and the server goes on.

Which session is calling: the agent connected is known from its ``clientInfo``; what the
server says to it (the ``instructions``, the tools' descriptions) is true for that agent, and
its own session is left out of searches where it says which one it is (the manifest's rows,
through :mod:`voyager_sessions.api.agents`; docs/serve.md).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

#: Protocol revisions answered through the ``initialize`` handshake, oldest first (the MCP spec's dated versions).
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Revisions served statelessly, each request carrying its version and client in ``_meta`` (2026-07-28 on).
MODERN_VERSIONS = ("2026-07-28",)
#: ``_meta`` keys of a modern request.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
#: 2026-07-28: the request's protocol version is not one this server speaks (``data``: supported, requested).
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: One JSON-RPC message may be at most this long (a tools/call is a few hundred bytes).
MAX_MESSAGE_BYTES = 4 << 20

#: What the handshake knows of each agent's MCP client before anything but the standard library is loaded:
#: ``clientInfo.name`` -> (the agent's label, how it says which session is calling: ``env:VAR``, ``meta``,
#: ``running-tool``, or ``""``: it does not). A copy of the agent manifest's rows (``Mcp.client``,
#: ``Mcp.caller``), held to them by tests/mcp/test_truth.py: the manifest costs ~15 ms to import, a handshake
#: ~40 ms in all, and an agent may give up on a server that answers late.
HANDSHAKE_CLIENTS: dict[str, tuple[str, str]] = {
    "claude-code": ("Claude Code", "env:CLAUDE_CODE_SESSION_ID"),
    "codex-mcp-client": ("Codex CLI", "meta"),
    "gemini-cli-mcp-client": ("Gemini CLI", ""),
    "opencode": ("OpenCode", "running-tool"),
}

INSTRUCTIONS = (
    "Voyager indexes the session histories of the coding agents on this machine (Claude Code, Codex, OpenCode, "
    "Gemini CLI, Qwen Code, Cursor …): every prompt, reply, reasoning step, tool call and tool output. Use it to "
    'answer "what did we decide about X", "where did we fix Y", "what was the command that …": `search` '
    "finds it, `show` with a hit's session_id and seq as `around` reads the conversation around it, "
    "`list_sessions` lists recent sessions; the checkpoint tools keep a task's state for whoever continues it. "
)

#: tool name -> the checkpoint operation it runs (voyager_sessions.api.checkpoints, through calls.checkpoint).
CHECKPOINT_TOOLS = {
    "checkpoint_save": "save",
    "checkpoint_status": "status",
    "checkpoint_list": "list",
    "checkpoint_snapshots": "snapshots",
    "checkpoint_restore": "restore",
    "checkpoint_undo": "undo",
    "checkpoint_handoff": "handoff",
}
#: Every tool's name (their schemas and descriptions: voyager_sessions.mcp.tools, built on tools/list).
TOOL_NAMES = ("search", "show", "list_sessions", *CHECKPOINT_TOOLS)


class Client:
    """The agent connected, as far as the server can know it: its ``clientInfo`` name and what that implies."""

    def __init__(self, name: str | None, environ: Mapping[str, str]) -> None:
        self.name = name
        known = HANDSHAKE_CLIENTS.get(name or "")
        self.label = known[0] if known else None
        way = known[1] if known else ""
        kind, _, var = way.partition(":")
        # Whether it says which session is calling: an env: way needs its variable set now; VOYAGER_CURRENT_SESSION
        # names it for any agent.
        self.identified = bool(environ.get("VOYAGER_CURRENT_SESSION")) or (
            bool(way) and (kind != "env" or bool(environ.get(var)))
        )

    def own_session(self) -> str:
        """The instructions' sentence about the caller's own session, true for this client."""
        if self.identified:
            return (
                "Your own current session is left out of `search` results (include_current=true keeps it), "
                "and the checkpoint tools act on it when no `session` is given."
            )
        if self.label:
            return (
                f"{self.label} does not tell Voyager which session is calling: your own current session can come "
                "up in `search` results, and the checkpoint tools need `session` (your session's id)."
            )
        return (
            "Your own current session is left out of `search` results only when your agent tells Voyager which "
            "session is calling (Claude Code, Codex and OpenCode do); otherwise it can come up in them, and the "
            "checkpoint tools need `session` (your session's id)."
        )

    def unknown_session(self) -> str:
        """Why no calling session is known, for a checkpoint tool's one line."""
        if self.label and not self.identified:
            return f"{self.label} does not tell Voyager which session is calling"
        if self.identified:
            return "Voyager could not tell which session is calling"
        return "this agent does not tell Voyager which session is calling"


def instructions(client: Client) -> str:
    return INSTRUCTIONS + client.own_session()


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Server:
    """One MCP session over a pair of byte streams; every answer is one line, written whole."""

    def __init__(
        self, out: IO[bytes], *, calls: Callable[[], Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> None:
        self.out = out
        self.environ = os.environ if environ is None else environ
        self._make_calls = calls or _default_calls
        self._calls: Any = None
        self._warm: threading.Thread | None = None
        #: The client named by the ``initialize`` handshake (a modern request names its own in ``_meta``).
        self.client: str | None = None
        self._tools: dict[tuple[str | None, bool], list[dict[str, Any]]] = {}

    # -- the loop ------------------------------------------------------------------------

    def serve(self, inp: IO[bytes]) -> None:
        while True:
            line = inp.readline(MAX_MESSAGE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of the oversized message
                    line = inp.readline(MAX_MESSAGE_BYTES)
                self._send(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "message too large"}}
                )
                continue
            if line.strip():
                self.handle_line(line)

    def handle_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            self._send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "parse error"}})
            return
        if not isinstance(msg, dict):
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": INVALID_REQUEST, "message": "a message must be one JSON object"},
                }
            )
            return
        method = msg.get("method")
        has_id = "id" in msg
        if method is None:
            return  # a response to a request we never send, or noise: nothing to answer
        msg_id = msg.get("id")
        if has_id and not (isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)):
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": INVALID_REQUEST, "message": "id must be a string or an integer"},
                }
            )
            return
        if not has_id:
            return  # notifications (initialized, cancelled, roots changed …) need no answer
        try:
            if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
                raise RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 request")
            params = msg.get("params", {})
            if params is None:
                params = {}
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            result = self.dispatch(method, params)
        except RpcError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": str(exc)}
            if exc.data is not None:
                error["data"] = exc.data
            self._send({"jsonrpc": "2.0", "id": msg_id, "error": error})
            return
        except Exception as exc:  # a bug must cost one answer, never the server
            if self.environ.get("VOYAGER_DEBUG"):
                import traceback

                traceback.print_exc()  # stderr: the agent's log of this server
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": INTERNAL_ERROR, "message": f"internal error: {type(exc).__name__}"},
                }
            )
            return
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_VERSION in meta
        if method == "initialize":
            return self.initialize(params)
        if method == "server/discover" or modern:
            return self.modern(method, params, meta if isinstance(meta, dict) else {})
        return self.answer(method, params, self.client)

    def answer(self, method: str, params: dict[str, Any], client_name: str | None) -> dict[str, Any]:
        """A request of either era, for the client named ``client_name``."""
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": self.tools(Client(client_name, self.environ))}
        if method == "tools/call":
            return self.call_tool(params, client_name)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    # -- methods -------------------------------------------------------------------------

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        # The spec: answer the client's version when supported, else the latest this server speaks.
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        info = params.get("clientInfo")
        self.client = _name_of(info)
        self._start_warming()
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": _server_info(),
            "instructions": instructions(Client(self.client, self.environ)),
        }

    def modern(self, method: str, params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        """A 2026-07-28 request: served on its own, its client named by its ``_meta``; results say they are
        complete, name the server, and how long a list may be cached."""
        asked = meta.get(META_VERSION)
        if method != "server/discover" and asked not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": [*reversed(MODERN_VERSIONS), *reversed(PROTOCOL_VERSIONS)], "requested": asked},
            )
        client_name = _name_of(meta.get(META_CLIENT)) or self.client
        self._start_warming()
        if method == "server/discover":
            result: dict[str, Any] = {
                "supportedVersions": [*reversed(MODERN_VERSIONS), *reversed(PROTOCOL_VERSIONS)],
                "capabilities": {"tools": {}},
                "instructions": instructions(Client(client_name, self.environ)),
                # What it says depends on this server's environment (the data dir, the agent): not for sharing.
                "ttlMs": 0,
                "cacheScope": "private",
            }
        else:
            result = self.answer(method, params, client_name)
            if method == "tools/list":
                result.update(ttlMs=0, cacheScope="private")
        return {"resultType": "complete", **result, "_meta": {META_SERVER: _server_info()}}

    def tools(self, client: Client) -> list[dict[str, Any]]:
        """Every tool, described for ``client`` (built once per kind of client: the schemas import msgspec)."""
        key = (client.label, client.identified)
        if key not in self._tools:
            from voyager_sessions.mcp.tools import Caller, tool_list

            self._tools[key] = tool_list(Caller(client.label, client.identified))
        return self._tools[key]

    def call_tool(self, params: dict[str, Any], client_name: str | None = None) -> dict[str, Any]:
        name = params.get("name")
        if name not in TOOL_NAMES:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            return tool_error("arguments must be an object")
        from voyager_sessions.api.agents import calling_session
        from voyager_sessions.core.errors import VoyagerError, one_line

        calls = self.calls()
        client = Client(client_name, self.environ)
        try:
            current = calling_session(client_name, self.environ, params.get("_meta"), str(name), args)
            if name in CHECKPOINT_TOOLS:
                from voyager_sessions.mcp.calls import checkpoint

                doc = checkpoint(calls.data_dir, CHECKPOINT_TOOLS[name], args, current, client.unknown_session())
            elif name == "search":
                doc = calls.search(args, current)
            elif name == "show":
                doc = calls.show(args)
            else:
                doc = calls.list_sessions(args)
        except VoyagerError as exc:
            return tool_error(one_line(exc))
        return {"content": [{"type": "text", "text": json.dumps(doc, ensure_ascii=False)}], "structuredContent": doc}

    # -- helpers -------------------------------------------------------------------------

    def calls(self) -> Any:
        if self._warm is not None:
            self._warm.join()
        if self._calls is None:
            self._calls = self._make_calls()
        return self._calls

    def _start_warming(self) -> None:
        """Import what the tools need while the client reads the handshake: the first search then pays less."""
        if self._warm is None:
            self._warm = threading.Thread(target=_warm_imports, name="voyager-mcp-warm", daemon=True)
            self._warm.start()

    def _send(self, msg: dict[str, Any]) -> None:
        # ASCII with \\u escapes: one line whatever the session text holds (U+2028 and friends included).
        self.out.write(json.dumps(msg, separators=(",", ":")).encode("ascii") + b"\n")
        self.out.flush()


def _name_of(info: Any) -> str | None:
    """A ``clientInfo``'s (or ``io.modelcontextprotocol/clientInfo``'s) name."""
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) and name else None


def _server_info() -> dict[str, Any]:
    from voyager_sessions import __version__

    return {"name": "voyager", "title": "Voyager", "version": __version__}


def tool_error(message: str) -> dict[str, Any]:
    """A failed tool call as the agent's model sees it: one line, no prefix."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _default_calls() -> Any:
    from voyager_sessions.mcp.calls import Calls

    return Calls()


def _warm_imports() -> None:
    try:
        import voyager_sessions.mcp.calls  # noqa: F401
        import voyager_sessions.mcp.tools  # noqa: F401
        from voyager_sessions.api import warm_up

        warm_up()
    except Exception:  # the call itself will raise it, where it can be reported
        pass


def run_stdio() -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    server = Server(sys.stdout.buffer)
    try:
        server.serve(sys.stdin.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
