"""Sample goose records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = [
    """CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)""",
    """CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
        user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        extension_data TEXT DEFAULT '{}', accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
        provider_name TEXT, model_config_json TEXT, parent_session_id TEXT)""",
    """CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL,
        role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
        timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT)""",
]


VISIBLE = '{"userVisible":true,"agentVisible":true}'


HIDDEN = '{"userVisible":false,"agentVisible":true}'


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t, "annotations": []}


def sessions_dir(home: Path) -> Path:
    d = home / ".local/share/goose/sessions"
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_db(home: Path, sessions: list[dict[str, Any]], messages: list[tuple]) -> Path:
    db = sessions_dir(home) / "sessions.db"
    conn = sqlite3.connect(db)
    for stmt in SCHEMA:
        conn.execute(stmt)
    conn.execute("INSERT INTO schema_version (version) VALUES (15)")
    for s in sessions:
        cols = ", ".join(s)
        conn.execute(f"INSERT INTO sessions ({cols}) VALUES ({', '.join('?' * len(s))})", tuple(s.values()))
    conn.executemany(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?,?,?,?,?)",
        [
            (sid, role, json.dumps(c, ensure_ascii=False) if not isinstance(c, str) else c, ts, meta)
            for sid, role, c, ts, meta in messages
        ],
    )
    conn.commit()
    conn.close()
    return db


MAIN = {
    "id": "20261102_1",
    "name": "修复部署脚本",
    "description": "",
    "user_set_name": 1,
    "session_type": "user",
    "working_dir": "/home/dev/ops",
    "created_at": "2026-11-02 09:00:00",
    "updated_at": "2026-11-02 09:05:00",
    "accumulated_input_tokens": 5000,
    "accumulated_output_tokens": 700,
    "provider_name": "anthropic",
    "model_config_json": json.dumps({"model_name": "claude-sonnet-4-6"}),
}


SUB = {
    "id": "20261102_2",
    "name": "",
    "description": "Check the nginx config",
    "session_type": "sub_agent",
    "working_dir": "/home/dev/ops",
    "created_at": "2026-11-02 09:02:00",
    "updated_at": "2026-11-02 09:03:00",
    "parent_session_id": "20261102_1",
}


def messages() -> list[tuple]:
    m, s = MAIN["id"], SUB["id"]
    return [
        (m, "user", [text("部署脚本在 staging 上失败了，帮我看看 deploy.sh")], 1_793_000_000, VISIBLE),
        (
            m,
            "assistant",
            [
                {"type": "thinking", "thinking": "先跑一下脚本看 exit code", "signature": "sig"},
                text("我先运行部署脚本。"),
                {
                    "type": "toolRequest",
                    "id": "call_1",
                    "toolCall": {
                        "status": "success",
                        "value": {"name": "developer__shell", "arguments": {"command": "bash deploy.sh --env staging"}},
                    },
                },
            ],
            1_793_000_001,
            VISIBLE,
        ),
        (
            m,
            "user",
            [
                {
                    "type": "toolResponse",
                    "id": "call_1",
                    "toolResult": {
                        "status": "success",
                        "value": {"content": [text("deploy.sh: line 12: 权限不够 DEPLOY_DENIED_13")], "isError": True},
                    },
                }
            ],
            1_793_000_002,
            VISIBLE,
        ),
        (
            m,
            "assistant",
            [
                {
                    "type": "toolRequest",
                    "id": "call_2",
                    "toolCall": {"status": "error", "error": "could not parse tool call BROKEN_CALL"},
                }
            ],
            1_793_000_003,
            VISIBLE,
        ),
        (
            m,
            "user",
            [{"type": "toolResponse", "id": "call_2", "toolResult": {"status": "error", "error": "TOOL_FAILED_Z"}}],
            1_793_000_004,
            VISIBLE,
        ),
        (
            m,
            "assistant",
            [
                {
                    "type": "toolConfirmationRequest",
                    "id": "c",
                    "toolName": "developer__text_editor",
                    "arguments": {},
                    "prompt": "Allow editing deploy.sh? CONFIRM_PROMPT",
                },
                {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Compacting NOTIFY_MSG"},
                {"type": "hologram", "data": "x"},
            ],
            1_793_000_005,
            VISIBLE,
        ),
        (m, "user", [text("Summary of the conversation so far COMPACTED_SUMMARY")], 1_793_000_006, HIDDEN),
        (m, "user", "{this is not json", 1_793_000_007, VISIBLE),
        (m, "assistant", [text("脚本缺少执行权限，已经 chmod +x。")], 1_793_000_008, VISIBLE),
        (s, "user", [text("检查 nginx 配置里的 upstream SUBAGENT_PROMPT")], 1_793_000_100, VISIBLE),
        (s, "assistant", [text("upstream 指向了旧端口 SUBAGENT_REPLY")], 1_793_000_101, VISIBLE),
    ]
