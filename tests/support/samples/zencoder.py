"""Sample zencoder records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "0b3c4d5e-0000-4000-8000-00000000000c"


CWD = "/home/dev/支付 service"


def lines(parent: str | None = None) -> list[Any]:
    return [
        {
            "id": SID,
            "parentId": parent,
            "creationReason": "summarizedContinuation" if parent else "newChat",
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:09Z",
        },
        {
            "role": "system",
            "content": f"Environment BANNER_ZEN\nWorking directory: {CWD}\nPlatform: linux",
            "createdAt": "2026-01-01T00:00:00Z",
        },
        {
            "role": "user",
            "createdAt": "2026-01-01T00:00:01Z",
            "content": [
                {"type": "text", "text": "修复登录错误 PROMPT_ZEN", "tag": "user-input"},
                {"type": "text", "text": "Remember the rules REMINDER_ZEN", "tag": "system-reminder"},
                {"type": "skill", "name": "tests", "content": "Run the tests SKILL_ZEN"},
            ],
        },
        {
            "role": "assistant",
            "createdAt": "2026-01-01T00:00:02Z",
            "content": [
                {"type": "reasoning", "text": "先运行测试 THINK_ZEN"},
                {"type": "text", "text": "我来运行。"},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "execute_shell_command",
                    "input": {"command": "pytest 测试.py"},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "c2",
                    "toolName": "subagent",
                    "input": {"task": "检查 SUBTASK_ZEN"},
                },
            ],
        },
        {
            "role": "tool",
            "createdAt": "2026-01-01T00:00:03Z",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "content": [
                        {"type": "shell-result", "text": "TOOLOUT_ZEN 1 failed"},
                        {"type": "text", "text": "Note TAGGED_ZEN", "tag": "todo-reminder"},
                    ],
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "content": [{"type": "text", "text": "done <session-id>sub-1</session-id> SUBRESULT_ZEN"}],
                },
            ],
        },
        {
            "role": "assistant",
            "createdAt": "2026-01-01T00:00:05Z",
            "content": [{"type": "text", "text": "修好了 REPLY_ZEN。日本語: 完了"}],
        },
        {"role": "finish", "reason": "stop", "createdAt": "2026-01-01T00:00:06Z"},
        {"role": "permission", "createdAt": "2026-01-01T00:00:06Z"},
    ]


def write(home: Path, items: list[Any], sid: str = SID) -> Path:
    folder = home / ".zencoder/sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path
