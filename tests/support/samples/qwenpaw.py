"""Sample QwenPaw / CoPaw session files of both generations, built by code (agentsview `qwenpaw.go`; package code 2.2.2.post1)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


MARKERS = {
    "prompt": ["提醒我明天开会 PROMPT_QPW"],
    "thinking": ["THINK_QPW"],
    "call": ["calendar add 开会_qpw"],
    "result": ["TOOLOUT_QPW"],
    "reply": ["REPLY_QPW"],
    "meta": ["CONTEXT_QPW"],
}


def messages(prompt: str = "提醒我明天开会 PROMPT_QPW") -> list[dict[str, Any]]:
    return [
        {
            "id": "m1",
            "name": "user",
            "role": "user",
            "content": [{"type": "text", "text": prompt}],
            "timestamp": "2026-10-01 09:00:00.000",
        },
        {
            "id": "m2",
            "name": "Friday",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "用日历工具 THINK_QPW"},
                {
                    "type": "tool_use",
                    "id": "tu1",
                    "name": "execute_shell_command",
                    "input": {"command": "calendar add 开会_qpw"},
                },
            ],
            "timestamp": "2026-10-01 09:00:02.000",
        },
        {
            "id": "m3",
            "name": "system",
            "role": "system",
            "content": [
                {
                    "type": "tool_result",
                    "id": "tu1",
                    "name": "execute_shell_command",
                    "output": [{"type": "text", "text": "TOOLOUT_QPW added"}],
                }
            ],
            "timestamp": "2026-10-01 09:00:03.000",
        },
        {
            "id": "m4",
            "name": "system",
            "role": "system",
            "content": "Memory: CONTEXT_QPW",
            "timestamp": "2026-10-01 09:00:03.500",
        },
        {
            "id": "m5",
            "name": "Friday",
            "role": "assistant",
            "content": [{"type": "text", "text": "已提醒 REPLY_QPW。日本語: 完了"}],
            "timestamp": "2026-10-01 09:00:05.000",
        },
    ]


def legacy(msgs: list[Any]) -> dict[str, Any]:
    return {"agent": {"memory": {"content": [[m, []] for m in msgs]}}}


def current(msgs: list[Any]) -> dict[str, Any]:
    return {"agent": {"state": {"session_id": "s-1", "context": msgs}}}


def write(home: Path, root: str, rel: str, doc: Any) -> Path:
    path = home / root / "workspaces" / "default" / "sessions" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, ensure_ascii=False))
    return path
