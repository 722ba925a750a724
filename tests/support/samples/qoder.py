"""Sample qoder records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "7c1e2d3f-0000-4000-8000-00000000000b"


CWD = "/home/dev/支付 service"


def rec(kind: str, content: Any, uuid: str, parent: str | None, t: str, cwd: str = CWD, **extra: Any) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": SID,
        "version": "0.9.1",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": t,
        "message": {"role": kind, "content": content, **extra.pop("message", {})},
        **extra,
    }


def lines(cwd: str = CWD) -> list[Any]:
    return [
        {
            "type": "runtime-config",
            "sessionId": SID,
            "model": "efficient",
            "reasoningEffort": "medium",
            "contextWindow": 200000,
            "timestamp": "2026-01-01T00:00:00Z",
        },
        rec("user", "修复登录错误 PROMPT_QOD", "u1", None, "2026-01-01T00:00:01Z", cwd),
        rec(
            "assistant",
            [{"type": "thinking", "thinking": "先运行测试 THINK_QOD", "signature": "x"}],
            "a1",
            "u1",
            "2026-01-01T00:00:02Z",
            cwd,
            message={"id": "m1", "model": "efficient"},
        ),
        rec(
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest 测试.py"}}],
            "a2",
            "a1",
            "2026-01-01T00:00:02Z",
            cwd,
            message={"id": "m1", "model": "efficient"},
            credits=1.5,
            original_credits=2,
            billable=True,
        ),
        rec(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "TOOLOUT_QOD 1 failed"}],
            "u2",
            "a2",
            "2026-01-01T00:00:03Z",
            cwd,
        ),
        rec("user", "<system-reminder>INJECTED_QOD</system-reminder>", "u3", "u2", "2026-01-01T00:00:03Z", cwd),
        rec(
            "assistant",
            [{"type": "text", "text": "修好了 REPLY_QOD。日本語: 完了"}],
            "a3",
            "u3",
            "2026-01-01T00:00:05Z",
            cwd,
            message={"id": "m2", "model": "efficient"},
        ),
    ]


def write(home: Path, items: list[Any], root: str = ".qoder") -> Path:
    folder = home / root / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    (folder / SID).mkdir(exist_ok=True)
    (folder / SID / "state.json").write_text(json.dumps({"session_id": SID}))
    return path
