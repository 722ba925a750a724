"""The Warp adapter (documented) against databases built here in the schema peers' parsers and fixtures show.

No real Warp database was seen: the one below has the documented ``ai_queries`` and
``agent_conversations`` tables (and a terminal ``blocks`` table that is never read), with
CJK prompts, an agent step without a query, per-conversation change detection through the
CLI, a broken row, an unknown schema and the places.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.samples.warp import CONV, CWD, query, store, write_db
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.warp import db_paths, probe, query_text


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
