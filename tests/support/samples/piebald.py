"""Sample Piebald databases (chats over parts and content nodes), built by code (agentsview `piebald.go`)."""

from __future__ import annotations
import sqlite3
from pathlib import Path
from typing import Any


SCHEMA = """
CREATE TABLE projects (id INTEGER PRIMARY KEY, directory TEXT, name TEXT);
CREATE TABLE chats (id INTEGER PRIMARY KEY, title TEXT, created_at TEXT, updated_at TEXT, message_count INTEGER,
  current_directory TEXT, worktree_path TEXT, branch_name TEXT, project_id INTEGER, is_deleted INTEGER DEFAULT 0);
CREATE TABLE messages (id INTEGER PRIMARY KEY, parent_chat_id INTEGER, parent_message_id INTEGER, enabled INTEGER,
  role TEXT, model TEXT, created_at TEXT, updated_at TEXT, input_tokens INTEGER, output_tokens INTEGER,
  reasoning_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, status TEXT, finish_reason TEXT, error TEXT);
CREATE TABLE message_parts (id INTEGER PRIMARY KEY, parent_chat_message_id INTEGER, part_type TEXT, part_index INTEGER);
CREATE TABLE message_part_text (message_part_id INTEGER, is_thinking INTEGER);
CREATE TABLE message_content_nodes (id INTEGER PRIMARY KEY, parent_text_part_id INTEGER, node_type TEXT, node_index INTEGER);
CREATE TABLE message_node_text (node_id INTEGER, content TEXT);
CREATE TABLE message_part_tool_call (message_part_id INTEGER, provider_tool_use_id TEXT, tool_name TEXT, tool_input TEXT,
  tool_result TEXT, tool_error TEXT, tool_state TEXT, sub_agent_chat_id INTEGER);
"""


MARKERS = {
    "prompt": ["重写缓存层 PROMPT_PBD"],
    "thinking": ["THINK_PBD"],
    "call": ["pytest 缓存_pbd"],
    "result": ["TOOLOUT_PBD"],
    "reply": ["REPLY_PBD"],
}


class Db:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path)
        self.conn.executescript(SCHEMA)
        self.n = 0

    def chat(self, cid: int, title: str, **extra: Any) -> None:
        cols = {
            "id": cid,
            "title": title,
            "created_at": "2026-08-01T10:00:00Z",
            "updated_at": "2026-08-01T10:05:00Z",
            "message_count": 1,
            **extra,
        }
        self.conn.execute(
            f"INSERT INTO chats ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", tuple(cols.values())
        )

    def message(
        self, mid: int, chat: int, parent: int | None, role: str, *parts: tuple[str, Any], enabled: int = 1
    ) -> None:
        self.conn.execute(
            "INSERT INTO messages (id, parent_chat_id, parent_message_id, enabled, role, model, created_at) VALUES (?, ?, ?, ?, ?, 'claude-opus-4', ?)",
            (mid, chat, parent, enabled, role, f"2026-08-01T10:00:{mid:02d}Z"),
        )
        for index, (kind, value) in enumerate(parts):
            self.n += 1
            part = self.n
            self.conn.execute(
                "INSERT INTO message_parts VALUES (?, ?, ?, ?)",
                (part, mid, "tool_call" if kind == "tool" else "text", index),
            )
            if kind == "tool":
                self.conn.execute("INSERT INTO message_part_tool_call VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (part, *value))
            else:
                self.conn.execute("INSERT INTO message_part_text VALUES (?, ?)", (part, 1 if kind == "thinking" else 0))
                for i, chunk in enumerate(value):  # a text part is stored as chunks
                    self.n += 1
                    self.conn.execute("INSERT INTO message_content_nodes VALUES (?, ?, 'text', ?)", (self.n, part, i))
                    self.conn.execute("INSERT INTO message_node_text VALUES (?, ?)", (self.n, chunk))

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()


def base(db: Db) -> None:
    db.chat(1, "缓存重构", worktree_path="/home/dev/缓存", branch_name="cache")
    db.message(1, 1, None, "user", ("text", ["重写缓存层 ", "PROMPT_PBD"]))
    db.message(
        2,
        1,
        1,
        "assistant",
        ("thinking", ["先看测试 THINK_PBD"]),
        ("tool", ("tu1", "bash", '{"command": "pytest 缓存_pbd"}', "TOOLOUT_PBD 3 passed", None, "completed", None)),
        ("text", ["重写好了 REPLY_PBD。日本語: 完了"]),
    )


def path_of(home: Path) -> Path:
    return home / ".local/share/piebald/app.db"
