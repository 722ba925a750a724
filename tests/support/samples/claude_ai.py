"""Sample claude ai records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

ROOT = "00000000-0000-4000-8000-000000000000"


def msg(uuid: str, parent: str, sender: str, content: list[Any] | None = None, text: str = "", **extra: Any) -> dict:
    return {
        "uuid": uuid,
        "parent_message_uuid": parent,
        "sender": sender,
        "text": text,
        "content": content or [],
        "created_at": "2026-01-01T00:00:01.123456Z",
        "updated_at": "2026-01-01T00:00:01Z",
        "attachments": [],
        "files": [],
        **extra,
    }


def conversation(
    uuid: str = "c1a2b3c4-0000-4000-8000-00000000000a",
    name: str = "登录修复 TITLE_CAI",
    leaf: str | None = "m5",
    extra: list[Any] | None = None,
) -> dict[str, Any]:
    messages = [
        msg("m1", ROOT, "human", [{"type": "text", "text": "旧问题 OLDPROMPT_CAI"}]),
        msg(
            "m2",
            ROOT,
            "human",
            [{"type": "text", "text": "登录失败了 PROMPT_CAI 日本語も"}],
            attachments=[
                {"file_name": "错误.log", "file_type": "text/plain", "extracted_content": "Traceback ATTACH_CAI"}
            ],
        ),
        msg(
            "m3",
            "m2",
            "assistant",
            [
                {"type": "thinking", "thinking": "检查会话 THINK_CAI"},
                {"type": "tool_use", "id": "tu1", "name": "web_search", "input": {"query": "会话过期 SEARCH_CAI"}},
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "name": "web_search",
                    "content": [{"type": "text", "text": "结果 TOOLOUT_CAI"}],
                },
                {"type": "text", "text": "修好了 REPLY_CAI。한국어: 완료"},
                {"type": "token_budget"},
            ],
        ),
        msg("m4", "m3", "human", text="只有文本 TEXTONLY_CAI"),
        msg("m5", "m4", "assistant", text="好的 PLAIN_CAI"),
        *(extra or []),
    ]
    return {
        "uuid": uuid,
        "name": name,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:05:00Z",
        "account": {"uuid": "acct"},
        "chat_messages": messages,
        **({"current_leaf_message_uuid": leaf} if leaf else {}),
    }


def write_export(path: Path, convs: list[Any], *, as_zip: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(convs, ensure_ascii=False)
    if as_zip:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("users.json", "[]")
            z.writestr("projects.json", "[]")
            z.writestr("conversations.json", body)
    else:
        path.write_text(body, encoding="utf-8")
    return path
