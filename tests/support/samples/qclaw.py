"""Sample QClaw transcripts: OpenClaw's JSONL generation (Pi's session format) under ~/.qclaw, built by code
(agentsview `qclaw.go`; the record shapes of the OpenClaw 2026.6.35 capture)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
MARKERS = {
    "prompt": ["[Wed 2026-02-18 11:21 GMT+1] 帮我订会议室 PROMPT_QCL"],
    "thinking": ["THINK_QCL"],
    "call": ["book-room 三楼_qcl"],
    "result": ["TOOLOUT_QCL"],
    "reply": ["REPLY_QCL"],
}


def entry(kind: str, eid: str, parent: str | None, t: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": eid, "parentId": parent, "timestamp": t, **fields}


def lines(cwd: str = "/home/dev/办公") -> list[dict[str, Any]]:
    t = "2026-02-18T10:21:0{}Z".format
    return [
        {"type": "session", "version": 3, "id": SID, "timestamp": t(0), "cwd": cwd},
        entry("model_change", "m0", None, t(0), provider="hunyuan", modelId="hunyuan-t1"),
        entry("custom", "c0", "m0", t(0), customType="model-snapshot", data={"modelId": "hunyuan-t1"}),
        entry(
            "message",
            "u1",
            "c0",
            t(1),
            message={
                "role": "user",
                "content": [{"type": "text", "text": "[Wed 2026-02-18 11:21 GMT+1] 帮我订会议室 PROMPT_QCL"}],
            },
        ),
        entry(
            "message",
            "a1",
            "u1",
            t(2),
            message={
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "先查空闲 THINK_QCL"},
                    {
                        "type": "toolCall",
                        "id": "call_q1",
                        "name": "exec",
                        "arguments": {"command": "book-room 三楼_qcl"},
                    },
                ],
                "model": "hunyuan-t1",
                "usage": {"input": 100, "output": 20},
                "stopReason": "toolUse",
            },
        ),
        entry(
            "message",
            "r1",
            "a1",
            t(3),
            message={
                "role": "toolResult",
                "toolCallId": "call_q1",
                "toolName": "exec",
                "content": [{"type": "text", "text": "TOOLOUT_QCL booked"}],
                "isError": False,
            },
        ),
        entry(
            "message",
            "a2",
            "r1",
            t(4),
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": "订好了 REPLY_QCL。日本語: 完了"}],
                "stopReason": "stop",
            },
        ),
    ]


def write(home: Path, items: list[Any], *, label: str | None = "周会", agent: str = "main") -> Path:
    folder = home / ".qclaw" / "agents" / agent / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_bytes(
        b"".join(x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in items)
    )
    index = {f"agent:{agent}:explicit:{SID}": {"sessionId": SID, "sessionFile": str(path), "updatedAt": 1771410064000}}
    if label:
        index[f"agent:{agent}:explicit:{SID}"]["label"] = label
    (folder / "sessions.json").write_text(json.dumps(index, ensure_ascii=False))
    return path
