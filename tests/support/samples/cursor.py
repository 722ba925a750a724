"""Sample cursor records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any


def kv_db(path: Path, kv: dict[str, Any] | None = None, items: dict[str, Any] | None = None) -> Path:
    """A Cursor-style ``state.vscdb``: ``cursorDiskKV`` and ``ItemTable`` as the editor declares them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for table, rows in (("cursorDiskKV", kv or {}), ("ItemTable", items or {})):
        for key, value in rows.items():
            if isinstance(value, (dict, list)):
                value = json.dumps(value, ensure_ascii=False)
            conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (key, value))
    conn.commit()
    conn.close()
    return path


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def cli_store(
    path: Path,
    messages: list[dict[str, Any]],
    *,
    name: str = "迁移 chat",
    stale: list[dict] = (),
    workspace: str | None = None,
    chat_id: str | None = None,
) -> Path:
    """A CLI ``store.db`` as the format notes describe it: hex-JSON ``meta``, content-addressed ``blobs``, a protobuf
    root listing the messages in order; ``stale`` messages are stored but not reachable from the latest root."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    ids = []
    for msg in [*stale, *messages]:
        data = json.dumps(msg, ensure_ascii=False).encode()
        blob_id = hashlib.sha256(data).hexdigest()
        conn.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?)", (blob_id, data))
        if msg not in stale:
            ids.append(blob_id)
    # A two-level tree: the root holds a node holding the first messages, then the rest directly.
    inner = b"".join(field(1, bytes.fromhex(i)) for i in ids[:2])
    inner_id = hashlib.sha256(inner).hexdigest()
    conn.execute("INSERT INTO blobs VALUES (?, ?)", (inner_id, inner))
    root = field(1, bytes.fromhex(inner_id)) + b"".join(field(1, bytes.fromhex(i)) for i in ids[2:])
    if workspace:
        root += field(9, workspace.encode())
    root_id = hashlib.sha256(root).hexdigest()
    conn.execute("INSERT INTO blobs VALUES (?, ?)", (root_id, root))
    meta = {
        "agentId": chat_id or path.parent.name,
        "latestRootBlobId": root_id,
        "name": name,
        "mode": "agent",
        "createdAt": 1_767_225_600_000,
        "lastUsedModel": "gpt-5",
    }
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta, ensure_ascii=False).encode().hex(),))
    conn.commit()
    conn.close()
    return path


CLI_MESSAGES = [
    {"role": "system", "content": "SYSTEMPROMPTCUR You are Cursor's agent."},
    {
        "role": "user",
        "content": "<user_info>OS linux, shell bash USERINFOCUR</user_info>\n\n"
        "<user_query>\n请修复登录 PROMPTCURCLI\n</user_query>",
    },
    {
        "id": "1",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "THINKCURCLI check auth.py"},
            {"type": "text", "text": "Let me run the tests."},
            {
                "type": "tool-call",
                "toolCallId": "toolu_9",
                "toolName": "Shell",
                "args": {"command": "pytest -q auth", "description": "Run the auth tests"},
            },
        ],
    },
    {
        "role": "tool",
        "id": "toolu_9",
        "content": [
            {
                "type": "tool-result",
                "toolName": "Shell",
                "toolCallId": "toolu_9",
                "result": "TOOLOUTCURCLI 1 failed",
                "isError": False,
            }
        ],
    },
    {"id": "1", "role": "assistant", "content": [{"type": "text", "text": "REPLYCURCLI 已修复 the token check"}]},
]


def msg(role: str, *content: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "message": {"content": list(content)}}
