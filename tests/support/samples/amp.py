"""Sample amp records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TID = "T-019ca26f-aaaa-bbbb-cccc-dddddddddddd"


def messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "messageId": 0, "content": [{"type": "text", "text": "迁移数据库 PROMPT_AMP 请运行测试"}]},
        {
            "role": "assistant",
            "messageId": 1,
            "content": [
                {"type": "thinking", "thinking": "先运行测试 THINK_AMP"},
                {"type": "text", "text": "我来运行。"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "pytest -q 测试.py"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "/home/dev/说明.md"}},
            ],
            "state": {"type": "complete", "stopReason": "tool_use"},
            "usage": {
                "model": "claude-sonnet-4",
                "inputTokens": 100,
                "outputTokens": 20,
                "cacheReadInputTokens": 5,
                "timestamp": "2026-01-01T00:00:02Z",
            },
        },
        {
            "role": "user",
            "messageId": 2,
            "content": [
                {
                    "type": "tool_result",
                    "toolUseID": "toolu_1",
                    "run": {"status": "done", "result": {"output": "TOOLOUT_AMP 1 failed", "exitCode": 1}},
                },
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "文件内容 READ_AMP"},
            ],
        },
        {
            "role": "assistant",
            "messageId": 3,
            "content": [{"type": "tool_use", "id": "toolu_3", "name": "edit_file", "input": {"path": "a.py"}}],
            "usage": {
                "model": "claude-sonnet-4",
                "inputTokens": 50,
                "outputTokens": 10,
                "timestamp": "2026-01-01T00:00:04Z",
            },
        },
        {
            "role": "user",
            "messageId": 4,
            "content": [
                {
                    "type": "tool_result",
                    "toolUseID": "toolu_3",
                    "run": {"status": "error", "error": {"message": "EDITFAIL_AMP"}},
                }
            ],
        },
        {
            "role": "assistant",
            "messageId": 5,
            "content": [{"type": "text", "text": "迁移完成 REPLY_AMP。日本語: 完了"}],
            "usage": {
                "model": "claude-sonnet-4",
                "inputTokens": 60,
                "outputTokens": 15,
                "timestamp": "2026-01-01T00:00:06Z",
            },
        },
    ]


def thread(items: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "v": 7,
        "id": TID,
        "created": 1767225600000,
        "title": "迁移数据库 TITLE_AMP",
        "agentMode": "smart",
        "env": {
            "initial": {
                "trees": [{"displayName": "service", "uri": "file:///home/dev/%E6%94%AF%E4%BB%98%20service"}],
                "platform": {"client": "CLI"},
            }
        },
        "messages": items,
        "meta": {"traces": [{"name": "inference", "endTime": "2026-01-01T00:00:07Z"}, {"name": "x"}]},
        **extra,
    }


def write_thread(home: Path, body: Any, tid: str = TID) -> Path:
    path = home / ".local/share/amp/threads" / f"{tid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path
