"""``voyager mcp`` spoken to as MCP clients speak to it: JSON-RPC over its stdin and stdout."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import CLAUDE_SID, voyager_exe
from tests.serve.conftest import ServerProcess, cli, scanned_env


class JsonRpcClient:
    """A hand-written MCP client: newline-delimited JSON-RPC 2.0 over a child's stdio."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(voyager_exe() + ["mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
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


def _session(env: dict) -> JsonRpcClient:
    rpc = JsonRpcClient(env)
    init = rpc.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "voyager-tests", "version": "1"}})
    assert init["result"]["serverInfo"]["name"] == "voyager"
    assert "search" in init["result"]["instructions"]
    rpc.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return rpc


def _cli_json(env: dict, *argv: str) -> dict:
    got = cli(env, *argv, server=False)
    assert got.code in (0, 1), got
    return json.loads(got.out)


def _check_tools(env: dict) -> None:
    rpc = _session(env)
    try:
        tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
        assert set(tools) == {"search", "show", "list_sessions"}
        assert tools["show"]["inputSchema"]["required"] == ["session"]
        assert {"query", "provider", "kind", "since", "limit", "sessions", "context"} <= set(
            tools["search"]["inputSchema"]["properties"])
        # search: the JSON contract's document, hits and all, as `voyager search --json` prints it.
        got = rpc.call("search", {"query": "postgres OR 数据库", "limit": 3})
        assert not got.get("isError")
        want = _cli_json(env, "search", "postgres OR 数据库", "--json", "-n", "3")
        assert got["structuredContent"] == want
        assert json.loads(got["content"][0]["text"]) == want
        assert want["hits"] and {"session_id", "seq", "snippet", "resume"} <= set(want["hits"][0])
        filtered = rpc.call("search", {"query": "", "provider": ["codex"], "kind": ["tool"], "sessions": True})
        assert filtered["structuredContent"] == _cli_json(env, "search", "--provider", "codex", "--kind", "tool",
                                                          "--sessions", "--json")
        assert rpc.call("search", {"query": "parse_config_v2", "context": 1, "since": "2000-01-01"})[
            "structuredContent"] == _cli_json(env, "search", "parse_config_v2", "-C", "1", "--since", "2000-01-01",
                                              "--json")
        # show: a whole timeline, and the events around one hit.
        hit = want["hits"][0]
        around = rpc.call("show", {"session": hit["session_id"], "around": hit["seq"], "window": 1})
        assert around["structuredContent"] == _cli_json(env, "show", hit["session_id"], "--around", str(hit["seq"]),
                                                        "-C", "1", "--json")
        assert [e["seq"] for e in around["structuredContent"]["events"]] == list(range(max(0, hit["seq"] - 1),
                                                                                       hit["seq"] + 2))
        assert rpc.call("show", {"session": CLAUDE_SID[:8]})["structuredContent"] == _cli_json(
            env, "show", CLAUDE_SID[:8], "--json")
        # list_sessions
        assert rpc.call("list_sessions", {"provider": "codex"})["structuredContent"] == _cli_json(
            env, "list", "--provider", "codex", "--json")
        # Errors: the CLI's one line, as a tool error.
        bad = rpc.call("search", {"query": "("})
        assert bad["isError"] and "bad query" in bad["content"][0]["text"]
        missing = rpc.call("show", {"session": "nope"})
        assert missing["isError"] and "no session matches 'nope'" in missing["content"][0]["text"]
        too_many = rpc.call("search", {"query": "x", "limit": 10**9})
        assert too_many["isError"] and "limit must be an integer from 1 to 10000" in too_many["content"][0]["text"]
    finally:
        assert rpc.close() == 0


def test_mcp_tools_answer_as_the_cli_does(corpus_env):
    _check_tools(corpus_env)


def test_mcp_uses_the_server_when_one_runs(corpus_env):
    server = ServerProcess(corpus_env)
    try:
        before = server.status()["answered"]
        _check_tools(corpus_env)
        # Every successful or failing command call went through the server (argument errors never left the process).
        assert server.status()["answered"] - before == 8
    finally:
        assert server.stop() == 0


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
    assert names == ["list_sessions", "search", "show"]
    assert doc == _cli_json(corpus_env, "search", "ERR_CONN_REFUSED_42", "--json")


def test_without_the_sdk_one_clear_line(corpus_env):
    code = "import sys\nsys.modules['mcp'] = None\nfrom voyager_sessions.main import main\nmain()\n"
    proc = subprocess.run([sys.executable, "-c", code, "mcp"], capture_output=True, text=True, env=corpus_env,
                          timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr == "voyager: `voyager mcp` needs the MCP Python SDK: pip install 'voyager-sessions[mcp]'\n"
    assert proc.stdout == ""
