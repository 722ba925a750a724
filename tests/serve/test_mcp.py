"""``voyager mcp`` spoken to as MCP clients speak to it: JSON-RPC over its stdin and stdout."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.run import voyager_exe
from tests.support.serving import ServerProcess, cli, scanned_env
from tests.support.sessions import CLAUDE_SID, CODEX_SID


class JsonRpcClient:
    """A hand-written MCP client: newline-delimited JSON-RPC 2.0 over a child's stdio."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            voyager_exe() + ["mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.next_id = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        while True:
            line = self.proc.stdout.readline()
            assert line, self.proc.stderr.read().decode(errors="replace")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def send(self, msg: dict) -> None:
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, tool: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(20)
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()


@pytest.fixture
def corpus_env(tmp_path):
    return scanned_env(tmp_path)


def _session(env: dict, client: str = "voyager-tests") -> JsonRpcClient:
    rpc = JsonRpcClient(env)
    init = rpc.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
    )
    assert init["result"]["serverInfo"]["name"] == "voyager"
    assert "search" in init["result"]["instructions"]
    rpc.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return rpc


def meaning_available() -> bool:
    from voyager_sessions.api import meaning_available as available

    return available()


def _cli_json(env: dict, *argv: str) -> dict:
    got = cli(env, *argv, server=False)
    assert got.code in (0, 1), got
    return json.loads(got.out)


def _check_tools(env: dict) -> None:
    rpc = _session(env)
    try:
        tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
        assert set(tools) == {
            "search",
            "show",
            "list_sessions",
            "checkpoint_save",
            "checkpoint_status",
            "checkpoint_list",
            "checkpoint_snapshots",
            "checkpoint_restore",
            "checkpoint_undo",
            "checkpoint_handoff",
        }
        assert tools["show"]["inputSchema"]["required"] == ["session"]
        assert {"query", "provider", "kind", "since", "limit", "sessions", "context"} <= set(
            tools["search"]["inputSchema"]["properties"]
        )
        # search: the JSON contract's document, hits and all, as `voyager search --json` prints it.
        got = rpc.call("search", {"query": "postgres OR 数据库", "limit": 3})
        assert not got.get("isError")
        # An agent describes what it looks for: meaning is on by default where the model is installed.
        fused = ["--meaning"] if meaning_available() else []
        want = _cli_json(env, "search", "postgres OR 数据库", "--json", "-n", "3", *fused)
        assert got["structuredContent"] == want
        words = rpc.call("search", {"query": "postgres OR 数据库", "limit": 3, "meaning": False})
        assert words["structuredContent"] == _cli_json(env, "search", "postgres OR 数据库", "--json", "-n", "3")
        assert json.loads(got["content"][0]["text"]) == want
        assert want["hits"] and {"session_id", "seq", "snippet", "resume"} <= set(want["hits"][0])
        filtered = rpc.call("search", {"query": "", "provider": ["codex"], "kind": ["tool"], "sessions": True})
        assert filtered["structuredContent"] == _cli_json(
            env, "search", "--provider", "codex", "--kind", "tool", "--sessions", "--json"
        )
        assert rpc.call("search", {"query": "parse_config_v2", "context": 1, "since": "2000-01-01"})[
            "structuredContent"
        ] == _cli_json(env, "search", "parse_config_v2", "-C", "1", "--since", "2000-01-01", "--json", *fused)
        # show: a whole timeline, and the events around one hit.
        hit = want["hits"][0]
        around = rpc.call("show", {"session": hit["session_id"], "around": hit["seq"], "window": 1})
        assert around["structuredContent"] == _cli_json(
            env, "show", hit["session_id"], "--around", str(hit["seq"]), "-C", "1", "--json"
        )
        assert [e["seq"] for e in around["structuredContent"]["events"]] == list(
            range(max(0, hit["seq"] - 1), hit["seq"] + 2)
        )
        assert rpc.call("show", {"session": CLAUDE_SID[:8]})["structuredContent"] == _cli_json(
            env, "show", CLAUDE_SID[:8], "--json"
        )
        # list_sessions
        assert rpc.call("list_sessions", {"provider": "codex"})["structuredContent"] == _cli_json(
            env, "list", "--provider", "codex", "--json"
        )
        # Errors: the CLI's one line, as a tool error.
        bad = rpc.call("search", {"query": "("})
        assert bad["isError"] and "bad query" in bad["content"][0]["text"]
        missing = rpc.call("show", {"session": "nope"})
        assert missing["isError"] and "no session matches 'nope'" in missing["content"][0]["text"]
        too_many = rpc.call("search", {"query": "x", "limit": 10**9})
        assert too_many["isError"] and "limit must be an integer from 1 to 10000" in too_many["content"][0]["text"]
    finally:
        assert rpc.close() == 0


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_mcp_tools_answer_as_the_cli_does(corpus_env):
    _check_tools(corpus_env)


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_mcp_uses_the_server_when_one_runs(corpus_env):
    server = ServerProcess(corpus_env)
    try:
        _meaning_caught_up(server)  # the server embeds in the background: compare with the CLI once it is done
        before = server.status()
        _check_tools(corpus_env)
        after = server.status()
        # Every call with a well-formed request went through the server, a malformed query's too (the server's
        # API parses it: once, as typed); an argument out of bounds never left the process.
        # (one more search than before meaning: the words-only call, meaning=false)
        assert after["answered"] - before["answered"] == 9
        # Five searches reached the server, each query parsed once there.
        assert after["query_parses"] - before["query_parses"] == 5
    finally:
        assert server.stop() == 0


def _meaning_caught_up(server) -> None:
    import time

    deadline = time.monotonic() + 120
    while meaning_available() and time.monotonic() < deadline:
        m = (server.status() or {}).get("meaning") or {}
        if not m.get("embedding") and m.get("sessions_ready") == m.get("sessions_total"):
            return
        time.sleep(0.1)


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_the_sdk_client_talks_to_it(corpus_env):
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def talk() -> tuple[list[str], dict]:
        exe = voyager_exe()
        params = StdioServerParameters(command=exe[0], args=[*exe[1:], "mcp"], env=corpus_env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool("search", {"query": "ERR_CONN_REFUSED_42"})
            return sorted(t.name for t in tools.tools), result.structured_content

    names, doc = anyio.run(talk)
    assert {"list_sessions", "search", "show", "checkpoint_save"} <= set(names)
    fused = ["--meaning"] if meaning_available() else []
    assert doc == _cli_json(corpus_env, "search", "ERR_CONN_REFUSED_42", "--json", *fused)


def test_it_needs_no_sdk_and_imports_neither_click_nor_cli_rendering(corpus_env):
    """The server speaks MCP itself: with the SDK unimportable it still answers, and the tools reach the API only."""
    code = (
        "import sys, io, json\n"
        "sys.modules['mcp'] = None\n"
        "from voyager_sessions.mcp.server import Server\n"
        "out = io.BytesIO()\n"
        "s = Server(out)\n"
        "for m in [{'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2025-06-18'}},\n"
        "          {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {'name': 'search', 'arguments': {'query': 'postgres'}}},\n"
        "          {'jsonrpc': '2.0', 'id': 3, 'method': 'tools/call', 'params': {'name': 'list_sessions', 'arguments': {}}},\n"
        "          {'jsonrpc': '2.0', 'id': 4, 'method': 'tools/call', 'params': {'name': 'show', 'arguments': {'session': '0199'}}}]:\n"
        "    s.handle_line(json.dumps(m).encode())\n"
        "answers = [json.loads(line) for line in out.getvalue().splitlines()]\n"
        "assert all(not a['result'].get('isError') for a in answers), answers\n"
        "from voyager_sessions.api import query_parses\n"
        "assert query_parses() == 1, query_parses()  # one search, its query parsed once (the exclusion adds none)\n"
        "bad = sorted(m for m in sys.modules if m == 'click' or m.startswith(('click.', 'mcp.', 'pydantic')) or m in (\n"
        "    'voyager_sessions.cli.app', 'voyager_sessions.cli.render', 'voyager_sessions.cli.common', 'voyager_sessions.cli.reading',\n"
        "    'voyager_sessions.cli.reading', 'voyager_sessions.invocation'))\n"
        "print(json.dumps(bad))\n"
    )
    env = {**corpus_env, "VOYAGER_NO_SERVER": "1", "CLAUDE_CODE_SESSION_ID": CLAUDE_SID}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_the_handshake_imports_only_the_standard_library():
    """What runs before `initialize` is answered: no SDK, no click, no msgspec or tantivy (Codex waits ~1 s)."""
    code = (
        "import sys\nfrom voyager_sessions.mcp import server as mcp_server\n"
        "print(sorted(m for m in ('click', 'mcp', 'pydantic', 'msgspec', 'tantivy', 'voyager_sessions.api') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


def test_protocol_versions_pings_and_json_rpc_errors(corpus_env):
    rpc = JsonRpcClient(corpus_env)
    try:
        for asked, answered in (
            ("2024-11-05", "2024-11-05"),
            ("2025-11-25", "2025-11-25"),
            ("1999-01-01", "2025-11-25"),
        ):
            init = rpc.request(
                "initialize",
                {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            )
            assert init["result"]["protocolVersion"] == answered
            assert init["result"]["capabilities"] == {"tools": {"listChanged": False}}
        rpc.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no answer to a notification
        assert rpc.request("ping") == {"jsonrpc": "2.0", "id": rpc.next_id, "result": {}}
        assert rpc.request("resources/list")["error"]["code"] == -32601
        assert rpc.request("tools/call", {"name": "nope", "arguments": {}})["error"]["code"] == -32602
        rpc.proc.stdin.write(b"{not json\n")
        rpc.proc.stdin.flush()
        assert json.loads(rpc.proc.stdout.readline()) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "parse error"},
        }
        rpc.send([{"jsonrpc": "2.0", "id": 99, "method": "ping"}])  # batches are not part of MCP since 2025-06-18
        assert json.loads(rpc.proc.stdout.readline())["error"]["code"] == -32600
        # A tool error is one line, the message the CLI prints after "voyager: ", nothing before it.
        bad = rpc.call("search", {"query": '"unclosed'})
        assert bad["isError"] and bad["content"][0]["text"].startswith("bad query: unterminated quote")
        assert "\n" not in bad["content"][0]["text"]
        wrong = rpc.call("search", {"query": "x", "limit": "many"})
        assert wrong["isError"] and wrong["content"] == [
            {"type": "text", "text": "limit must be an integer from 1 to 10000"}
        ]
        empty = rpc.call("search", {"query": "  "})
        assert empty["isError"] and empty["content"][0]["text"] == "nothing to search for: give a query or a filter"
        # And it goes on answering.
        assert rpc.call("search", {"query": "ERR_CONN_REFUSED_42"})["structuredContent"]["total"] >= 1
    finally:
        assert rpc.close() == 0


def _sessions_of(result: dict) -> set[str]:
    return {h["session_id"] for h in result["structuredContent"]["hits"]}


#: How each agent says which session is calling (as observed: docs/serve.md), and the client name it sends.
CALLERS = {
    "claude-env": "claude-code",
    "codex-meta": "codex-mcp-client",
    "opencode-running-tool": "opencode",
    "unknown-client-claude-env": "some-fork",
}


def _opencode_calling(env: dict[str, str], arguments: dict) -> str:
    """OpenCode's store (the real capture's database, copied) with this call running in its session, as OpenCode
    1.18.33 writes it before it calls; the session's Voyager id."""
    import shutil
    import sqlite3

    from tests.support.captures import CAPTURES

    home = Path(env["VOYAGER_OPENCODE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    src = CAPTURES / "opencode-1.18.33" / ".local" / "share" / "opencode"
    for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm"):
        shutil.copyfile(src / name, home / name)
    conn = sqlite3.connect(home / "opencode.db")
    ((sid, mid),) = conn.execute("SELECT session_id, message_id FROM part ORDER BY rowid DESC LIMIT 1").fetchall()
    now = int(time.time() * 1000)
    state = {"status": "running", "input": arguments, "time": {"start": now}}
    part = {"type": "tool", "tool": "voyager_search", "callID": "call_1", "state": state}
    conn.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
        ("prt_running", mid, sid, now, now, json.dumps(part)),
    )
    conn.commit()
    conn.close()
    return sid


@pytest.mark.parametrize("how", sorted(CALLERS))
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_the_callers_own_session_is_left_out(corpus_env, how):
    env = dict(corpus_env)
    meta = None
    query = "postgres OR 数据库" if how != "opencode-running-tool" else "数据库 OR PROMPT_OPEN1dd4a8"
    if how in ("claude-env", "unknown-client-claude-env"):
        own = CLAUDE_SID
        env["CLAUDE_CODE_SESSION_ID"] = CLAUDE_SID
    elif how == "codex-meta":
        own = CODEX_SID
        meta = {"x-codex-turn-metadata": {"session_id": CODEX_SID, "thread_id": CODEX_SID, "turn_id": "t1"}}
    else:
        own = _opencode_calling(env, {"query": query})
    rpc = _session(env, CALLERS[how])
    try:

        def search(args: dict) -> dict:
            params = {"name": "search", "arguments": args, **({"_meta": meta} if meta else {})}
            return rpc.request("tools/call", params)["result"]

        fused = ["--meaning"] if meaning_available() else []  # the tool's default where the model is installed
        everything = search({"query": query, "include_current": True})["structuredContent"]
        assert everything == _cli_json(corpus_env, "search", query, "--json", *fused)
        every_session = {h["session_id"] for h in everything["hits"]}
        assert any(own in s for s in every_session)
        left = search({"query": query})
        assert left["structuredContent"]["query"] == query  # what was asked, not our filter
        assert _sessions_of(left) == {s for s in every_session if own not in s}
        assert left["structuredContent"]["total"] < everything["total"]
        if how == "opencode-running-tool":
            return  # the running call is this query's: another query is another call
        # Naming the session outright keeps it.
        assert any(own in s for s in _sessions_of(search({"query": "", "session": own[:8]})))
        # With only filters, the exclusion alone still leaves every other session's events.
        assert not any(own in s for s in _sessions_of(search({"query": "", "kind": ["user"]})))
    finally:
        assert rpc.close() == 0


def test_an_agent_that_does_not_say_is_told_so_and_nothing_is_left_out(corpus_env):
    """Gemini CLI 0.61.0 names no session (a random progress token, GEMINI_CLI=1): nothing is left out, and what
    the server says to it says so; its environment holding another agent's session id changes nothing."""
    env = {**corpus_env, "CLAUDE_CODE_SESSION_ID": CLAUDE_SID}  # Gemini started from a Claude Code shell
    rpc = JsonRpcClient(env)
    try:
        init = rpc.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "clientInfo": {"name": "gemini-cli-mcp-client", "version": "0.61.0"}},
        )["result"]
        assert "Gemini CLI does not tell Voyager which session is calling" in init["instructions"]
        assert "is left out" not in init["instructions"]
        tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
        assert "Gemini CLI does not tell Voyager" in tools["search"]["description"]
        assert "give your own" in tools["checkpoint_status"]["inputSchema"]["properties"]["session"]["description"]
        got = rpc.call("search", {"query": "postgres OR 数据库"})["structuredContent"]
        fused = ["--meaning"] if meaning_available() else []
        assert got == _cli_json(corpus_env, "search", "postgres OR 数据库", "--json", *fused)
        missing = rpc.call("checkpoint_status", {})
        assert missing["isError"] and missing["content"] == [
            {
                "type": "text",
                "text": "Gemini CLI does not tell Voyager which session is calling: pass session (your session's id; "
                "list_sessions shows the newest sessions first)",
            }
        ]
    finally:
        assert rpc.close() == 0


def test_checkpoint_tools_act_on_the_calling_session(corpus_env):
    env = {**corpus_env, "CLAUDE_CODE_SESSION_ID": CLAUDE_SID}
    own = f"claude:{CLAUDE_SID}"
    rpc = _session(env, "claude-code")
    try:
        first = rpc.call(
            "checkpoint_save",
            {"title": "Fix the migration", "status": "in progress", "next": ["guard None", "run tests"]},
        )
        assert not first.get("isError"), first
        saved = first["structuredContent"]
        assert saved["session_id"] == own and saved["changed"] and saved["checkpoint"]["title"] == "Fix the migration"
        # A save that changes nothing writes nothing (the store's guarantee: no phantom progress).
        again = rpc.call("checkpoint_save", {"next": ["guard None"]})["structuredContent"]
        assert again["changed"] is False and again["snapshot"] is None
        moved = rpc.call("checkpoint_save", {"done": ["guard None"]})["structuredContent"]
        assert moved["checkpoint"]["completed_steps"] == ["guard None"] and moved["checkpoint"]["next_steps"] == [
            "run tests"
        ]
        # The same document the CLI prints: one API, two front ends.
        status = rpc.call("checkpoint_status", {})["structuredContent"]
        assert status == _cli_json(corpus_env, "checkpoint", "status", own, "--json")
        assert status["snapshots"] == 2
        snaps = rpc.call("checkpoint_snapshots", {})["structuredContent"]["snapshots"]
        assert len(snaps) == 2 and snaps[0]["current"]
        back = rpc.call("checkpoint_restore", {})["structuredContent"]
        assert back["changed"] and back["checkpoint"]["next_steps"] == ["guard None", "run tests"]
        undone = rpc.call("checkpoint_undo", {})["structuredContent"]
        assert undone["changed"] and undone["checkpoint"]["completed_steps"] == ["guard None"]
        handoff = rpc.call("checkpoint_handoff", {})["structuredContent"]
        assert "Fix the migration" in handoff["markdown"] and handoff["path"].endswith(".md")
        listed = rpc.call("checkpoint_list", {})["structuredContent"]["sessions"]
        assert [r["session_id"] for r in listed] == [own]
        # Another session's checkpoint can be read, never changed, by a caller that says who it is.
        other = rpc.call("checkpoint_save", {"session": CODEX_SID, "title": "x"})
        assert other["isError"] and other["content"][0]["text"].startswith("checkpoint save changes only the calling")
        assert rpc.call("checkpoint_status", {"session": CODEX_SID})["structuredContent"]["checkpoint"] is None
    finally:
        assert rpc.close() == 0


def test_checkpoint_tools_need_a_session_when_the_agent_names_none(corpus_env):
    rpc = _session(corpus_env)
    try:
        missing = rpc.call("checkpoint_status", {})
        assert missing["isError"] and missing["content"][0]["text"].startswith(
            "this agent does not tell Voyager which session is calling: pass session"
        )
        saved = rpc.call("checkpoint_save", {"session": CODEX_SID[:8], "objective": "retry postgres"})
        assert saved["structuredContent"]["session_id"] == f"codex:{CODEX_SID}"
        bad = rpc.call("checkpoint_save", {"session": CODEX_SID[:8], "done": "not a list"})
        assert not bad.get("isError")  # one string where a list is asked: taken as a list of one
        wrong = rpc.call("checkpoint_save", {"session": CODEX_SID[:8], "colour": "red"})
        assert wrong["isError"] and wrong["content"][0]["text"] == "unknown argument(s) for checkpoint_save: colour"
    finally:
        assert rpc.close() == 0


def test_a_session_no_scan_has_seen_can_save_its_checkpoint(corpus_env):
    fresh = "11111111-2222-4333-8444-555555555555"
    rpc = _session({**corpus_env, "CLAUDE_CODE_SESSION_ID": fresh}, "claude-code")
    try:
        got = rpc.call("checkpoint_save", {"title": "brand new"})["structuredContent"]
        assert got["session_id"] == f"claude:{fresh}" and got["changed"]
    finally:
        assert rpc.close() == 0


def test_text_no_file_or_encoder_can_take_is_the_agents_one_line(corpus_env):
    """JSON can carry what no path or query can hold: a lone surrogate (``\\udcff``, bytes that were not UTF-8)
    or a NUL. Each is a tool error of one line saying so, never "internal error", and the server goes on."""
    rpc = _session(corpus_env)
    try:
        for tool, arguments in (
            ("search", {"query": "a\udcffb"}),
            ("search", {"query": "the", "cwd": "/x\udcff"}),
            ("search", {"query": "the", "session": "x\udcff"}),
            ("show", {"session": "x\udcff"}),
            ("show", {"session": "x\x00y"}),
        ):
            result = rpc.call(tool, arguments)
            text = result["content"][0]["text"]
            assert result.get("isError") is True and "internal error" not in text, (arguments, text)
            assert ("not UTF-8" in text or "NUL" in text or "no session" in text.lower()) and "\n" not in text, text
        assert rpc.call("search", {"query": "postgres"}).get("isError") is not True  # still answering
    finally:
        assert rpc.close() == 0
