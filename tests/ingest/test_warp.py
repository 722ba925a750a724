"""The Warp adapter (documented) against databases built here in the schema peers' parsers and fixtures show.

No real Warp database was seen: the one below has the documented ``ai_queries`` and
``agent_conversations`` tables (and a terminal ``blocks`` table that is never read), with
CJK prompts, an agent step without a query, per-conversation change detection through the
CLI, a broken row, an unknown schema and the places.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.ingest._cli import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.warp import db_paths, probe, query_text

CONV = "c0ffee00-0000-4000-8000-0000000000a1"
CWD = "/home/dev/支付 service"
SCHEMA = """
CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, exchange_id TEXT, conversation_id TEXT, start_ts DATETIME,
                         input TEXT, working_directory TEXT, output_status TEXT, model_id TEXT);
CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY, conversation_id TEXT, conversation_data TEXT,
                                  last_modified_at DATETIME);
CREATE TABLE blocks (id INTEGER PRIMARY KEY, stylized_command BLOB, stylized_output BLOB);
"""


def query(text: str) -> str:
    return json.dumps([{"Query": {"text": text, "context": [{"Directory": {"pwd": CWD}}]}}], ensure_ascii=False)


def write_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    rows = [
        ("e1", CONV, "2026-04-07 08:55:40", query("修复登录错误 PROMPT_WARP"), CWD, "Completed", "auto-genius"),
        ("e2", CONV, "2026-04-07 08:55:45.123456", "[]", CWD, "Completed", "auto-genius"),  # an agent step
        ("e3", CONV, "2026-04-07 08:56:00", query("再运行测试 PROMPT2_WARP 日本語も"), CWD, "Completed", "auto"),
    ]
    conn.executemany(
        "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, "
        "output_status, model_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute(
        "INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at) VALUES (?, ?, ?)",
        (CONV, json.dumps({"conversation_usage_metadata": {}}), "2026-04-07 08:56:10"),
    )
    conn.execute("INSERT INTO blocks (stylized_command) VALUES (?)", (b"echo TERMINAL_WARP",))
    conn.commit()
    conn.close()
    return path


def store(home: Path) -> Path:
    return home / ".local/state/warp-terminal/warp.sqlite"


def test_prompts_are_sessions_of_their_conversation(home: Path, run) -> None:
    write_db(store(home))
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_WARP", "user", "human")["provider"] == "warp"
    assert one(run, "PROMPT2_WARP", "user", "human")
    assert not hits(run, "TERMINAL_WARP"), "terminal history is not an agent session"
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"], row["resume"]) == (f"warp:{CONV}", CWD, "auto", None)


def test_an_unchanged_conversation_is_not_read_again(home: Path, run) -> None:
    path = write_db(store(home))
    scan(run)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO blocks (stylized_command) VALUES (x'00')")  # Warp writes elsewhere in the file
    conn.commit()
    conn.close()
    assert scan(run)["events_added"] == 0
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input) VALUES (?, ?, ?, ?)",
        ("e4", CONV, "2026-04-07 09:00:00", query("第三个问题 PROMPT3_WARP")),
    )
    conn.commit()
    conn.close()
    assert scan(run)["changed"] == 1 and one(run, "PROMPT3_WARP", "user", "human")


def test_a_broken_row_costs_only_itself(home: Path, run) -> None:
    path = write_db(store(home))
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO ai_queries (conversation_id, start_ts, input) VALUES (?, ?, ?)", (CONV, "x", "{broken"))
    conn.commit()
    conn.close()
    out = scan(run)
    assert out["failed"] == 0 and one(run, "PROMPT_WARP", "user", "human")
    assert "input:not-json" in out["stderr"]


def test_an_unknown_schema_is_named(home: Path, run) -> None:
    path = store(home)
    path.parent.mkdir(parents=True)
    sqlite3.connect(path).execute("CREATE TABLE settings (k TEXT)").connection.close()
    assert probe(str(path)) == "unknown-schema"
    assert "not a Warp store" in run("scan", "--json").stderr


def test_query_text_and_places(tmp_path: Path) -> None:
    assert query_text(query("问")) == "问"
    assert query_text("[]") is None and query_text('[{"ActionResult": {}}]') is None and query_text(5) is None
    got = db_paths({"HOME": str(tmp_path)})
    assert got[0] == tmp_path / ".local/state/warp-terminal/warp.sqlite" and len(got) == 3
    assert db_paths({"HOME": "/h", "XDG_STATE_HOME": "/s"})[0] == Path("/s/warp-terminal/warp.sqlite")
    assert db_paths({"HOME": "/h", "VOYAGER_WARP_HOME": "/v"}) == [Path("/v/warp.sqlite")]
