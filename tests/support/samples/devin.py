"""Sample devin records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SID = "calm-river-数据"


CWD = "/home/dev/支付 service"


SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, working_directory TEXT, model TEXT, last_activity_at INTEGER, title TEXT,
                       main_chain_id INTEGER, hidden INTEGER DEFAULT 0);
CREATE TABLE message_nodes (session_id TEXT, node_id INTEGER, parent_node_id INTEGER, chat_message TEXT);
"""


def msg(role: str, content: Any, at: str, **extra: Any) -> dict[str, Any]:
    meta = {"created_at": at, **extra.pop("metadata", {})}
    return {"role": role, "content": content, "metadata": meta, **extra}


def nodes() -> list[tuple[int, int | None, dict[str, Any]]]:
    call = {"id": "call_1", "name": "exec", "index": 0, "arguments": {"command": "grep 错误 日志.log"}}
    return [
        (0, None, msg("system", "You are Devin SYSTEM_DEVIN", "2026-09-08T22:07:00Z")),
        (
            1,
            0,
            msg("user", "帮我查找日志里的错误 PROMPT_DEVIN", "2026-09-08T22:07:03Z", metadata={"is_user_input": True}),
        ),
        (2, 1, msg("assistant", "", "2026-09-08T22:07:07Z", tool_calls=[call], metadata={"request_id": "r1"})),
        (
            3,
            2,
            msg(
                "tool",
                "Output from command in shell 59f39e:\nTOOLOUT_DEVIN 错误 x3\n\nExit code: 1",
                "2026-09-08T22:07:07.3Z",
                tool_call_id="call_1",
            ),
        ),
        (4, 3, msg("assistant", "找到三个错误 REPLY_DEVIN。日本語: 完了", "2026-09-08T22:07:09Z")),
        (5, 4, msg("user", "Continue THREADED_DEVIN", "2026-09-08T22:07:10Z", metadata={"is_user_input": False})),
        (6, 5, msg("assistant", "好的 FINAL_DEVIN", "2026-09-08T22:07:12Z")),
        (9, 1, msg("assistant", "stale branch STALE_DEVIN", "2026-09-08T22:07:06Z")),  # left behind by an edit
    ]


def write_db(path: Path, *, cwd: str = CWD, leaf: int | None = 6, rows: list[Any] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute(
        "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, 0)",
        (SID, cwd, "gemini-3-8-flash-low", 1788905232, "查找错误", leaf),
    )
    for nid, parent, body in rows if rows is not None else nodes():
        conn.execute(
            "INSERT INTO message_nodes VALUES (?, ?, ?, ?)",
            (SID, nid, parent, body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)),
        )
    conn.commit()
    conn.close()
    return path
