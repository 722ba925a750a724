"""Sample kiro records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.support.items import write

SID = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"


CWD = "/home/dev/商店"


T0 = 1796112000


def b64(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode().rstrip("=")


def cli_lines(t: int = T0) -> list[dict[str, Any]]:
    """A kiro-cli JSONL session: a prompt, a shell call, its failed result, the reply."""
    return [
        {
            "kind": "Prompt",
            "data": {
                "content": [{"kind": "text", "data": "请检查数据库迁移 MIGRATE_KIRO_PROMPT"}],
                "meta": {"timestamp": t},
            },
        },
        {
            "kind": "AssistantMessage",
            "data": {
                "content": [
                    {"kind": "text", "data": "マイグレーションを確認します"},
                    {
                        "kind": "toolUse",
                        "data": {
                            "toolUseId": "tooluse_1",
                            "name": "execute_bash",
                            "input": {"command": "alembic upgrade head", "summary": "迁移"},
                        },
                    },
                ],
                "meta": {"timestamp": t + 2},
            },
        },
        {
            "kind": "ToolResults",
            "data": {
                "content": [
                    {
                        "kind": "toolResult",
                        "data": {
                            "toolUseId": "tooluse_1",
                            "status": "Error",
                            "content": [
                                {
                                    "kind": "json",
                                    "data": {"exit_status": "1", "stdout": "", "stderr": "relation 없음 KIRO_TOOLOUT"},
                                }
                            ],
                        },
                    }
                ],
                "meta": {"timestamp": t + 3},
            },
        },
        {
            "kind": "AssistantMessage",
            "data": {"content": [{"kind": "text", "data": "迁移失败了 KIRO_REPLY_中文"}], "meta": {"timestamp": t + 5}},
        },
    ]


def write_cli(
    home: Path, sid: str = SID, *, meta: dict[str, Any] | None = None, lines: list[Any] | None = None
) -> Path:
    folder = home / ".kiro" / "sessions" / "cli"
    path = write(folder / f"{sid}.jsonl", cli_lines() if lines is None else lines)
    (folder / f"{sid}.json").write_text(
        json.dumps(
            meta
            if meta is not None
            else {"session_id": sid, "cwd": CWD, "title": sid, "created_at": "2026-12-01T08:00:00Z"},
            ensure_ascii=False,
        )
    )
    return path


def write_ide(user: Path, *, sid: str = "ide-1", cwd: str = CWD) -> Path:
    folder = user / "globalStorage" / "kiro.kiroagent" / "workspace-sessions" / b64(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sessions.json").write_text(
        json.dumps(
            [{"sessionId": sid, "title": "修复登录", "dateCreated": "1796112000000", "workspaceDirectory": cwd}],
            ensure_ascii=False,
        )
    )
    doc = {
        "sessionId": sid,
        "workspaceDirectory": cwd,
        "history": [
            {"message": {"role": "user", "content": "# Conversation Summary\n之前的对话 SUMMARY_KIRO", "id": "m0"}},
            {"message": {"role": "user", "content": "<identity>You are Kiro INJECTED_KIRO</identity>", "id": "m1"}},
            {
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "<kiro-ide-message>修复登录 bug IDE_PROMPT</kiro-ide-message>"}
                    ],
                    "id": "m2",
                }
            },
            {
                "message": {"role": "assistant", "content": "", "id": "m3"},
                "promptLogs": [{"completion": "ログインを直しました IDE_REPLY"}],
                "executionId": "e1",
            },
            {"message": {"role": "tool", "content": "ok 200 IDE_TOOLOUT", "id": "m4"}},
        ],
    }
    path = folder / f"{sid}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return path
