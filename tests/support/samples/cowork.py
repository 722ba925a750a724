"""Sample Claude Desktop Cowork session folders (a card and its Claude Code transcript), built by code (agentsview `cowork.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


CLI = "4f9d2c1b-8e7a-4b3c-9d2e-1f0a9b8c7d6e"


LOCAL = "local_6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


MARKERS = {
    "prompt": ["整理这些发票 PROMPT_CWK"],
    "thinking": ["THINK_CWK"],
    "call": ["ls 发票_cwk"],
    "result": ["TOOLOUT_CWK"],
    "reply": ["REPLY_CWK"],
    "absent": ["OUTPUT_CWK"],
}


def rec(kind: str, content: Any, uuid: str, t: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": CLI,
        "cwd": "/sessions/brave-owl",
        "timestamp": t,
        "message": {"role": kind, "content": content, **extra.pop("message", {})},
        **extra,
    }


def transcript() -> list[dict[str, Any]]:
    model = {"id": "m1", "model": "claude-sonnet-4-5"}
    return [
        rec("user", "整理这些发票 PROMPT_CWK", "u1", "2026-03-01T10:00:00Z"),
        rec(
            "assistant",
            [{"type": "thinking", "thinking": "先看目录 THINK_CWK"}],
            "a1",
            "2026-03-01T10:00:01Z",
            message=model,
        ),
        rec(
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls 发票_cwk"}}],
            "a2",
            "2026-03-01T10:00:02Z",
            message=model,
        ),
        rec(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "TOOLOUT_CWK a.pdf"}],
            "u2",
            "2026-03-01T10:00:03Z",
        ),
        rec(
            "assistant",
            [{"type": "text", "text": "已整理 REPLY_CWK。日本語: 完了"}],
            "a3",
            "2026-03-01T10:00:04Z",
            message=model,
        ),
        {"type": "ai-title", "aiTitle": "发票整理 AITITLE_CWK", "sessionId": CLI},
    ]


def write(home: Path, *, card: dict[str, Any] | None = None, lines: list[Any] | None = None) -> Path:
    ws = home / ".config/Claude/local-agent-mode-sessions/org-1/ws-1"
    folder = ws / LOCAL
    projects = folder / ".claude/projects/-sessions-brave-owl"
    projects.mkdir(parents=True)
    doc = {
        "sessionId": LOCAL,
        "cliSessionId": CLI,
        "title": "Invoices CARDTITLE_CWK",
        "createdAt": 1772359200000,
        "lastActivityAt": 1772359300000,
    }
    (ws / f"{LOCAL}.json").write_text(json.dumps(doc if card is None else card, ensure_ascii=False))
    path = projects / f"{CLI}.jsonl"
    path.write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in (transcript() if lines is None else lines))
    )
    (folder / "outputs").mkdir()
    (folder / "outputs" / "report.jsonl").write_text(
        json.dumps(rec("user", "OUTPUT_CWK", "x", "2026-03-01T10:00:00Z")) + "\n"
    )
    (ws.parent.parent / "skills-plugin").mkdir()
    return path
