"""Sample chatgpt records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any


def node(
    nid: str,
    parent: str | None,
    role: str | None,
    parts: list[Any] | None = None,
    *,
    ctype: str = "text",
    t: float = 1767225600.0,
    **extra: Any,
) -> dict[str, Any]:
    message = None
    if role is not None:
        content = {"content_type": ctype, **({"parts": parts} if parts is not None else {}), **extra.pop("content", {})}
        message = {
            "id": nid,
            "author": {"role": role, "name": extra.pop("name", None)},
            "create_time": t,
            "content": content,
            "status": "finished_successfully",
            "metadata": extra.pop("metadata", {}),
            "recipient": extra.pop("recipient", "all"),
        }
    return {"id": nid, "parent": parent, "children": [], "message": message}


def conversation(
    cid: str = "67a1b2c3-0000-4000-8000-000000000001",
    title: str = "数据库迁移 TITLE_GPT",
    extra_nodes: list[dict[str, Any]] | None = None,
    current: str = "n9",
) -> dict[str, Any]:
    nodes = [
        node("root", None, None),
        node("n0", "root", "system", [""], metadata={"is_visually_hidden_from_conversation": True}),
        node(
            "n1",
            "n0",
            "user",
            ctype="user_editable_context",
            content={"user_profile": "我是后端工程师 PROFILE_GPT", "user_instructions": "用中文回答"},
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        node("n2", "n1", "user", ["旧的问题 OLDPROMPT_GPT"]),  # edited away
        node("n3", "n2", "assistant", ["旧的回答 OLDREPLY_GPT"]),
        node("n4", "n1", "user", ["请帮我迁移数据库 PROMPT_GPT 日本語も"], t=1767225601.5),
        node(
            "n5",
            "n4",
            "assistant",
            ctype="thoughts",
            content={"thoughts": [{"summary": "s", "content": "先检查表结构 THINK_GPT"}]},
        ),
        node("n6", "n5", "assistant", ctype="reasoning_recap", content={"content": "Thought for 3 seconds RECAP_GPT"}),
        node(
            "n7",
            "n6",
            "assistant",
            None,
            ctype="code",
            content={"language": "python", "text": "print('迁移 CODE_GPT')"},
            recipient="python",
            metadata={"model_slug": "gpt-4o"},
        ),
        node("n8", "n7", "tool", None, ctype="execution_output", content={"text": "迁移 TOOLOUT_GPT"}, name="python"),
        node(
            "n9",
            "n8",
            "assistant",
            ["迁移完成 REPLY_GPT。한국어: 완료", {"content_type": "image_asset_pointer"}],
            ctype="multimodal_text",
            metadata={"model_slug": "gpt-4o"},
            t=1767225605.0,
        ),
        *(extra_nodes or []),
    ]
    return {
        "title": title,
        "create_time": 1767225600.25,
        "update_time": 1767225605.0,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": current,
        "conversation_id": cid,
        "id": cid,
        "moderation_results": [],
    }


def write_export(path: Path, convs: list[Any], *, as_zip: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(convs, ensure_ascii=False)
    if as_zip:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("chat.html", "<html></html>")
            z.writestr("conversations.json", body)
    else:
        path.write_text(body, encoding="utf-8")
    return path
