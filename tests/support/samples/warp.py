"""Sample warp records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

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
