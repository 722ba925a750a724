"""Sample OpenClaude records and stores: Claude Code's transcript lines under OpenClaude's home, built by code (AGENTS-next.md; agentsview `openclaude.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


SID = "0b7e5c1a-2d3f-4e5a-8b6c-7d8e9f0a1b2c"


CWD = "/home/dev/支付 service"


MARKERS = {
    "prompt": ["修复登录错误 PROMPT_OCL"],
    "thinking": ["THINK_OCL"],
    "call": ["pytest 测试_ocl.py"],
    "result": ["TOOLOUT_OCL"],
    "reply": ["REPLY_OCL"],
    "meta": ["INJECTED_OCL"],
}


def rec(kind: str, content: Any, uuid: str, parent: str | None, t: str, cwd: str = CWD, **extra: Any) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": SID,
        "version": "0.3.0",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": t,
        "message": {"role": kind, "content": content, **extra.pop("message", {})},
        **extra,
    }


def lines(cwd: str = CWD) -> list[Any]:
    model = {"id": "m1", "model": "deepseek-chat"}
    return [
        rec("user", "修复登录错误 PROMPT_OCL", "u1", None, "2026-01-01T00:00:01Z", cwd),
        rec(
            "assistant",
            [{"type": "thinking", "thinking": "先运行测试 THINK_OCL"}],
            "a1",
            "u1",
            "2026-01-01T00:00:02Z",
            cwd,
            message=model,
        ),
        rec(
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest 测试_ocl.py"}}],
            "a2",
            "a1",
            "2026-01-01T00:00:02Z",
            cwd,
            message=model,
        ),
        rec(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "TOOLOUT_OCL 1 failed"}],
            "u2",
            "a2",
            "2026-01-01T00:00:03Z",
            cwd,
        ),
        rec(
            "user",
            "<system-reminder>INJECTED_OCL</system-reminder>",
            "u3",
            "u2",
            "2026-01-01T00:00:03Z",
            cwd,
            isMeta=True,
        ),
        rec(
            "assistant",
            [{"type": "text", "text": "修好了 REPLY_OCL。日本語: 完了"}],
            "a3",
            "u3",
            "2026-01-01T00:00:05Z",
            cwd,
            message={"id": "m2", "model": "deepseek-chat"},
        ),
    ]


def write(home: Path, items: list[Any], root: str = ".openclaude", *, tail: bytes = b"") -> Path:
    folder = home / root / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_bytes(b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in items) + tail)
    return path
