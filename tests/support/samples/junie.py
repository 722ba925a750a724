"""Sample junie records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "session-260206-154351-1p1g"


def events() -> list[Any]:
    a2ux = lambda agent: {"kind": "SessionA2uxEvent", "event": {"state": "IN_PROGRESS", "agentEvent": agent}}  # noqa: E731
    return [
        {"kind": "UserPromptEvent", "prompt": "修复登录错误 PROMPT_JUN 日本語も"},
        {"kind": "SendToAgentEvent"},
        a2ux({"kind": "AgentCurrentStatusUpdatedEvent", "status": "Sending LLM request STATUS_JUN"}),
        a2ux(
            {
                "kind": "LlmResponseMetadataEvent",
                "modelUsage": [
                    {
                        "model": "claude-haiku-4-5-20251001",
                        "cost": 0.002,
                        "inputTokens": 2126,
                        "cacheInputTokens": 0,
                        "cacheCreateTokens": 0,
                        "outputTokens": 147,
                        "time": 0,
                    }
                ],
            }
        ),
        a2ux({"kind": "TerminalBlockUpdatedEvent", "block": {"output": "BLOCK_JUN"}}),
        a2ux({"kind": "ResultBlockUpdatedEvent"}),
        {"kind": "TaskState", "state": "COMPLETED"},
    ]


def write(home: Path, items: list[Any], title: str = "登录修复 TITLE_JUN") -> Path:
    root = home / ".junie/sessions"
    folder = root / SID
    folder.mkdir(parents=True, exist_ok=True)
    (root / "index.jsonl").write_text(
        json.dumps(
            {
                "sessionId": SID,
                "createdAt": 1770389031770,
                "updatedAt": 1770389123237,
                "taskName": title,
                "status": None,
            },
            ensure_ascii=False,
        )
        + "\n{broken\n",
        encoding="utf-8",
    )
    path = folder / "events.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path
