"""``voyager mcp``: an MCP server on stdio, so agents can search their own past sessions.

Built on the official MCP Python SDK (the optional extra ``voyager-sessions[mcp]``).
Three tools, each the JSON document of the matching command, so an agent sees exactly
what ``voyager … --json`` prints (see ``docs/json.md``):

* ``search``: the query language, its filters, a limit and offset; the search document
  with its hits (``session_id``, ``seq``, ``kind``, ``snippet``, ``resume`` …);
* ``show``: a session's timeline, or the events around one hit (``around`` = its seq);
* ``list_sessions``: sessions, newest first.

Each call is an application API request (``voyager_sessions.api``): it goes to ``voyager
serve`` when one runs for the data dir (the index is then already open and fresh) and is
answered in this process otherwise; both call the same API function, so the documents
are the same. A user error (a malformed query, an unknown session) comes back as a tool
error whose text is the CLI's one-line message without its ``voyager: `` prefix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from voyager_sessions.errors import UserError

INSTALL_HINT = "`voyager mcp` needs the MCP Python SDK: pip install 'voyager-sessions[mcp]'"

INSTRUCTIONS = (
    "Voyager indexes the session histories of the coding agents on this machine (Claude Code, Codex, OpenCode, "
    "Gemini CLI …): every prompt, reply, reasoning step, tool call and tool output. Use `search` to find what was "
    "said, run or seen before (decisions, errors, commands, file names), `show` with a hit's session_id and "
    "seq as `around` to read the conversation around it, and `list_sessions` to see recent sessions."
)


class Runner:
    """Answers a tool call through the application API: on the server when one answers, else in this process."""

    def __init__(self, data_dir: Path | None = None) -> None:
        from voyager_sessions.paths import data_dir as default_data_dir

        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()

    def document(self, op: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The result document of API operation ``op`` for request ``fields``, as JSON data; UserError on failure."""
        from voyager_sessions import api
        from voyager_sessions.errors import failure

        try:
            return json.loads(api.call(op, fields, data_dir=self.data_dir))
        except ValueError as exc:  # a malformed request (json's own errors are ValueErrors too: none here)
            raise UserError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a tool error, worded as the CLI words it
            raise UserError(failure(exc)[0].removeprefix("voyager: ")) from None


def build(runner: Runner | None = None) -> Any:
    """The MCP server with Voyager's tools (raises UserError with an install hint when the SDK is missing)."""
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    from voyager_sessions import __version__

    runner = runner or Runner()
    server = MCPServer("voyager", version=__version__, instructions=INSTRUCTIONS)

    def call(cmd: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return runner.document(cmd, params)
        except UserError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    def search(query: str = "", provider: list[str] | None = None, kind: list[str] | None = None,
               repo: str | None = None, cwd: str | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None, limit: int = 20, offset: int = 0,
               sort: Literal["relevance", "recent"] = "relevance", sessions: bool = False,
               context: int = 0) -> dict[str, Any]:
        """Search every coding agent session on this machine (prompts, replies, reasoning, tool calls and outputs).

        Query language: words must all match; "an exact phrase"; -word or NOT word excludes; a OR b;
        (groups); prefix*; identifiers, paths and pasted error lines work as typed; filters inside the
        query: provider:codex kind:tool_result repo:NAME cwd:PATH session:ID since:7d until:2026-11-01.
        kind is one of user, assistant, reasoning, tool_call, tool_result (tool = both), meta, checkpoint.
        sessions=true gives one row per session (its best hit and hit_count); context=N adds N events
        around each hit. Returns {"total", "offset", "hits": [{session_id, seq, kind, provider, timestamp,
        cwd, title, snippet, highlights, resume, tool, exit_code, hit_count, context}]}; read more of a
        hit with show(session_id, around=seq).
        """
        return call("search", {
            "query": query, "limit": limit, "offset": offset, "providers": list(provider or ()),
            "kinds": list(kind or ()), "repo": repo, "cwd": cwd, "session": session, "since": since,
            "until": until, "sort": sort, "sessions": sessions, "context": context,
            "remember": False})  # an agent's search is not the person's last search (voyager resume -)

    @server.tool()
    def show(session: str, around: int | None = None, window: int = 10) -> dict[str, Any]:
        """A session's timeline: its metadata and events (seq, kind, origin, text, tool, exit_code).

        session is a session_id from search or list_sessions (or a unique prefix of it). With around=SEQ
        (a hit's seq) only the `window` events on each side of it are returned: prefer that for long sessions.
        """
        return call("show", {"session": session, "around": around, "window": window})

    @server.tool()
    def list_sessions(provider: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """Sessions, newest first: session_id, provider, title, cwd, started, updated, events, resume."""
        return call("list", {"provider": provider, "limit": limit, "offset": offset})

    return server


def run_stdio() -> None:
    """Serve MCP on stdin/stdout until the client closes them."""
    build().run()
