"""Through ``voyager serve`` or in the command's own process, the output is the same bytes, every output mode."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.run import voyager_exe
from tests.support.serving import ESCAPES, HOSTILE_SID, cli
from tests.support.sessions import CLAUDE_SID, CODEX_SID

#: Every output mode of every reading command, and their errors.
CASES: list[list[str]] = [
    ["search", "parse_config_v2"],
    ["search", "parse_config_v2", "--color", "always"],
    ["search", "parse_config_v2", "--color", "never"],
    ["search", "parse_config_v2", "-C", "2"],
    ["search", "parse_config_v2", "-C", "2", "--color", "always"],
    ["search", "parse_config_v2", "-n", "1"],
    ["search", "postgres", "--sessions"],
    ["search", "postgres OR 数据库", "--sessions", "--color", "always"],
    ["search", "postgres OR 数据库", "--json"],
    ["search", "postgres OR 数据库", "--jsonl"],
    ["search", "数据库", "--json", "--sessions", "-C", "1"],
    ["search", "postgres OR 数据库", "--jsonl", "-C", "1", "--sort", "recent"],
    ["search", "postgres", "--offset", "50"],
    ["search", "--provider", "codex", "--kind", "tool", "--json"],
    ["search", "ERR_CONN_REFUSED_42", "--no-refresh", "--sort", "recent", "--json"],
    ["search", "--", "-postgres", "systemctl"],
    ["search", "parse_config_v2", "--session", HOSTILE_SID[:8]],
    ["search", "parse_config_v2", "--session", HOSTILE_SID[:8], "--color", "always", "-C", "3"],
    ["search", "parse_config_v2", "--session", HOSTILE_SID[:8], "--json"],
    ["search", "qwertyuiopasdf"],
    ["search", "qwertyuiopasdf", "--json"],
    ["search", "("],
    ["search", "x", "--provider", "nope"],
    ["search", "x", "--since", "7x"],
    ["search"],
    ["list"],
    ["list", "--json"],
    ["list", "--provider", "codex"],
    ["list", "-n", "1", "--json"],
    ["list", "--offset", "10"],
    ["show", CLAUDE_SID[:8]],
    ["show", CLAUDE_SID[:8], "--json"],
    ["show", CLAUDE_SID, "--around", "2", "-C", "1"],
    ["show", CLAUDE_SID[:8], "--color", "always"],
    ["show", CODEX_SID, "--json", "--around", "3", "-C", "0"],
    ["show", HOSTILE_SID[:8]],
    ["show", HOSTILE_SID[:8], "--json"],
    ["show", "nope"],
    ["show", "0"],  # two sessions start with 0: ambiguous
    ["stats"],
    ["stats", "--json"],
]


@pytest.mark.slow
def test_every_output_mode_is_byte_for_byte_the_same(served_module):
    env, server = served_module
    before = server.status()["answered"]

    def both(argv: list[str]) -> tuple[list[str], object, object]:
        return argv, cli(env, *argv), cli(env, *argv, server=False)

    with ThreadPoolExecutor(4) as pool:
        for argv, through_server, in_process in pool.map(both, CASES):
            assert through_server == in_process, argv
            assert through_server.code in (0, 1, 2), (argv, through_server)
    # Each of them was answered by the server, not run by the client after all.
    assert server.status()["answered"] - before == len(CASES)


def test_hostile_text_reaches_neither_way_raw(served_module):
    env, _ = served_module
    for argv in (["search", "parse_config_v2", "--session", HOSTILE_SID[:8], "-C", "3"], ["show", HOSTILE_SID[:8]]):
        out = cli(env, *argv).out
        assert b"\x1b" not in out and b"\xc2\x9b" not in out and b"\x07" not in out, argv
        assert b"OVERWRITE" in out
    assert ESCAPES  # the corpus holds them (see conftest.write_corpus)


def _on_a_terminal(env: dict[str, str], argv: list[str]) -> tuple[int, bytes]:
    """Run ``voyager ARGV`` with stdout on a pseudo-terminal; its exit code and what reached the terminal."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            voyager_exe() + argv, env=env, stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
    finally:
        os.close(slave)
    chunks = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the other side is closed and drained
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
    return proc.wait(30), b"".join(chunks)


@pytest.mark.parametrize(
    "argv", [["search", "parse_config_v2", "-C", "1"], ["show", CLAUDE_SID[:8]]], ids=["search", "show"]
)
def test_colour_on_a_terminal_is_the_same(served_module, argv):
    env, server = served_module
    before = server.status()["answered"]
    through_server = _on_a_terminal(env, argv)
    in_process = _on_a_terminal({**env, "VOYAGER_NO_SERVER": "1"}, argv)
    assert through_server == in_process
    assert b"\x1b[1m" in through_server[1]  # coloured: the client's terminal decided, not the server's
    assert server.status()["answered"] == before + 1
    # NO_COLOR is the client's too.
    plain = _on_a_terminal({**env, "NO_COLOR": "1"}, argv)
    assert plain == _on_a_terminal({**env, "NO_COLOR": "1", "VOYAGER_NO_SERVER": "1"}, argv)
    assert b"\x1b[" not in plain[1]


def test_a_search_right_after_an_append_finds_it(served):
    env, server = served
    from pathlib import Path

    from tests.support.sessions import claude_session_lines, write_claude

    home = Path(env["HOME"])
    lines = claude_session_lines()
    for n in range(3):
        lines.append(lines[1].replace("我们的数据库迁移失败了", f"appended zanzibar{n}"))
        write_claude(home, lines)
        got = cli(env, "search", f"zanzibar{n}", "--json")
        assert got.code == 0, got
        assert b'"total":1' in got.out
    assert server.status()["answered"] >= 3


def test_a_client_with_another_environment_is_answered_in_its_own_process(served_module, tmp_path):
    env, server = served_module
    other = {**env, "VOYAGER_CODEX_HOME": str(tmp_path / "elsewhere")}
    before = server.status()
    got = cli(other, "search", "postgres", "--json", "--no-refresh")
    assert got == cli(other, "search", "postgres", "--json", "--no-refresh", server=False)
    after = server.status()
    assert after["fallbacks"] == before["fallbacks"] + 1 and after["answered"] == before["answered"]


def test_a_search_through_the_server_is_the_last_search_and_an_agents_is_not(served_module):
    import json
    from pathlib import Path

    from voyager_sessions.core import remote as client
    from voyager_sessions.core.paths import DataDir

    env, server = served_module
    last = DataDir(env["VOYAGER_HOME"]).last_search
    got = cli(env, "search", "systemctl", "--json")
    assert got.code == 0
    doc = json.loads(last.read_text())
    assert doc["query"] == "systemctl" and doc["session_id"] == f"codex:{CODEX_SID}"
    # What `voyager resume -` and `export -` read: the same as after an in-process search.
    assert cli(env, "search", "systemctl", "--json", server=False).code == 0
    assert {k: v for k, v in json.loads(last.read_text()).items() if k != "at"} == {
        k: v for k, v in doc.items() if k != "at"
    }
    # An agent's search (voyager mcp: remember false) leaves it alone.
    request = client.base_request(
        "search", env["VOYAGER_HOME"], {"query": "parse_config_v2", "refresh": False}, environ=env
    )
    answered = client.exchange(client.socket_path(env["VOYAGER_HOME"]), request, ack_timeout=3.0)
    assert answered is not None and json.loads(answered[1])["total"] > 0
    assert json.loads(last.read_text())["query"] == "systemctl"
    assert not list(Path(env["VOYAGER_HOME"]).glob(".last-search.*.tmp"))


def test_a_search_parses_its_query_once_through_the_server(served_module):
    # The server parses each request's query once (its status counts); the client, rendering, never does.
    env, server = served_module
    for argv in (
        ["search", "parse_config_v2"],
        ["search", "postgres OR 数据库", "--jsonl", "-C", "1"],
        ["search", "数据库", "--json", "--sessions"],
    ):
        before = server.status()
        assert cli(env, *argv).code == 0
        after = server.status()
        assert after["answered"] == before["answered"] + 1, argv
        assert after["query_parses"] == before["query_parses"] + 1, argv
    # A malformed query: parsed once, refused, nothing more.
    before = server.status()["query_parses"]
    assert cli(env, "search", "(").code == 2
    assert server.status()["query_parses"] == before + 1


def test_api_call_answers_alike_through_the_server_and_in_process(served_module, monkeypatch):
    # What `voyager mcp` and the UIs call: the same bytes either way, and a failure worded alike.
    import os

    from voyager_sessions import api
    from voyager_sessions.core.errors import failure

    env, server = served_module
    monkeypatch.setattr(os, "environ", dict(env))  # this process as the server's clients are
    ddir = env["VOYAGER_HOME"]
    for op, fields in (
        ("search", {"query": "postgres OR 数据库", "context": 1, "refresh": False}),
        ("list", {"provider": "codex"}),
        ("show", {"session": CLAUDE_SID[:8]}),
        ("stats", {}),
    ):
        before = server.status()["answered"]
        served = api.call(op, fields, data_dir=ddir)
        assert server.status()["answered"] == before + 1, op
        assert served == api.call(op, fields, data_dir=ddir, use_server=False), op
    for op, fields in (("search", {"query": "("}), ("show", {"session": "nope"})):
        with pytest.raises(api.Refused) as through:
            api.call(op, fields, data_dir=ddir)
        with pytest.raises(Exception) as here:  # noqa: PT011 - whichever VoyagerError the API raises
            api.call(op, fields, data_dir=ddir, use_server=False)
        assert failure(through.value) == failure(here.value), op
