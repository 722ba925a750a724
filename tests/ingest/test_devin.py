"""The Devin CLI adapter (documented) against databases built here in the schema peers' readers and test data show.

No real Devin CLI store was seen: the databases below follow the documented
``sessions`` + ``message_nodes`` schema, with CJK text, a shell call whose result states
its exit code, an abandoned branch the main chain leaves behind, text the CLI threads back
as a user message (not a prompt), per-session change detection through the CLI, a broken
row, an unknown schema, the places and the quoted resume command.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path

import pytest

from tests.support.samples.devin import CWD, SID, msg, nodes, write_db
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.devin import ADAPTER, chain, db_paths, exit_of, probe, resume_command


@pytest.fixture
def store(home: Path) -> Path:
    return write_db(home / ".local/share/devin/cli/sessions.db")


def test_the_main_chain_is_indexed_with_its_kinds(store: Path, run) -> None:
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_DEVIN", "user", "human")["provider"] == "devin"
    assert one(run, "REPLY_DEVIN", "assistant", "agent")
    assert one(run, "grep 错误 日志.log", "tool_call", "agent")
    assert one(run, "TOOLOUT_DEVIN", "tool_result", "tool")
    assert one(run, "SYSTEM_DEVIN", "meta", "provider")
    assert one(run, "THREADED_DEVIN", "meta", "provider"), "text the CLI threads back is no prompt"
    assert not hits(run, "STALE_DEVIN"), "an abandoned branch is not the conversation"
    (row,) = sessions(run).values()
    assert row["title"] == "查找错误" and row["cwd"] == CWD
    assert row["resume"] == resume_command(CWD, SID)


def test_exit_codes_and_the_chain() -> None:
    assert exit_of("out\n\nExit code: 0") == 0 and exit_of("x\nexit code: -1\n") == -1 and exit_of("none") is None
    tree = {0: (None, ""), 1: (0, ""), 2: (1, ""), 9: (1, "")}
    assert chain(tree, 2) == [0, 1, 2]
    assert chain(tree, None) == [0, 1, 9], "no leaf named: the newest node"
    assert chain({0: (1, ""), 1: (0, "")}, 1) == [0, 1], "a loop in corrupt parent links ends"
    assert chain({0: (None, ""), 1: (0, ""), 3: (2, "")}, 3) == [0, 1, 3], "a lost node costs only itself"


def test_a_failing_command_keeps_its_exit_code(store: Path) -> None:
    from voyager_sessions.ingest.adapters.base import Source, fingerprint

    items = list(ADAPTER.read(Source(provider="devin", path=str(store), fingerprint=fingerprint(store, wal=True))))
    (result,) = [i for i in items if getattr(i, "kind", None) == "tool_result"]
    assert (result.exit_code, result.is_error, result.call_id) == (1, True, "call_1")


def test_an_unchanged_session_is_not_read_again_and_a_new_turn_is(store: Path, run) -> None:
    scan(run)
    again = scan(run)
    assert again["new"] == 0 and again["changed"] == 0
    conn = sqlite3.connect(store)
    conn.execute(
        "INSERT INTO message_nodes VALUES (?, 7, 6, ?)",
        (SID, json.dumps(msg("user", "第二轮 PROMPT2_DEVIN", "2026-09-08T23:00:00Z"), ensure_ascii=False)),
    )
    conn.execute("UPDATE sessions SET main_chain_id = 7")
    conn.commit()
    conn.close()
    assert scan(run)["changed"] == 1
    assert one(run, "PROMPT2_DEVIN", "user", "human")


def test_a_broken_row_costs_only_itself(home: Path, run) -> None:
    rows = nodes()
    rows[5] = (5, 4, "{not json")
    write_db(home / ".local/share/devin/cli/sessions.db", rows=rows)
    out = scan(run)
    assert out["failed"] == 0
    assert one(run, "FINAL_DEVIN", "assistant", "agent")
    assert "message:not-json" in out["stderr"]


def test_an_unknown_schema_is_named_not_empty(home: Path, run) -> None:
    path = home / ".local/share/devin/cli/sessions.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE chats (id TEXT)")
    conn.close()
    assert probe(str(path)) == "unknown-schema"
    res = run("scan", "--json")
    assert "not a Devin CLI store" in res.stderr


def test_places_and_precedence(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert db_paths({"HOME": home}) == [
        tmp_path / ".local/share/devin/cli/sessions.db",
        tmp_path / "Library/Application Support/devin/cli/sessions.db",
    ]
    assert db_paths({"HOME": home, "XDG_DATA_HOME": "/x"})[0] == Path("/x/devin/cli/sessions.db")
    assert db_paths({"HOME": home, "VOYAGER_DEVIN_HOME": "/v"}) == [Path("/v/cli/sessions.db")]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    assert shlex.split(resume_command(evil, evil)) == ["cd", evil, "&&", "devin", "-r", evil]
