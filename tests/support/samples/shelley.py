"""Sample Shelley databases (Go-serialized messages, integer content types), built by code (agentsview `shelley.go`)."""

from __future__ import annotations
import json
import sqlite3
from pathlib import Path
from typing import Any


SCHEMA = """
CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY, slug TEXT, user_initiated BOOLEAN NOT NULL DEFAULT TRUE,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  cwd TEXT, archived BOOLEAN NOT NULL DEFAULT FALSE, parent_conversation_id TEXT, model TEXT,
  current_generation INTEGER NOT NULL DEFAULT 1, is_draft BOOLEAN NOT NULL DEFAULT FALSE);
CREATE TABLE messages (message_id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, sequence_id INTEGER NOT NULL,
  type TEXT NOT NULL, llm_data TEXT, user_data TEXT, usage_data TEXT, display_data TEXT,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, generation INTEGER NOT NULL DEFAULT 1,
  excluded_from_context BOOLEAN NOT NULL DEFAULT FALSE);
"""


MARKERS = {
    "prompt": ["部署到预发 PROMPT_SHL"],
    "thinking": ["THINK_SHL"],
    "call": ["kubectl apply 预发_shl"],
    "result": ["TOOLOUT_SHL"],
    "reply": ["REPLY_SHL"],
}


def llm(role: int, *contents: dict[str, Any]) -> str:
    return json.dumps({"Role": role, "Content": list(contents)}, ensure_ascii=False)


def main_messages() -> list[tuple[str, str | None, str | None, str | None]]:
    usage = json.dumps(
        {"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 15, "model": "claude-sonnet-4-5"}
    )
    return [
        ("user", llm(0, {"Type": 2, "Text": "部署到预发 PROMPT_SHL"}), None, None),
        (
            "agent",
            llm(
                1,
                {"Type": 3, "Thinking": "先检查 THINK_SHL"},
                {"Type": 5, "ID": "tu1", "ToolName": "bash", "ToolInput": {"command": "kubectl apply 预发_shl"}},
            ),
            None,
            usage,
        ),
        (
            "tool",
            llm(0, {"Type": 6, "ToolUseID": "tu1", "ToolResult": [{"Type": 2, "Text": "TOOLOUT_SHL configured"}]}),
            None,
            None,
        ),
        ("agent", llm(1, {"Type": 2, "Text": "部署好了 REPLY_SHL。日本語: 完了"}), None, usage),
    ]


def write_db(home: Path, convs: list[tuple[str, str | None, int, str | None]], msgs: dict[str, list[Any]]) -> Path:
    path = home / ".config/shelley/shelley.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for cid, slug, user_initiated, parent in convs:
        conn.execute(
            "INSERT INTO conversations (conversation_id, slug, user_initiated, created_at, updated_at, cwd, parent_conversation_id, model) "
            "VALUES (?, ?, ?, '2026-04-01 10:00:00', '2026-04-01 10:05:00', '/home/dev/部署', ?, 'claude-sonnet-4-5')",
            (cid, slug, user_initiated, parent),
        )
        for seq, (mtype, data, user_data, usage) in enumerate(msgs.get(cid, [])):
            conn.execute(
                "INSERT INTO messages (message_id, conversation_id, sequence_id, type, llm_data, user_data, usage_data, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, '2026-04-01 10:00:0' || ?)",
                (f"{cid}-{seq}", cid, seq, mtype, data, user_data, usage, seq),
            )
    conn.commit()
    conn.close()
    return path
