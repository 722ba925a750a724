"""Sample open interpreter records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAME = "整理日志_and_report__March_05_2026_09-30-15"


def conversations(home: Path) -> Path:
    return home / ".config" / "open-interpreter" / "conversations"


def write(folder: Path, messages: Any, name: str = NAME) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def chat(marker: str = "LOGS_OI") -> list[dict[str, Any]]:
    return [
        {"role": "user", "type": "message", "content": f"整理日志 {marker}_PROMPT"},
        {"role": "assistant", "type": "message", "content": "好的，我先看看。"},
        {"role": "assistant", "type": "code", "format": "python", "content": f"print('{marker}_CODE')"},
        {"role": "computer", "type": "console", "format": "active_line", "content": "1"},
        {"role": "computer", "type": "console", "format": "output", "content": f"{marker}_OUT\n"},
        {"role": "user", "type": "image", "format": "base64.png", "content": "iVBORw0KGgo="},
        {"role": "assistant", "type": "message", "content": f"完成了 {marker}_REPLY。日本語: 完了。"},
    ]
