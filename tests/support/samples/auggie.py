"""Sample Augment Auggie session documents in the shape its 0.36.0 bundle saves, built by code."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


SID = "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4"


MARKERS = {
    "prompt": ["把日志改成结构化 PROMPT_AUG"],
    "thinking": ["THINK_AUG"],
    "call": ["grep -rn print 日志_aug"],
    "result": ["TOOLOUT_AUG"],
    "reply": ["REPLY_AUG"],
    "meta": ["SUMMARY_AUG"],
}


def exchanges() -> list[dict[str, Any]]:
    return [
        {
            "exchange": {
                "request_id": "r1",
                "request_message": "把日志改成结构化 PROMPT_AUG",
                "request_nodes": [
                    {"id": 0, "type": 10, "text_node": {"content": "Earlier: SUMMARY_AUG"}},
                    {"id": 1, "type": 0, "text_node": {"content": "把日志改成结构化 PROMPT_AUG"}},
                ],
                "response_text": "我先找 print。",
                "response_nodes": [
                    {"id": 0, "type": 8, "content": "", "thinking": {"content": "先搜索 THINK_AUG"}},
                    {"id": 1, "type": 0, "content": "我先找 print。"},
                    {
                        "id": 2,
                        "type": 5,
                        "content": "",
                        "tool_use": {
                            "tool_use_id": "tu1",
                            "tool_name": "launch-process",
                            "input_json": json.dumps({"command": "grep -rn print 日志_aug"}),
                        },
                    },
                    {"id": 3, "type": 9, "content": "", "billing": {"credits": 2}},
                ],
            },
            "completed": True,
            "sequenceId": 1,
            "finishedAt": "2026-07-01T08:00:05Z",
        },
        {
            "exchange": {
                "request_id": "r2",
                "request_message": "",
                "request_nodes": [
                    {
                        "id": 0,
                        "type": 1,
                        "tool_result_node": {
                            "tool_use_id": "tu1",
                            "content": "TOOLOUT_AUG 7 matches",
                            "is_error": False,
                        },
                    }
                ],
                "response_text": "改好了 REPLY_AUG。",
                "response_nodes": [
                    {"id": 0, "type": 0, "content": "改好了 "},
                    {"id": 1, "type": 0, "content": "REPLY_AUG。日本語: 完了"},
                ],
            },
            "completed": True,
            "sequenceId": 2,
            "finishedAt": "2026-07-01T08:00:09Z",
        },
    ]


def doc(history: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": SID,
        "created": "2026-07-01T08:00:00Z",
        "modified": "2026-07-01T08:00:09Z",
        "title": "结构化日志",
        "workspaceId": "ws-1",
        "agentState": {"modelId": "claude-sonnet-4-5", "userEmail": "dev@example.com"},
        "chatHistory": exchanges() if history is None else history,
        **extra,
    }


def write(home: Path, body: Any, name: str = f"{SID}.json") -> Path:
    path = home / ".augment/sessions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
    return path
