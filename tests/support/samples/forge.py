"""Sample Forge databases (`conversations` with JSON contexts), built by code (agentsview `forge.go`)."""

from __future__ import annotations
import json
import sqlite3
from pathlib import Path
from typing import Any


SCHEMA = """
CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY NOT NULL, title TEXT, workspace_id BIGINT NOT NULL,
  context TEXT, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP, metrics TEXT);
"""


MARKERS = {
    "prompt": ["给 API 加限流 PROMPT_FRG"],
    "thinking": ["THINK_FRG"],
    "call": ["cargo test 限流_frg"],
    "result": ["TOOLOUT_FRG"],
    "reply": ["REPLY_FRG"],
    "meta": ["SYSTEM_FRG"],
}


def text(role: str, content: str, t: str, **extra: Any) -> dict[str, Any]:
    return {"message": {"text": {"role": role, "content": content, "model": "gpt-5.4", "timestamp": t, **extra}}}


def messages(child: str | None = None) -> list[dict[str, Any]]:
    calls = [{"name": "shell", "call_id": "c1", "arguments": {"command": "cargo test 限流_frg"}}]
    if child:
        calls.append(
            {"name": "task", "call_id": "c2", "arguments": {"session_id": child, "task": "写文档 DELEGATE_FRG"}}
        )
    return [
        text(
            "System",
            "SYSTEM_FRG <system_information>\n<current_working_directory>/home/dev/网关</current_working_directory>\n</system_information>",
            "2026-05-02T09:58:15Z",
        ),
        text(
            "User", "给 API 加限流 PROMPT_FRG", "2026-05-02T09:58:16Z", raw_content={"Text": "给 API 加限流 PROMPT_FRG"}
        ),
        text(
            "Assistant",
            "",
            "2026-05-02T09:58:17Z",
            tool_calls=calls,
            reasoning_details=[{"text": "先跑测试 THINK_FRG"}],
        ),
        {
            "message": {
                "tool": {
                    "name": "shell",
                    "call_id": "c1",
                    "output": {"is_error": False, "values": [{"text": "TOOLOUT_FRG "}, {"text": "ok"}]},
                }
            }
        },
        text("Assistant", "限流加好了 REPLY_FRG。日本語: 完了", "2026-05-02T09:58:18Z"),
    ]


def write_db(home: Path, rows: list[tuple[str, str | None, Any]]) -> Path:
    path = home / ".forge" / ".forge.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for cid, title, context in rows:
        body = (
            context
            if context is None or isinstance(context, str)
            else json.dumps({"conversation_id": cid, "messages": context}, ensure_ascii=False)
        )
        conn.execute(
            "INSERT INTO conversations VALUES (?, ?, 1, ?, '2026-05-02 09:58:15.741021507', '2026-05-02 10:00:16.848497543', NULL)",
            (cid, title, body),
        )
    conn.commit()
    conn.close()
    return path
