"""Sample gemini records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import hashlib
from typing import Any

CWD = "/home/dev/数据 proj"


def ts(sec: int) -> str:
    return f"2026-12-01T08:{sec // 60:02d}:{sec % 60:02d}.100Z"


def user(mid: str, text: str, at: int) -> dict[str, Any]:
    return {"id": mid, "timestamp": ts(at), "type": "user", "content": [{"text": text}]}


def response(cid: str, output: str, name: str = "run_shell_command") -> dict[str, Any]:
    return {"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}


def call(cid: str, command: str, output: str, at: int, status: str = "success") -> dict[str, Any]:
    return {
        "id": cid,
        "name": "run_shell_command",
        "args": {"command": command, "description": "run it"},
        "result": [response(cid, output)],
        "status": status,
        "timestamp": ts(at),
        "resultDisplay": output,
        "displayName": "Shell",
    }


def legacy_document() -> dict[str, Any]:
    """``tmp/<sha256(cwd)>/chats/session-*.json`` as Gemini CLI wrote it before the JSONL log."""
    return {
        "sessionId": "1f2e3d4c-aaaa-bbbb-cccc-000000000001",
        "projectHash": hashlib.sha256(CWD.encode()).hexdigest(),
        "startTime": ts(0),
        "lastUpdated": ts(9),
        "messages": [
            {"id": "1", "timestamp": ts(1), "type": "user", "content": "迁移 数据库 LEGACYPROMPT"},
            {
                "id": "2",
                "timestamp": ts(2),
                "type": "gemini",
                "content": "运行测试 LEGACYREPLY",
                "thoughts": [{"subject": "Planning", "description": "run the tests LEGACYTHINK", "timestamp": ts(2)}],
                "toolCalls": [call("c1", "pytest -q", "3 failed LEGACYTOOL", 3, status="error")],
                "model": "gemini-2.5-pro",
            },
            {"id": "3", "timestamp": ts(4), "type": "info", "content": "Request cancelled."},
        ],
    }
