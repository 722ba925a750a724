"""Sample WorkBuddy session logs (OpenAI Agents SDK items), built by code (agentsview `workbuddy.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


T = 1780000000000


MARKERS = {
    "prompt": ["帮我写周报 PROMPT_WB"],
    "call": ["git log --since=周一_wb"],
    "result": ["TOOLOUT_WB"],
    "reply": ["REPLY_WB"],
}


USAGE = {"model": "hunyuan-t2", "usage": {"inputTokens": 120, "outputTokens": 30}}


def items(cwd: str = "/home/dev/周报") -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "帮我写周报 PROMPT_WB"}],
            "cwd": cwd,
            "timestamp": T,
        },
        {
            "type": "function_call",
            "callId": "fc1",
            "name": "shell",
            "arguments": json.dumps({"command": "git log --since=周一_wb"}),
            "providerData": USAGE,
            "timestamp": T + 1000,
        },
        {
            "type": "function_call_result",
            "callId": "fc1",
            "output": {"type": "text", "text": "TOOLOUT_WB 12 commits"},
            "timestamp": T + 2000,
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "周报写好了 REPLY_WB。日本語: 完了"}],
            "providerData": USAGE,
            "timestamp": T + 3000,
        },
    ]


def log(home: Path, name: str = "s-1.jsonl") -> Path:
    return home / ".workbuddy/projects/proj-周报" / name
