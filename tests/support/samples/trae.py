"""Sample Trae IDE state.vscdb databases (the icube agent key), built by code (agentsview `trae_provider.go`)."""

from __future__ import annotations
import json
import sqlite3
from pathlib import Path
from typing import Any
from voyager_sessions.ingest.adapters.trae import KEY


USER = Path(".config/Trae/User")


def session(sid: str, prompt: str, reply: Any = "登录修好了 REPLY_TRAE。日本語: 完了") -> dict[str, Any]:
    answer = {"role": "assistant", "timestamp": 1782000005000, "model": "doubao-1.6", "turnIndex": 0}
    if isinstance(reply, str):
        answer["content"] = reply
    else:
        answer["content"], answer["agentTaskContent"] = "", reply
    return {
        "sessionId": sid,
        "createdAt": 1782000000000,
        "updatedAt": 1782000005000,
        "messages": [{"role": "user", "content": prompt, "timestamp": 1782000001000, "turnIndex": 0}, answer],
    }


def state_db(path: Path, sessions_: list[Any] | None, other: dict[str, str] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    if sessions_ is not None:
        conn.execute("INSERT INTO ItemTable VALUES (?, ?)", (KEY, json.dumps({"list": sessions_}, ensure_ascii=False)))
    for k, v in (other or {}).items():
        conn.execute("INSERT INTO ItemTable VALUES (?, ?)", (k, v))
    conn.commit()
    conn.close()
    return path


def workspace(home: Path, user: Path = USER) -> Path:
    ws = home / user / "workspaceStorage" / "a1b2"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/%E7%99%BB%E5%BD%95"}))
    return ws
