"""The Forge adapter: forgecode's SQLite store, ``~/.forge/.forge.db`` (documented, not yet observed), read-only.

Forge (tailcallhq/forgecode) keeps every conversation in one database, as agentsview's ``forge.go``
reads it: ``conversations(conversation_id, title, workspace_id, context, created_at, updated_at,
metrics)``, where ``context`` is JSON, ``{conversation_id, messages: [...]}`` (NULL for a conversation
with nothing in it yet). Each message is one of:

* ``{"message": {"text": {"role": "System"|"User"|"Assistant", "content", "raw_content": {"Text"},
  "model", "timestamp", "tool_calls": [{"name", "call_id", "arguments"}],
  "reasoning_details": [{"text"}]}}, "usage": {…}}``: the system prompt (meta; its
  ``<current_working_directory>`` is the session's cwd), a person's prompt, or the model's turn
  (reasoning, text, tool calls);
* ``{"message": {"tool": {"name", "call_id", "output": {"is_error", "values": [{"text"}]}}}}``: a
  tool's result.

A ``task`` call that names a ``session_id`` starts a subagent whose conversation is its own row:
that conversation's parent is the caller's, and its prompts are the parent agent's (found with
one query over the rows that mention ``session_id``). One database holds every conversation, so
the Cursor keeps a signature per conversation (its row's times and its context's length): an
untouched one comes back ``Unchanged``. Not run here (forgecode is on neither npm nor PyPI
here); no resume command is documented.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    changed_sessions,
    json_column,
    list_or_empty,
    parse_ts,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.sqlite import SessionSignatures, probe_store, sqlite_source
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Origin, Session, session_id

PROVIDER = "forge"
LABEL = "Forge"
DB_NAME = ".forge.db"
_REQUIRED = {"conversations": frozenset({"conversation_id", "context"})}
_CWD = re.compile(r"<current_working_directory>\s*(.*?)\s*</current_working_directory>", re.S)
#: Forge's shell tool.
SHELL_TOOLS = frozenset({"shell"})


def db_path(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_FORGE_HOME`` or ``~/.forge``, with ``.forge.db`` in it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / DB_NAME


def _text(message: dict[str, Any]) -> Any:
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content
    return as_dict(message.get("raw_content")).get("Text")


def children(conn: sqlite3.Connection) -> dict[str, str]:
    """Subagent conversation id -> the conversation whose ``task`` call started it."""
    found: dict[str, str] = {}
    rows = conn.execute(
        "SELECT conversation_id, context FROM conversations WHERE context LIKE '%session_id%' ORDER BY rowid"
    )
    for parent, context in rows:
        for item in list_or_empty(as_dict(json_column(context)).get("messages")):
            text = as_dict(as_dict(as_dict(item).get("message")).get("text"))
            for call in list_or_empty(text.get("tool_calls")):
                call = as_dict(call)
                child = str_or_none(as_dict(call.get("arguments")).get("session_id"))
                if call.get("name") == "task" and child and child != parent:
                    found.setdefault(child, parent)
    return found


def message_drafts(item: Any, person: Origin, unknown: UnknownRecords, facts: dict[str, Any]) -> Iterator[Draft]:
    message = as_dict(as_dict(item).get("message"))
    if "text" in message:
        text = as_dict(message["text"])
        role = str(text.get("role") or "").lower()
        ts = parse_ts(text.get("timestamp"))
        facts["model"] = str_or_none(text.get("model")) or facts.get("model")
        body = _text(text)
        if role == "system":
            if isinstance(body, str) and facts.get("cwd") is None and (m := _CWD.search(body)):
                facts["cwd"] = m.group(1) or None
            yield ("meta", "provider", body, {"ts": ts})
        elif role == "user":
            yield ("user", person, body, {"ts": ts})
        elif role == "assistant":
            for detail in list_or_empty(text.get("reasoning_details")):
                yield ("reasoning", "agent", as_dict(detail).get("text"), {"ts": ts})
            yield ("assistant", "agent", body, {"ts": ts})
            for call in list_or_empty(text.get("tool_calls")):
                call = as_dict(call)
                name = str_or_none(call.get("name"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, call.get("arguments"), SHELL_TOOLS),
                    {"ts": ts, "tool": name, "call_id": str_or_none(call.get("call_id"))},
                )
        else:
            unknown.saw(f"role:{role}")
    elif "tool" in message:
        tool = as_dict(message["tool"])
        output = as_dict(tool.get("output"))
        values = list_or_empty(output.get("values"))
        yield (
            "tool_result",
            "tool",
            "".join(result_text(v) for v in values) if values else result_text(output.get("text")),
            {
                "tool": str_or_none(tool.get("name")),
                "call_id": str_or_none(tool.get("call_id")),
                "is_error": output.get("is_error") is True,
            },
        )
    else:
        unknown.saw("message:" + ",".join(sorted(message)[:3]) if message else "message:empty")


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        cols = schema["conversations"]
        have = {c: c in cols for c in ("title", "created_at", "updated_at")}
        select = ", ".join(
            [
                "conversation_id AS id",
                "rowid AS rid",
                *(f"{c} AS {c}" if ok else f"NULL AS {c}" for c, ok in have.items()),
            ]
        )
        parents = children(conn)
        # A conversation's signature: its context's length, and the parent that started it (a subagent's
        # prompts are its parent's, which a later task call may be the first to say).
        sigs = {
            cid: [size, parents.get(cid)]
            for cid, size in conn.execute(
                "SELECT conversation_id, length(context) FROM conversations WHERE context IS NOT NULL"
            )
        }
        rows = conn.execute(f"SELECT {select} FROM conversations WHERE context IS NOT NULL ORDER BY rowid").fetchall()
        yield from changed_sessions(
            PROVIDER, rows, sigs, signatures, lambda row: _session(conn, row, parents, unknown, source.path)
        )
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _session(
    conn: sqlite3.Connection, row: sqlite3.Row, parents: dict[str, str], unknown: UnknownRecords, path: str
) -> Iterator[Item]:
    native = row["id"]
    sid = session_id(PROVIDER, native)
    # By rowid: an id that is not valid UTF-8 reads back replaced, and would find no row.
    found = conn.execute("SELECT context FROM conversations WHERE rowid = ?", (row["rid"],)).fetchone()
    doc = json_column(found[0]) if found is not None else None
    if not isinstance(doc, dict):
        unknown.saw("context:not-json")
        return
    parent = parents.get(native)
    person: Origin = "provider" if parent else "human"
    facts: dict[str, Any] = {}
    drafts: list[Draft] = []
    for item in list_or_empty(doc.get("messages")):
        drafts.extend(message_drafts(item, person, unknown, facts))
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=str_or_none(row["title"]),
        cwd=facts.get("cwd"),
        model=facts.get("model"),
        started=parse_ts(row["created_at"]),
        updated=parse_ts(row["updated_at"]) or parse_ts(row["created_at"]),
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=None,
        source=path,
    )
    yield from number(EventCounter(sid, 0), drafts)


class ForgeAdapter:
    """Forge's one SQLite database of conversations."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [db_path(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return sqlite_source(PROVIDER, db_path(env), named=bool(env.get("VOYAGER_FORGE_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = ForgeAdapter()


def probe(path: str) -> str:
    """``conversations`` (the documented schema), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "conversations")
