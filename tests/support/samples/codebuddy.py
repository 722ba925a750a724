"""Sample codebuddy records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "d7e8f9a0-0000-4000-8000-00000000000d"


CWD = "/home/dev/支付 service"


def line(kind: str, t: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"{kind}-{t}", "timestamp": t, "type": kind, "sessionId": SID, "cwd": CWD, **extra}


def lines() -> list[Any]:
    return [
        line("message", "2026-01-01T00:00:00Z", role="user", content=[{"type": "input_text", "text": "Warmup"}]),
        line(
            "message",
            "2026-01-01T00:00:01Z",
            role="user",
            content=[{"type": "input_text", "text": "修复登录错误 PROMPT_CBD"}],
        ),
        line(
            "reasoning", "2026-01-01T00:00:02Z", rawContent=[{"type": "reasoning_text", "text": "先运行测试 THINK_CBD"}]
        ),
        line(
            "message",
            "2026-01-01T00:00:02Z",
            role="assistant",
            providerData={"model": "hunyuan-2"},
            content=[{"type": "output_text", "text": "我来运行。"}],
        ),
        line(
            "function_call",
            "2026-01-01T00:00:03Z",
            callId="c1",
            name="Bash",
            arguments=json.dumps({"command": "pytest 测试.py"}, ensure_ascii=False),
        ),
        line(
            "function_call_result",
            "2026-01-01T00:00:04Z",
            callId="c1",
            name="Bash",
            status="failed",
            output={"type": "text", "text": "TOOLOUT_CBD 1 failed"},
        ),
        line("message", "2026-01-01T00:00:05Z", role="user", content="<system-reminder>INJECTED_CBD</system-reminder>"),
        line(
            "message",
            "2026-01-01T00:00:06Z",
            role="assistant",
            content=[{"type": "output_text", "text": "修好了 REPLY_CBD。日本語: 完了"}],
        ),
        line("topic", "2026-01-01T00:00:07Z", topic="登录修复 TITLE_CBD"),
        line("file-history-snapshot", "2026-01-01T00:00:07Z"),
    ]


def write(home: Path, items: list[Any], name: str = f"{SID}.jsonl") -> Path:
    folder = home / ".codebuddy/projects/home-dev-proj"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path
