"""Sample task folders of Kilo Code's VS Code extension before 2026-04, built by code (agentsview `kilo_legacy.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any
from voyager_sessions.ingest.adapters.kilo import EXTENSION


ENV = (
    "<environment_details>\n# Current Workspace Directory (/home/dev/商店 app) Files\nsrc/\n\n"
    "# Current Mode\n<slug>code</slug>\n<name>Code</name>\n<model>z-ai/glm-4.5-air:free</model>\n</environment_details>"
)


def ui() -> list[dict[str, Any]]:
    return [
        {"ts": 1767800000000, "type": "say", "say": "text", "text": "修复购物车 PROMPT_KLG"},
        {"ts": 1767800000050, "type": "say", "say": "reasoning", "text": "看看测试 THINK_KLG"},
        {"ts": 1767800000100, "type": "ask", "ask": "command", "text": "npm test 购物车_klg"},
        {"ts": 1767800000200, "type": "say", "say": "command_output", "text": "TOOLOUT_KLG 1 failing"},
        {"ts": 1767800000300, "type": "say", "say": "completion_result", "text": "修好了 REPLY_KLG。한국어: 완료"},
    ]


def api() -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\n修复购物车 PROMPT_KLG\n</task>"},
                {"type": "text", "text": ENV},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "修好了 REPLY_KLG"}]},
    ]


def task(home: Path, tid: str = "4f1c2d3e-0000-4000-8000-000000000001", *, with_ui: bool = True) -> Path:
    folder = home / ".config/Code/User/globalStorage" / EXTENSION / "tasks" / tid
    folder.mkdir(parents=True)
    if with_ui:
        (folder / "ui_messages.json").write_text(json.dumps(ui(), ensure_ascii=False))
    (folder / "api_conversation_history.json").write_text(json.dumps(api(), ensure_ascii=False))
    (folder / "task_metadata.json").write_text(
        json.dumps({"files_in_context": [{"path": "src/cart.ts", "record_state": "active"}]})
    )
    return folder
