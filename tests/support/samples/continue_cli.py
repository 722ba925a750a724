"""Sample continue cli records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "22837aad-8b21-486d-80f4-4f22c05e9bcf"


CWD = "/home/dev/支付 service"


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return {"message": {"role": "user", "content": text}, "contextItems": [], "editorState": text, **extra}


def assistant(text: str, *calls: tuple[str, str, dict[str, Any], Any, str], **extra: Any) -> dict[str, Any]:
    """An assistant item; each call is (id, tool, arguments, output, status)."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "model": "mock-model"},
    }
    item: dict[str, Any] = {"message": message, "contextItems": [], **extra}
    if calls:
        message["toolCalls"] = [
            {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
            for cid, tool, args, _, _ in calls
        ]
        item["toolCallStates"] = [
            {
                "toolCallId": cid,
                "toolCall": message["toolCalls"][i],
                "status": status,
                "parsedArgs": args,
                "output": output,
            }
            for i, (cid, tool, args, output, status) in enumerate(calls)
        ]
    return item


def result(text: str) -> list[dict[str, str]]:
    return [{"content": text, "name": "Tool Result", "description": "Tool execution result"}]


def history() -> list[dict[str, Any]]:
    return [
        user(
            "迁移失败 ERR_CONT_7 帮我看看",
            contextItems=[{"name": "README.md", "description": "file", "content": "# 项目 README CONTEXT_CONT"}],
        ),
        {"message": {"role": "thinking", "content": "Check the log THINK_CONT"}, "contextItems": []},
        assistant(
            "我来看看。",
            ("call_1", "Bash", {"command": "tail -n 5 数据.log"}, result("relation missing\n"), "done"),
            ("call_2", "Read", {"path": "a.py"}, result("denied"), "errored"),
            reasoning={"active": False, "text": "IDE reasoning REASON_CONT"},
        ),
        {"message": {"role": "tool", "content": "relation missing\n", "toolCallId": "call_1"}, "contextItems": []},
        {
            "message": {"role": "tool", "content": "IDE tool output TOOLMSG_CONT", "toolCallId": "call_9"},
            "contextItems": [],
        },
        {"message": {"role": "system", "content": "You are in agent mode"}, "contextItems": []},
        assistant("数据库迁移完成 REPLY_CONT"),
    ]


def doc(items: list[Any], title: Any = "Untitled Session", **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": SID,
        "title": title,
        "workspaceDirectory": CWD,
        "history": items,
        "usage": {"totalCost": 0.1, "promptTokens": 400, "completionTokens": 80},
        **extra,
    }


def write_session(root: Path, body: Any, sid: str = SID) -> Path:
    path = root / "sessions" / f"{sid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
