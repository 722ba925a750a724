"""The Piebald adapter (documented) against databases built here in the tables agentsview and splitrail read.

No real Piebald database was captured (a desktop app). A chat's messages form a tree; their text
sits in content nodes below text parts, and a tool call part holds the call and its result.
Checked: the contract (kinds, one prompt, paired tool call, files untouched, an unchanged rescan),
thinking parts, the cwd from the worktree, a regenerated turn whose both branches are kept, a
subagent's chat under the chat that started it, a deleted chat left out, a new message read while
other chats stay, and the places.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.ingest._cli import hits, one, scan, sessions
from tests.ingest._documented import check_sample
from voyager_sessions.ingest.adapters.piebald import db_paths, probe

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


def test_a_chat_holds_to_the_contract(home: Path, run) -> None:
    db = Db(path_of(home))
    base(db)
    db.chat(9, "deleted", is_deleted=1)
    db.message(90, 9, None, "user", ("text", ["DELETED_PBD"]))
    db.close()
    assert check_sample(run, home, "piebald", {**MARKERS, "absent": ["DELETED_PBD"]})["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["git_branch"], row["model"]) == (
        "piebald:1",
        "缓存重构",
        "/home/dev/缓存",
        "cache",
        "claude-opus-4",
    )
    assert probe(str(path_of(home))) == "chats+messages"


def test_both_branches_of_a_regenerated_turn_and_a_subagents_chat(home: Path, run) -> None:
    db = Db(path_of(home))
    base(db)
    db.message(3, 1, 1, "assistant", ("text", ["第一版回答 BRANCH1_PBD"]), enabled=0)
    db.chat(2, "子任务")
    db.message(
        4, 1, 2, "assistant", ("tool", ("tu2", "agent", '{"prompt": "查依赖"}', "依赖没问题", None, "completed", 2))
    )
    db.message(20, 2, None, "user", ("text", ["查依赖 DELEGATE_PBD"]))
    db.close()
    scan(run)
    assert one(run, "BRANCH1_PBD", "assistant", "agent") and one(run, "REPLY_PBD", "assistant", "agent")
    child = sessions(run)[one(run, "DELEGATE_PBD", "user", "provider")["session_id"]]
    assert child["parent"] == "piebald:1"


def test_a_new_message_is_read_and_other_chats_stay(home: Path, run) -> None:
    path = path_of(home)
    db = Db(path)
    base(db)
    db.chat(3, "other")
    db.message(30, 3, None, "user", ("text", ["别的 PROMPT_OTHER_PBD"]))
    db.close()
    scan(run)
    db = Db.__new__(Db)
    db.conn, db.n = sqlite3.connect(path), 1000
    db.message(5, 1, 2, "user", ("text", ["再加监控 PROMPT2_PBD"]))
    db.close()
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 0, out
    assert one(run, "PROMPT2_PBD", "user", "human") and hits(run, "PROMPT_OTHER_PBD")


def test_places(tmp_path: Path) -> None:
    if sys.platform.startswith("linux"):
        assert db_paths({"HOME": str(tmp_path)}) == [tmp_path / ".local/share/piebald/app.db"]
        assert db_paths({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == [Path("/x/piebald/app.db")]
    assert db_paths({"HOME": "/h", "VOYAGER_PIEBALD_HOME": "/v"}) == [Path("/v/app.db")]
