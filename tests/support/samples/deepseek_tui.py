"""Sample DeepSeek TUI / CodeWhale session documents, built by code (agentsview `deepseek_tui.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


SID = "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


MARKERS = {
    "prompt": ["查一下内存泄漏 PROMPT_DST"],
    "thinking": ["THINK_DST"],
    "call": ["valgrind ./服务_dst"],
    "result": ["TOOLOUT_DST"],
    "reply": ["REPLY_DST"],
}


def messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are DeepSeek TUI SYSTEM_DST"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "查一下内存泄漏 PROMPT_DST"}],
            "timestamp": "2026-05-01T10:00:00Z",
        },
        {
            "role": "assistant",
            "model": "deepseek-v4",
            "timestamp": "2026-05-01T10:00:02Z",
            "content": [
                {"type": "thinking", "thinking": "先跑 valgrind THINK_DST"},
                {"type": "tool_use", "id": "tu1", "name": "bash", "input": {"command": "valgrind ./服务_dst"}},
            ],
        },
        {
            "role": "user",
            "timestamp": "2026-05-01T10:00:05Z",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "content": [{"type": "text", "text": "TOOLOUT_DST 3 leaks"}],
                }
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "找到三处泄漏 REPLY_DST。日本語: 完了"}],
            "timestamp": "2026-05-01T10:00:09Z",
        },
    ]


def doc(msgs: list[Any] | None = None) -> dict[str, Any]:
    meta = {
        "id": SID,
        "title": "内存泄漏",
        "created_at": "2026-05-01T10:00:00Z",
        "updated_at": "2026-05-01T10:00:09Z",
        "model": "deepseek-v4",
        "workspace": "/home/dev/服务",
    }
    return {"metadata": meta, "messages": messages() if msgs is None else msgs}


def write(home: Path, body: Any, root: str = ".codewhale", name: str = f"{SID}.json") -> Path:
    path = home / root / "sessions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
    return path
