"""Sample crush records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

# Crush's migrations, folded (initial + summary_message_id + provider + is_summary_message).
SCHEMA = [
    """CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
        updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT)""",
    """CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
        parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL)""",
]


def part(ptype: str, **data: Any) -> dict[str, Any]:
    return {"type": ptype, "data": data}


def write_db(data_dir: Path, sessions: list[tuple], messages: list[tuple]) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "crush.db"
    conn = sqlite3.connect(db)
    for stmt in SCHEMA:
        conn.execute(stmt)
    conn.executemany(
        "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens, "
        "updated_at, created_at) VALUES (?,?,?,?,?,?,?)",
        sessions,
    )
    conn.executemany(
        "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, "
        "is_summary_message) VALUES (?,?,?,?,?,?,?,?)",
        [
            (i, s, r, p if isinstance(p, str) else json.dumps(p, ensure_ascii=False), "claude-sonnet-4", t, t, summary)
            for i, s, r, p, t, summary in messages
        ],
    )
    conn.commit()
    conn.close()
    return db


def write_projects(global_dir: Path, entries: list[dict[str, Any]]) -> None:
    global_dir.mkdir(parents=True, exist_ok=True)
    (global_dir / "projects.json").write_text(json.dumps({"projects": entries}, ensure_ascii=False, indent=2))


def project_store(home: Path, project: Path) -> Path:
    sessions = [
        ("s-main", None, "修复构建", 1200, 300, 1_793_000_050, 1_793_000_000),
        ("s-task", "s-main", "Task: find the flaky test", 0, 0, 1_793_000_030, 1_793_000_020),
        ("title-s-main", "s-main", "Generate a title", 0, 0, 1_793_000_001, 1_793_000_001),
    ]
    messages = [
        (
            "m1",
            "s-main",
            "user",
            [part("text", text="构建失败了，跑一下 go build 看看 BUILD_PROMPT")],
            1_793_000_000,
            0,
        ),
        (
            "m2",
            "s-main",
            "assistant",
            [
                part("reasoning", thinking="先看编译错误 THINKING_MARK"),
                part("text", text="我来运行构建。"),
                part(
                    "tool_call",
                    id="call-1",
                    name="bash",
                    input=json.dumps({"command": "go build ./..."}),
                    finished=True,
                ),
                part("finish", reason="tool_use", time=1_793_000_002),
            ],
            1_793_000_001,
            0,
        ),
        (
            "m3",
            "s-main",
            "tool",
            [
                part(
                    "tool_result",
                    tool_call_id="call-1",
                    name="bash",
                    content="./main.go:12: undefined: 配置 BUILD_ERR_12",
                    is_error=True,
                )
            ],
            1_793_000_003,
            0,
        ),
        (
            "m4",
            "s-main",
            "user",
            [part("shell_command", command="go vet ./... HUMAN_SHELL", output="vet: ok", exit_code=2)],
            1_793_000_004,
            0,
        ),
        ("m5", "s-main", "assistant", "{not json", 1_793_000_005, 0),
        (
            "m6",
            "s-main",
            "assistant",
            [part("text", text="Summary of the work so far COMPACTION_SUMMARY")],
            1_793_000_006,
            1,
        ),
        (
            "m7",
            "s-main",
            "assistant",
            [
                part("hologram", x=1),
                part("text", text="改好了，变量名拼错了。"),
                part("finish", reason="end_turn", time=1_793_000_008),
            ],
            1_793_000_007,
            0,
        ),
        (
            "m8",
            "s-main",
            "assistant",
            [part("finish", reason="error", message="Bad Request", details="context window exceeded PROVIDER_ERROR")],
            1_793_000_009,
            0,
        ),
        ("t1", "s-task", "user", [part("text", text="找出不稳定的测试 SUBTASK_PROMPT")], 1_793_000_020, 0),
        ("t2", "s-task", "assistant", [part("text", text="TestRetry 不稳定 SUBTASK_REPLY")], 1_793_000_021, 0),
        (
            "x1",
            "title-s-main",
            "user",
            [part("text", text="Generate a title for: 构建失败了 TITLE_CALL_COPY")],
            1_793_000_001,
            0,
        ),
    ]
    return write_db(project / ".crush", sessions, messages)
