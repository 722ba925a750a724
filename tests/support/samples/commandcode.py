"""Sample commandcode records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "sess_0a1b2c3d"


CWD = "/home/dev/支付 service"


def lines() -> list[Any]:
    base = {"sessionId": SID, "gitBranch": "main", "metadata": {"cwd": CWD}}
    return [
        {**base, "role": "user", "content": "修复登录错误 PROMPT_CMD", "timestamp": "2026-01-01T00:00:00Z"},
        {
            **base,
            "role": "assistant",
            "timestamp": "2026-01-01T00:00:02Z",
            "content": [
                {"type": "reasoning", "text": "先运行测试 THINK_CMD"},
                {"type": "text", "text": "我来运行。"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "pytest 测试.py"}},
            ],
        },
        {
            **base,
            "role": "tool",
            "timestamp": "2026-01-01T00:00:03Z",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "bash",
                    "output": {"type": "text", "value": "TOOLOUT_CMD 1 failed"},
                }
            ],
        },
        {
            **base,
            "role": "user",
            "timestamp": "2026-01-01T00:00:04Z",
            "content": [{"type": "tool_result", "tool_use_id": "c0", "content": "旧结果 OLDRESULT_CMD"}],
        },
        {
            **base,
            "role": "assistant",
            "timestamp": "2026-01-01T00:00:05Z",
            "content": [{"type": "text", "text": "修好了 REPLY_CMD。日本語: 完了"}],
        },
    ]


def write(home: Path, items: list[Any], meta: dict[str, Any] | None = None, project: str = "home-dev-proj") -> Path:
    folder = home / ".commandcode/projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    if meta is not None:
        (folder / f"{SID}.meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    (folder / f"{SID}.checkpoints.jsonl").write_text('{"role": "user", "content": "CHECKPOINT_CMD"}\n')
    (folder / f"{SID}.prompts.jsonl").write_text('{"role": "user", "content": "PROMPTLOG_CMD"}\n')
    return path
