"""``voyager mcp`` tells each agent only what is true for it, and answers both eras of the protocol.

What each agent sends was observed with the real CLIs (docs/serve.md has the table): Claude Code
2.1.332 (``claude-code``; ``CLAUDE_CODE_SESSION_ID`` in the server's environment; ``server/discover``
first, protocol 2026-07-28), Codex 0.171.0 (``codex-mcp-client``; ``x-codex-turn-metadata``, ``threadId``
in each call's ``_meta``), OpenCode 1.18.33 (``opencode``; a progress token only, the call written to its
database as running before it calls), Gemini CLI 0.61.0 (``gemini-cli-mcp-client``; nothing).
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from voyager_sessions.api import agents
from voyager_sessions.mcp import server


def _ask(s: server.Server, method: str, params: dict[str, Any] | None = None, id_: int = 1) -> dict[str, Any]:
    out = s.out
    assert isinstance(out, io.BytesIO)
    out.seek(0)
    out.truncate()
    s.handle_line(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}).encode())
    return json.loads(out.getvalue())


def _server(**environ: str) -> server.Server:
    return server.Server(io.BytesIO(), environ=environ)


def test_the_handshake_table_is_the_manifests() -> None:
    """The copy the handshake reads (standard library only) says what the manifest's rows say."""
    want: dict[str, tuple[str, str]] = {}
    for a in agents.mcp_agents().values():
        if a.mcp.client:
            ways = a.mcp.caller
            first = ways[0] if ways else ""
            kind = first.partition(":")[0]
            want[a.mcp.client] = (a.label, first if kind in ("env", "running-tool") else kind)
    assert server.HANDSHAKE_CLIENTS == want


MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "title": "Claude Code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}


def test_server_discover_is_answered_as_the_2026_07_28_revision_says() -> None:
    """Claude Code 2.1.332 sends server/discover first (and fell back to initialize on "method not found")."""
    s = _server(CLAUDE_CODE_SESSION_ID="abc")
    got = _ask(s, "server/discover", {"_meta": MODERN})["result"]
    assert got["resultType"] == "complete"
    assert got["supportedVersions"][0] == "2026-07-28" and "2025-11-25" in got["supportedVersions"]
    assert got["capabilities"] == {"tools": {}}
    assert got["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "voyager"
    assert got["ttlMs"] >= 0 and got["cacheScope"] in ("public", "private")
    assert "Your own current session is left out" in got["instructions"]
    # Then stateless requests: each names its version and client; results say they are complete.
    listed = _ask(s, "tools/list", {"_meta": MODERN}, 2)["result"]
    assert listed["resultType"] == "complete" and {"ttlMs", "cacheScope"} <= set(listed)
    assert "search" in {t["name"] for t in listed["tools"]}
    bad = _ask(s, "tools/list", {"_meta": {**MODERN, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}, 3)
    assert bad["error"]["code"] == -32022
    assert bad["error"]["data"] == {"supported": got["supportedVersions"], "requested": "2099-01-01"}
    # A legacy client is answered as before.
    init = _ask(_server(), "initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"name": "x"}})["result"]
    assert init["protocolVersion"] == "2025-11-25" and "resultType" not in init


@pytest.mark.parametrize(
    "client,environ,says",
    [
        ("claude-code", {"CLAUDE_CODE_SESSION_ID": "s"}, "Your own current session is left out"),
        # A Claude Code whose environment names no session (an older one, or started otherwise): not promised.
        ("claude-code", {}, "Claude Code does not tell Voyager which session is calling"),
        ("codex-mcp-client", {}, "Your own current session is left out"),
        ("opencode", {}, "Your own current session is left out"),
        ("gemini-cli-mcp-client", {}, "Gemini CLI does not tell Voyager which session is calling"),
        ("gemini-cli-mcp-client", {"VOYAGER_CURRENT_SESSION": "gemini:x"}, "Your own current session is left out"),
        ("something-else", {}, "only when your agent tells Voyager which session is calling (Claude Code, Codex"),
    ],
)
def test_the_instructions_say_only_what_is_true_for_the_client(client: str, environ: dict, says: str) -> None:
    init = _ask(_server(**environ), "initialize", {"protocolVersion": "2025-06-18", "clientInfo": {"name": client}})
    text = init["result"]["instructions"]
    assert says in text
    if "left out of" in says:
        assert "does not tell" not in text


def test_the_calling_session_by_each_agents_own_way(tmp_path: Path) -> None:
    meta = {"x-codex-turn-metadata": {"session_id": "S", "thread_id": "T"}, "threadId": "T2"}
    assert agents.calling_session("codex-mcp-client", {}, meta, "search", {}) == "codex:T"
    assert agents.calling_session("codex-mcp-client", {}, {"threadId": "T2"}, "search", {}) == "codex:T2"
    # Codex has sent its turn metadata as a JSON string too.
    as_text = {"x-codex-turn-metadata": json.dumps({"thread_id": "T3"})}
    assert agents.calling_session("codex-mcp-client", {}, as_text, "search", {}) == "codex:T3"
    env = {"CLAUDE_CODE_SESSION_ID": "C", "HOME": str(tmp_path)}
    assert agents.calling_session("claude-code", env, None, "search", {}) == "claude:C"
    # Each known client by its own way only: Gemini started from a Claude Code shell is not that Claude session.
    assert agents.calling_session("gemini-cli-mcp-client", env, meta, "search", {}) is None
    # An unknown client is asked every agent's env and _meta ways (a renamed build says it the same way).
    assert agents.calling_session("claude-fork", env, None, "search", {}) == "claude:C"
    assert agents.calling_session("codex-fork", {}, meta, "search", {}) == "codex:T"
    assert agents.calling_session("someone", {}, {"sessionId": "X", "threadId": "Y"}, "search", {}) is None
    assert agents.calling_session(None, {"VOYAGER_CURRENT_SESSION": "pi:p"}, None, "search", {}) == "pi:p"


def _opencode_store(home: Path, parts: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    db = home / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, "
        "time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)"
    )
    now = int(time.time() * 1000)
    for i, (sid, data) in enumerate(parts):
        conn.execute("INSERT INTO part VALUES (?, 'm', ?, ?, ?, ?)", (f"p{i}", sid, now, now, json.dumps(data)))
    conn.commit()
    conn.close()
    return {"HOME": str(home), "VOYAGER_OPENCODE_HOME": str(db.parent)}


def _running(tool: str, arguments: dict[str, Any], status: str = "running") -> dict[str, Any]:
    return {"type": "tool", "tool": tool, "callID": "c", "state": {"status": status, "input": arguments}}


def test_opencodes_calling_session_is_the_one_running_this_call(tmp_path: Path) -> None:
    args = {"query": "ERR_CONN_REFUSED_42"}
    env = _opencode_store(
        tmp_path / "a",
        [
            ("ses_done", _running("voyager_search", args, "completed")),
            ("ses_other", _running("voyager_search", {"query": "else"})),
            ("ses_mine", _running("voyager_search", args)),
            ("ses_text", {"type": "text", "text": "running voyager_search"}),
        ],
    )
    assert agents.calling_session("opencode", env, {"progressToken": 2}, "search", args) == "opencode:ses_mine"
    # Two sessions making the very same call now: no guess, nothing left out.
    both = _opencode_store(
        tmp_path / "b", [("ses_1", _running("voyager_search", args)), ("ses_2", _running("mine_search", args))]
    )
    assert agents.calling_session("opencode", both, {}, "search", args) is None


def test_the_store_is_only_read(tmp_path: Path) -> None:
    args = {"query": "q"}
    env = _opencode_store(tmp_path, [("ses_mine", _running("voyager_search", args))])
    folder = Path(env["VOYAGER_OPENCODE_HOME"])
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert agents.calling_session("opencode", env, {}, "search", args) == "opencode:ses_mine"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
