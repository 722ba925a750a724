"""Sample Posit Assistant conversation folders (a message tree over AI SDK messages), built by code."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any
from tests.support.items import write


T = 1781000000000


MARKERS = {
    "prompt": ["画出销量趋势 PROMPT_PST"],
    "thinking": ["THINK_PST"],
    "call": ["ggplot(销量_pst)"],
    "result": ["TOOLOUT_PST"],
    "reply": ["REPLY_PST"],
    "meta": ["SUMMARY_PST"],
    "absent": ["INACTIVE_PST", "UICOPY_PST"],
}


def positai(n: int, **extra: Any) -> dict[str, Any]:
    return {"providerOptions": {"providerMetadata": {"positai": {"timestamp": T + n * 1000, **extra}}}}


def lm() -> list[dict[str, Any]]:
    usage = {"modelId": "claude-sonnet-4-5", "usage": {"inputTokens": 300, "outputTokens": 40, "cacheReadTokens": 50}}
    return [
        {"id": 0, "message": {"role": "system", "content": "You are Posit Assistant", **positai(0)}},
        {
            "id": 1,
            "message": {"role": "user", "content": [{"type": "text", "text": "画出销量趋势 PROMPT_PST"}], **positai(1)},
        },
        {
            "id": 2,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "text": "用 ggplot THINK_PST"},
                    {
                        "type": "tool-call",
                        "toolCallId": "tc1",
                        "toolName": "runCode",
                        "input": {"code": "ggplot(销量_pst)"},
                    },
                ],
                **positai(2, **usage),
            },
        },
        {
            "id": 3,
            "message": {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "tc1",
                        "toolName": "runCode",
                        "output": {"type": "text", "value": "TOOLOUT_PST plot.png"},
                    }
                ],
                **positai(3),
            },
        },
        {
            "id": 4,
            "message": {
                "role": "assistant",
                "content": "<MESSAGESUMMARY>SUMMARY_PST</MESSAGESUMMARY>趋势图画好了 REPLY_PST。日本語: 完了",
                **positai(4, **usage),
            },
        },
        {"id": 5, "message": {"role": "assistant", "content": "旧的回答 INACTIVE_PST", **positai(5)}},
    ]


def tree(kind: str = "chat", parent: str | None = None, ids: list[list[int]] | None = None) -> dict[str, Any]:
    nodes = [
        {
            "id": f"n{i}",
            "parentId": f"n{i - 1}" if i else None,
            "isActive": True,
            "lmMessageIds": group,
            "timestamp": T + i,
        }
        for i, group in enumerate(ids or [[0, 1], [2, 3], [4]])
    ]
    nodes.append({"id": "old", "parentId": "n1", "isActive": False, "lmMessageIds": [5], "timestamp": T + 9})
    meta: dict[str, Any] = {"kind": kind, "gitBranch": "main"}
    if parent:
        meta["parentTreeId"] = parent
    return {
        "schemaVersion": "3",
        "root": {"id": "r", "title": "销量趋势", "timestamp": T, "metadata": meta},
        "messages": nodes,
    }


def conversation(folder: Path, lines: list[Any], doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conversation.json").write_text(json.dumps(doc, ensure_ascii=False))
    write(folder / "lm-messages.jsonl", lines)
    write(folder / "ui-messages.jsonl", [{"id": "u1", "parts": [{"type": "text", "text": "UICOPY_PST"}]}])
    return folder


def workspace(home: Path) -> Path:
    ws = home / ".posit/assistant/workspaces/ws-1"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "workspace.json").write_text(json.dumps({"path": "/home/dev/销量分析"}, ensure_ascii=False))
    return ws
