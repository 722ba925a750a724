"""Sample grok records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CWD = "/home/dev/商店"


GROUP = "%2Fhome%2Fdev%2F%E5%95%86%E5%BA%97"


SID = "019f7000-0000-7000-8000-0000000000a1"


def folder(home: Path, sid: str = SID, group: str = GROUP) -> Path:
    return home / ".grok" / "sessions" / group / sid


def summary(path: Path, sid: str = SID, **extra: Any) -> None:
    path.mkdir(parents=True, exist_ok=True)
    doc = {
        "info": {"id": sid, "cwd": CWD},
        "session_summary": "修复支付",
        "generated_title": "支付修复 GROK_TITLE",
        "created_at": "2026-12-01T08:00:00Z",
        "updated_at": "2026-12-01T08:10:00Z",
        "current_model_id": "grok-4.5",
        "chat_format_version": 1,
        "head_branch": "fix/支付",
        **extra,
    }
    (path / "summary.json").write_text(json.dumps(doc, ensure_ascii=False))


def history(prompt: str = "支付接口报错了 GROK_PROMPT") -> list[dict[str, Any]]:
    return [
        {"type": "system", "content": "You are Grok GROK_SYSTEM"},
        {
            "type": "user",
            "content": [{"type": "text", "text": "项目规则 GROK_RULES"}],
            "synthetic_reason": "project_instructions",
        },
        {"type": "user", "content": [{"type": "text", "text": prompt}], "prompt_index": 0},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "先跑测试 GROK_THINK"}]},
        {
            "type": "assistant",
            "content": "テストを実行します",
            "model_id": "grok-4.5",
            "tool_calls": [
                {
                    "id": "call_1",
                    "name": "run_terminal_cmd",
                    "arguments": json.dumps({"command": "pytest -q tests/支付"}, ensure_ascii=True),
                }
            ],
        },
        {"type": "tool_result", "tool_call_id": "call_1", "content": "1 failed 실패 GROK_TOOLOUT"},
        {
            "type": "user",
            "content": [{"type": "text", "text": "顺便看看日志 GROK_INTERJECT"}],
            "synthetic_reason": "interjection",
        },
        {"type": "assistant", "content": "修好了 GROK_REPLY", "model_id": "grok-4.5"},
    ]
