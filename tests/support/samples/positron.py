"""Sample Positron Assistant chat-session folders (VS Code's chatSessions in Positron's user dir), built by code."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


USER = Path(".config/Positron/User")


MARKERS = {
    "prompt": ["数据库迁移失败 PROMPTCVS", "second turn PROMPT2CVS"],
    "thinking": ["THINKCVS"],
    "call": ["pytest -q tests"],
    "result": ["TOOLOUTCVS"],
    "reply": ["REPLYCVS"],
}


def chat_dir(home: Path, user: Path = USER) -> Path:
    d = home / user / "workspaceStorage" / "ws1"
    (d / "chatSessions").mkdir(parents=True, exist_ok=True)
    (d / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/%E5%88%86%E6%9E%90"}))
    return d / "chatSessions"


def log(path: Path, entries: list[Any], tail: bytes = b"") -> None:
    path.write_bytes(b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in entries) + tail)
