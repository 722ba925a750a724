"""Sample Codebuff / Freebuff session folders, built by code (agentsview `codebuff.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


FOLDER = "2026-03-01T10-00-00.000Z"


MARKERS = {
    "prompt": ["给首页加暗色模式 PROMPT_CBF"],
    "thinking": ["THINK_CBF"],
    "call": ["npm run build 暗色_cbf"],
    "result": ["TOOLOUT_CBF"],
    "reply": ["REPLY_CBF"],
    "meta": ["PLAN_CBF", "ERROR_CBF"],
}


def chat() -> list[dict[str, Any]]:
    return [
        {"variant": "user", "content": "给首页加暗色模式 PROMPT_CBF", "timestamp": "2026-03-01T10:00:01.000Z"},
        {
            "variant": "ai",
            "timestamp": "2026-03-01T10:00:05.000Z",
            "blocks": [
                {"type": "text", "textType": "reasoning", "content": "先看样式 THINK_CBF"},
                {"type": "plan", "content": "1. 加变量 PLAN_CBF"},
                {
                    "type": "tool",
                    "toolName": "run_terminal_command",
                    "toolCallId": "tc1",
                    "input": {"command": "npm run build 暗色_cbf"},
                    "output": [{"type": "json", "value": {"stdout": "TOOLOUT_CBF built"}}],
                },
                {
                    "type": "agent",
                    "agentType": "codebuff/file-picker@0.0.3",
                    "agentId": "ag1",
                    "initialPrompt": "找样式文件 DELEGATE_CBF",
                    "status": "complete",
                    "content": "styles.css SUBREPORT_CBF",
                },
                {"type": "text", "content": "暗色模式加好了 REPLY_CBF。日本語: 完了"},
            ],
        },
        {"variant": "error", "content": "Quota exhausted ERROR_CBF", "timestamp": "10:01 AM"},
    ]


def folder(home: Path, name: str = FOLDER, project: str = "shop") -> Path:
    d = home / ".config/manicode/projects" / project / "chats" / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def write(d: Path, messages: Any, agent_type: str = "base") -> None:
    (d / "chat-messages.json").write_text(
        messages if isinstance(messages, str) else json.dumps(messages, ensure_ascii=False)
    )
    state = {
        "sessionState": {
            "fileContext": {"cwd": "/home/dev/商店"},
            "mainAgentState": {"agentType": agent_type, "creditsUsed": 12},
        }
    }
    (d / "run-state.json").write_text(json.dumps(state, ensure_ascii=False))
    (d / "chat-meta.json").write_text(
        json.dumps({"messageCount": 3, "firstPrompt": "给首页加暗色模式 PROMPT_CBF"}, ensure_ascii=False)
    )
