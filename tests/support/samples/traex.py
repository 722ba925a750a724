"""Sample TRAE CLI rollouts (Codex's records under ~/.trae/cli), built by code (agentsview `traex.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


SID = "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"


CWD = "/home/dev/支付 service"


MARKERS = {
    "prompt": ["修复登录错误 PROMPT_TRX"],
    "thinking": ["THINK_TRX"],
    "call": ["pytest 测试_trx.py"],
    "result": ["TOOLOUT_TRX"],
    "reply": ["REPLY_TRX"],
    "meta": ["INJECTED_TRX"],
}


def line(kind: str, payload: dict[str, Any], t: str = "2026-12-01T08:00:01.000Z") -> dict[str, Any]:
    return {"timestamp": t, "type": kind, "payload": payload}


def rollout(cwd: str = CWD, prompt: str = "修复登录错误 PROMPT_TRX") -> list[dict[str, Any]]:
    return [
        line(
            "session_meta",
            {
                "id": SID,
                "timestamp": "2026-12-01T08:00:00.000Z",
                "cwd": cwd,
                "originator": "codex-tui",
                "cli_version": "2.0.3",
            },
            "2026-12-01T08:00:00.000Z",
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>INJECTED_TRX</environment_context>"}],
            },
        ),
        line("turn_context", {"cwd": cwd, "model": "doubao-seed-code"}),
        line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        line("event_msg", {"type": "user_message", "message": prompt}),
        line(
            "response_item",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "先运行测试 THINK_TRX"}]},
        ),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "pytest 测试_trx.py"]}),
                "call_id": "call_1",
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": json.dumps({"output": "TOOLOUT_TRX 1 failed", "metadata": {"exit_code": 1}}),
            },
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "修好了 REPLY_TRX。한국어: 완료"}],
            },
        ),
    ]


def write(home: Path, lines: list[Any], *, folder: str = "sessions/2026/12/01", root: str = ".trae/cli") -> Path:
    path = home / root / folder / f"rollout-2026-12-01T08-00-00-{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join(x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
    )
    return path
