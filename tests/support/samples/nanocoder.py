"""Sample nanocoder records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5f5bc390-8359-47b4-89a6-7322259c8751"


CWD = "/home/dev/支付 service"


def call(cid: str, name: str, args: Any) -> dict[str, Any]:
    return {"id": cid, "function": {"name": name, "arguments": args}}


def messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are Nanocoder SYSTEM_NANO"},
        {"role": "user", "content": "迁移失败 ERR_NANO_7 帮我看看"},
        {
            "role": "assistant",
            "content": "我来看看。",
            "reasoning": "Check the log THINK_NANO",
            "tool_calls": [
                call("call_1", "execute_bash", {"command": "tail -n 5 数据.log"}),
                call("call_2", "read_file", json.dumps({"path": "a.py"})),
            ],
        },
        {
            "role": "tool",
            "content": "EXIT_CODE: 2\nrelation missing\n",
            "tool_call_id": "call_1",
            "name": "execute_bash",
        },
        {"role": "tool", "content": "print('hi')", "tool_call_id": "call_2", "name": "read_file"},
        {"role": "assistant", "content": "数据库迁移完成 REPLY_NANO"},
    ]


def doc(items: list[Any], title: Any = "迁移失败 ERR_NANO_7 帮我...", **extra: Any) -> dict[str, Any]:
    return {
        "id": SID,
        "title": title,
        "createdAt": "2026-12-01T23:18:10.933Z",
        "lastAccessedAt": "2026-12-01T23:18:40.586Z",
        "messageCount": len(items),
        "provider": "mock",
        "model": "mock-model",
        "workingDirectory": CWD,
        "messages": items,
        **extra,
    }


def write_session(root: Path, body: Any, sid: str = SID) -> Path:
    path = root / "sessions" / f"{sid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
