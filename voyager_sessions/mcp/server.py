"""``voyager mcp``: an MCP server on stdio, so agents can search their own past sessions.

It speaks the part of the Model Context Protocol a tools-only server needs, itself:
newline-delimited JSON-RPC 2.0 on stdin/stdout with ``initialize`` (protocol version
negotiation), ``notifications/initialized``, ``ping``, ``tools/list`` and ``tools/call``.
The official Python SDK is not used at run time because importing it costs ~0.8-1 s
(pydantic models for the whole protocol), which is longer than Codex waits for an
optional server; this module imports only the standard library, so ``initialize`` is
answered about as fast as Python starts. The SDK's client stays in the tests as the
reference client (``tests/serve/test_mcp.py``).

The tools' work is :mod:`voyager_sessions.mcp.calls` (the application API, in
process or through ``voyager serve``), imported in the background once the handshake
is answered. A tool's failure is a tool result with ``isError`` and one line of text,
exactly the message ``voyager`` prints after ``voyager: ``; a malformed message is a
JSON-RPC error and the server goes on.

Which session is calling: agents that say so are excluded from search results unless
``include_current`` is set (see :func:`caller_session` and docs/serve.md).
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

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603

#: One JSON-RPC message may be at most this long (a tools/call is a few hundred bytes).
MAX_MESSAGE_BYTES = 4 << 20

INSTRUCTIONS = (
    "Voyager indexes the session histories of the coding agents on this machine (Claude Code, Codex, OpenCode, "
    "Gemini CLI, Qwen Code, Cursor …): every prompt, reply, reasoning step, tool call and tool output. Use it to "
    'answer "what did we decide about X", "where did we fix Y", "what was the command that …": `search` '
    "finds it (your own current session is left out), `show` with a hit's session_id and seq as `around` reads "
    "the conversation around it, `list_sessions` lists recent sessions."
)

SEARCH_DESCRIPTION = """\
Search the past sessions of every coding agent on this machine: prompts, replies, reasoning, tool calls \
and their outputs. Use it to recall what was decided, tried, run or seen before ("what did we decide \
about the cache key", "where did we fix the login redirect", "the error we got from the migration").

Phrase the query as the words likely to appear in that session, not as a question: 2-4 distinctive \
terms (names, identifiers, error text, file paths) work best; all words must match, so drop filler. \
Syntax: "an exact phrase"; -word or NOT word excludes; a OR b; (groups); prefix*; identifiers, paths \
and pasted error lines work as typed; filters inside the query: provider:codex kind:tool_result \
repo:NAME cwd:PATH session:ID since:7d until:2026-11-01. kind is user, assistant, reasoning, \
tool_call, tool_result (tool = both), meta or checkpoint. If nothing matches, try fewer or other words.

Your own current session is left out when your agent tells Voyager which it is (include_current=true \
keeps it). sessions=true gives one row per session (its best hit and hit_count); context=N adds N events \
around each hit. Returns {"total", "offset", "hits": [{session_id, seq, kind, provider, timestamp, cwd, \
title, snippet, highlights, resume, tool, exit_code, hit_count, context}]}; read more of a hit with \
show(session=session_id, around=seq)."""

SHOW_DESCRIPTION = """\
Read a past session: its metadata and events (seq, kind, origin, text, tool, exit_code). session is a \
session_id from search or list_sessions (or a unique prefix of it). With around=SEQ (a search hit's seq) \
only the `window` events on each side of it come back: prefer that for long sessions."""

LIST_DESCRIPTION = """\
Recent sessions of every coding agent on this machine, newest first: session_id, provider, title, cwd, \
started, updated, events, resume (the command that reopens it)."""

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string"}}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "search",
        "title": "Search past agent sessions",
        "description": SEARCH_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": 'words, "phrases" and filters (see the description)'},
                "provider": {**_STRS, "description": "only these agents (claude, codex, gemini, opencode …)"},
                "kind": {**_STRS, "description": "only these event kinds"},
                "repo": {**_STR, "description": "only sessions in a repository whose name contains this"},
                "cwd": {**_STR, "description": "only sessions whose working directory contains this"},
                "session": {**_STR, "description": "only this session (id or prefix)"},
                "since": {**_STR, "description": "7d, 2h, 2026-11-01 …"},
                "until": _STR,
                "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 20},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "sort": {"type": "string", "enum": ["relevance", "recent"], "default": "relevance"},
                "sessions": {"type": "boolean", "default": False, "description": "one row per session"},
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 50,
                    "default": 0,
                    "description": "events around each hit",
                },
                "include_current": {
                    "type": "boolean",
                    "default": False,
                    "description": "also search the session this call comes from",
                },
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "show",
        "title": "Read a past agent session",
        "description": SHOW_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "required": ["session"],
            "properties": {
                "session": {**_STR, "description": "a session_id (or a unique prefix)"},
                "around": {"type": "integer", "minimum": 0, "description": "a hit's seq"},
                "window": {"type": "integer", "minimum": 0, "default": 10},
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "list_sessions",
        "title": "List recent agent sessions",
        "description": LIST_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "provider": _STR,
                "limit": {"type": "integer", "minimum": 1, "default": 50},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]

_SESSION_ARG = {
    "session": {
        **_STR,
        "description": "the session to act on; leave it out when your agent tells "
        "Voyager which session is calling (Claude Code, Codex, OpenCode)",
    }
}

CHECKPOINT_INTRO = (
    "Checkpoints keep a task's state for whoever continues it (you after a context reset, "
    "another agent, a person): objective, status, plan, steps done and next, blockers, files, "
    "notes. Every change is kept as a snapshot. "
)

#: tool name -> the checkpoint operation it runs (voyager_sessions.api.checkpoints, through mcp_calls.checkpoint).
CHECKPOINT_TOOLS = {
    "checkpoint_save": "save",
    "checkpoint_status": "status",
    "checkpoint_list": "list",
    "checkpoint_snapshots": "snapshots",
    "checkpoint_restore": "restore",
    "checkpoint_undo": "undo",
    "checkpoint_handoff": "handoff",
}

TOOLS += [
    {
        "name": "checkpoint_save",
        "title": "Save task state",
        "description": CHECKPOINT_INTRO + "Merge changes into this session's checkpoint: given text fields replace "
        "(an empty string clears one), done/next/blockers/files append (a step added to done leaves "
        "next). Save after each meaningful step; a save that changes nothing writes nothing.",
        "inputSchema": {
            "type": "object",
            "properties": {
                **_SESSION_ARG,
                "title": _STR,
                "objective": _STR,
                "status": {**_STR, "description": "e.g. in progress"},
                "summary": _STR,
                "plan": _STR,
                "notes": _STR,
                "done": _STRS,
                "next": _STRS,
                "blockers": _STRS,
                "files": _STRS,
            },
        },
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
    {
        "name": "checkpoint_status",
        "title": "Read task state",
        "description": CHECKPOINT_INTRO + "This session's checkpoint (or another's, by session) and how many snapshots "
        "it keeps; checkpoint is null when there is none.",
        "inputSchema": {"type": "object", "properties": {**_SESSION_ARG}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "checkpoint_list",
        "title": "List checkpoints",
        "description": "Sessions that have a checkpoint, most recently updated first (title, status, project).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "checkpoint_snapshots",
        "title": "List task-state snapshots",
        "description": "This session's checkpoint snapshots, newest first; current marks the one the state came from. "
        "Give a name to checkpoint_restore.",
        "inputSchema": {"type": "object", "properties": {**_SESSION_ARG}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "checkpoint_restore",
        "title": "Restore task state",
        "description": "Make a snapshot this session's current checkpoint (default: the version before the current "
        "one). The replaced state is kept; checkpoint_undo goes back.",
        "inputSchema": {"type": "object", "properties": {**_SESSION_ARG, "snapshot": _STR}},
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "checkpoint_undo",
        "title": "Undo a restore",
        "description": "Revert this session's last checkpoint_restore.",
        "inputSchema": {"type": "object", "properties": {**_SESSION_ARG}},
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    },
    {
        "name": "checkpoint_handoff",
        "title": "Hand off task state",
        "description": "A Markdown hand-off of this session's checkpoint (or another's, by session), to continue the "
        "task elsewhere: returns its text and the file it was written to.",
        "inputSchema": {"type": "object", "properties": {**_SESSION_ARG}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]


def caller_session(environ: Mapping[str, str], meta: Any) -> str | None:
    """The Voyager id (``provider:native``) of the agent session making a call, when its agent says.

    * Claude Code starts each server with ``CLAUDE_CODE_SESSION_ID`` in its environment;
    * Codex sends ``_meta["x-codex-turn-metadata"]`` (``thread_id``, ``session_id``) and
      ``_meta.threadId`` with each ``tools/call``;
    * OpenCode sends ``_meta.sessionID``;
    * ``VOYAGER_CURRENT_SESSION`` in the server's environment names it for any other agent
      (a Voyager id, a native id or a prefix).

    The provider is known from where the id came, so a session no scan has seen yet is
    still named exactly (a checkpoint can be saved for it).
    """
    if isinstance(meta, dict):
        turn = meta.get("x-codex-turn-metadata")
        if isinstance(turn, str):
            try:
                turn = json.loads(turn)
            except ValueError:
                turn = None
        if isinstance(turn, dict):
            for key in ("thread_id", "session_id"):
                if isinstance(turn.get(key), str) and turn[key]:
                    return _qualified("codex", turn[key])
        if isinstance(meta.get("threadId"), str) and meta["threadId"]:
            return _qualified("codex", meta["threadId"])
        if isinstance(meta.get("sessionID"), str) and meta["sessionID"]:
            return _qualified("opencode", meta["sessionID"])
    if environ.get("VOYAGER_CURRENT_SESSION"):
        return environ["VOYAGER_CURRENT_SESSION"]
    if environ.get("CLAUDE_CODE_SESSION_ID"):
        return _qualified("claude", environ["CLAUDE_CODE_SESSION_ID"])
    return None


def _qualified(provider: str, native: str) -> str:
    return native if native.startswith(f"{provider}:") else f"{provider}:{native}"


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


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
            self._send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": exc.code, "message": str(exc)}})
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
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return self.call_tool(params)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    # -- methods -------------------------------------------------------------------------

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        # The spec: answer the client's version when supported, else the latest this server speaks.
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        from voyager_sessions import __version__

        self._start_warming()
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "voyager", "title": "Voyager", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if name not in {t["name"] for t in TOOLS}:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            return tool_error("arguments must be an object")
        from voyager_sessions.core.errors import VoyagerError, one_line

        calls = self.calls()
        current = caller_session(self.environ, params.get("_meta"))
        try:
            if name in CHECKPOINT_TOOLS:
                from voyager_sessions.mcp.calls import checkpoint

                doc = checkpoint(calls.data_dir, CHECKPOINT_TOOLS[name], args, current)
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


def tool_error(message: str) -> dict[str, Any]:
    """A failed tool call as the agent's model sees it: one line, no prefix."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _default_calls() -> Any:
    from voyager_sessions.mcp.calls import Calls

    return Calls()


def _warm_imports() -> None:
    try:
        import voyager_sessions.mcp.calls  # noqa: F401
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
