"""Sample Cortex Code conversations and companion histories, built by code (agentsview `cortex.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


SID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"


MARKERS = {
    "prompt": ["统计上月订单 PROMPT_CTX"],
    "call": ["SELECT count(*) FROM 订单_ctx"],
    "result": ["TOOLOUT_CTX"],
    "reply": ["REPLY_CTX"],
    "meta": ["INJECTED_CTX", "REMINDER_CTX"],
}


def history() -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "id": "m0",
            "user_sent_time": "2026-06-01T09:00:00Z",
            "content": [
                {"type": "text", "text": "Environment: INJECTED_CTX", "internalOnly": True},
                {"type": "text", "text": "<system-reminder>REMINDER_CTX</system-reminder>"},
                {"type": "text", "text": "统计上月订单 PROMPT_CTX"},
            ],
        },
        {
            "role": "assistant",
            "id": "m1",
            "content": [
                {"type": "text", "text": "我来查询。"},
                {
                    "type": "tool_use",
                    "tool_use": {
                        "tool_use_id": "tu1",
                        "name": "snowflake_sql_execute",
                        "input": {"query": "SELECT count(*) FROM 订单_ctx"},
                    },
                },
            ],
        },
        {
            "role": "user",
            "id": "m2",
            "content": [
                {
                    "type": "tool_result",
                    "tool_result": {
                        "tool_use_id": "tu1",
                        "name": "snowflake_sql_execute",
                        "status": "success",
                        "content": [{"type": "text", "text": "TOOLOUT_CTX 4211"}],
                    },
                }
            ],
        },
        {
            "role": "assistant",
            "id": "m3",
            "content": [{"type": "text", "text": "上月共 4211 单 REPLY_CTX。한국어: 완료"}],
        },
    ]


def doc(hist: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "title": "订单统计",
        "working_directory": "/home/dev/分析",
        "git_branch": "main",
        "created_at": "2026-06-01T09:00:00Z",
        "last_updated": "2026-06-01T09:01:00Z",
        "history": history() if hist is None else hist,
        **extra,
    }


def folder(home: Path) -> Path:
    d = home / ".snowflake/cortex/conversations"
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_companion(path: Path, lines: list[Any], tail: bytes = b"") -> None:
    path.write_bytes(
        b"".join(x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
        + tail
    )
