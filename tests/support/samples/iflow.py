"""Sample iflow records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "session-041101e6-2a7f-4dfd-90b0-57888a353f6a"


CWD = "/home/dev/支付 service"


def rec(kind: str, content: Any, uuid: str, parent: str | None, t: str, cwd: str = CWD, **extra: Any) -> dict:
    message: dict[str, Any] = {"role": kind, "content": content, **extra.pop("message", {})}
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": t,
        "type": kind,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "gitBranch": "main",
        "version": "0.5.3",
        "message": message,
        **extra,
    }


def lines(cwd: str = CWD) -> list[Any]:
    call = {"type": "tool_use", "id": "call_1", "name": "run_shell_command", "input": {"command": "grep 错误 日志.log"}}
    return [
        rec("user", "# AGENTS.md instructions for /home/dev\nINJECTED_IFL", "u0", None, "2026-01-01T00:00:00Z", cwd),
        rec("user", [{"type": "text", "text": "帮我查日志的错误 PROMPT_IFL"}], "u1", "u0", "2026-01-01T00:00:01Z", cwd),
        rec(
            "assistant",
            [{"type": "thinking", "thinking": "先查日志 THINK_IFL"}, {"type": "text", "text": "我来查。"}, call],
            "a1",
            "u1",
            "2026-01-01T00:00:02.100Z",
            cwd,
            message={"model": "glm-4.7", "usage": {"input_tokens": 100, "output_tokens": 20}},
        ),
        rec("assistant", [call], "a2", "u1", "2026-01-01T00:00:02.300Z", cwd),  # a streamed snapshot: the same call
        rec(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": {
                        "callId": "call_1",
                        "responseParts": {
                            "functionResponse": {
                                "id": "call_1",
                                "name": "run_shell_command",
                                "response": {"output": "TOOLOUT_IFL 错误 x3"},
                            }
                        },
                        "resultDisplay": "TOOLOUT_IFL",
                    },
                }
            ],
            "u2",
            "a2",
            "2026-01-01T00:00:03Z",
            cwd,
            toolUseResult={"status": "success", "toolName": "run_shell_command"},
        ),
        rec(
            "assistant",
            [{"type": "text", "text": "找到三个错误 REPLY_IFL。日本語: 完了"}],
            "a3",
            "u2",
            "2026-01-01T00:00:05Z",
            cwd,
        ),
        rec("user", "Caveat NOTE_IFL", "u3", "a3", "2026-01-01T00:00:06Z", cwd, isMeta=True),
        rec("user", "子任务 SIDE_IFL", "u4", "a3", "2026-01-01T00:00:07Z", cwd, isSidechain=True),
    ]


def write(home: Path, items: list[Any], project: str = "-home-dev-proj") -> Path:
    folder = home / ".iflow/projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path
