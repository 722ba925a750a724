"""The Omnigent adapter: ``~/.omnigent/chat.db`` (observed, 0.19.1), read-only.

Omnigent is a meta-harness: it runs other agents (Claude Code, Codex, …) or its own harness through a
local server, and keeps its own transcript of every conversation in one SQLite database:

* ``conversations(id BLOB, created_at, updated_at (epoch s), title, parent_conversation_id, archived,
  session_overrides JSON)``: one row a conversation; ids are 16-byte UUIDs (older builds: text);
  ``title`` is the first prompt cut short (Omnigent's own), ``session_overrides.reported_model`` the model.
* ``conversation_items(conversation_id, position, created_at, data JSON, search_text, type, status)``:
  the items in order, Responses-API shapes in ``data``: messages ``{"role", "content": [{"type":
  "input_text" | "output_text", "text"}]}``, ``function_call`` (``name``, ``arguments``, ``call_id``),
  ``function_call_output`` (``call_id``, ``output``) and ``reasoning`` (``summary``/``content`` texts).
  ``search_text`` repeats the text for Omnigent's own search and is not read.
* ``omnigent_conversation_metadata(id, workspace, git_branch, …)``: the working directory.

A user message is the person's when ``user_authored`` is not false. One database holds every
conversation, so the Cursor keeps a signature per conversation (its row and its items' count, newest
rowid and total size): an untouched one comes back ``Unchanged``. Resume: ``omnigent resume <id>``
in the conversation's directory. The same conversation may also be in the files of the agent
Omnigent drove (its own adapter reads those).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    epoch,
    json_column,
    list_or_empty,
    read_database,
    arg,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, probe_store, sqlite_source
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "omnigent"
LABEL = "Omnigent"
DB_NAME = "chat.db"
_REQUIRED = {
    "conversations": frozenset({"id", "created_at", "updated_at"}),
    "conversation_items": frozenset({"conversation_id", "position", "data"}),
}
SHELL_TOOLS = frozenset({"shell", "bash", "exec", "run_command", "local_shell"})


def db_path(env: Mapping[str, str]) -> Path:
    base = manifest.agent_home(PROVIDER, env)
    assert base is not None
    return base / DB_NAME


def native_of(value: Any) -> str | None:
    """A conversation id as text: a 16-byte UUID as its canonical form, a text id as it is."""
    if isinstance(value, (bytes, bytearray)) and len(value) == 16:
        return str(uuid.UUID(bytes=bytes(value)))
    return str_or_none(value)


def resume_command(cwd: str | None, native: str) -> str | None:
    return resume_in(cwd, "omnigent", "resume", arg(native))


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [as_dict(c).get("text") for c in list_or_empty(content)]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def item_drafts(data: dict[str, Any], ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    """The drafts of one conversation item (a Responses-API item)."""
    kind = data.get("type")
    role = data.get("role")
    if kind in (None, "message") and role is not None:
        text = _texts(data.get("content"))
        if role == "user":
            human = data.get("user_authored") is not False
            yield ("user", "human", text, {"ts": ts}) if human else ("meta", "provider", text, {"ts": ts})
        elif role == "assistant":
            yield ("assistant", "agent", text, {"ts": ts})
        elif role in ("system", "developer"):
            yield ("meta", "provider", text, {"ts": ts})
        else:
            unknown.saw(f"role:{role}")
    elif kind == "reasoning":
        text = _texts(data.get("summary")) or _texts(data.get("content"))
        yield ("reasoning", "agent", text, {"ts": ts})
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        name = str_or_none(data.get("name")) or ("local_shell" if kind == "local_shell_call" else None)
        args = data.get("arguments", data.get("input", data.get("action")))
        yield (
            "tool_call",
            "agent",
            tool_call_text(name, args, SHELL_TOOLS),
            {"ts": ts, "tool": name, "call_id": str_or_none(data.get("call_id"))},
        )
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        output = data.get("output")
        text = output if isinstance(output, str) else _texts(output) or tool_call_text(None, output)
        yield ("tool_result", "tool", text, {"ts": ts, "call_id": str_or_none(data.get("call_id"))})
    else:
        unknown.saw(f"item:{kind}")


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        meta: dict[str, tuple[str | None, str | None]] = {}
        if {"id", "workspace"} <= schema.get("omnigent_conversation_metadata", frozenset()):
            branch = "git_branch" in schema["omnigent_conversation_metadata"]
            for row in conn.execute(
                f"SELECT id, workspace, {'git_branch' if branch else 'NULL'} FROM omnigent_conversation_metadata"
            ):
                if (native := native_of(row[0])) is not None:
                    meta[native] = (str_or_none(row[1]), str_or_none(row[2]))
        sigs: dict[str, list[Any]] = {}
        for cid, n, top, size in conn.execute(
            "SELECT conversation_id, count(*), max(rowid), total(length(data)) FROM conversation_items "
            "GROUP BY conversation_id"
        ):
            if (native := native_of(cid)) is not None:
                sigs[native] = [n, top, size]
        for row in conn.execute("SELECT * FROM conversations ORDER BY rowid"):
            native = native_of(row["id"])
            if native is None or native not in sigs:
                continue  # a conversation with no item has nothing to find
            sig = [digest(*row), *sigs[native]]
            if signatures.same(native, sig):
                yield Unchanged(session=session_id(PROVIDER, native))
                continue
            signatures.record(native, sig)
            yield from _conversation(conn, row, native, meta, unknown, source.path)
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _conversation(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    native: str,
    meta: dict[str, tuple[str | None, str | None]],
    unknown: UnknownRecords,
    path: str,
) -> Iterator[Item]:
    sid = session_id(PROVIDER, native)
    keys = row.keys()
    drafts: list[Draft] = []
    for data, created in conn.execute(
        "SELECT data, created_at FROM conversation_items WHERE conversation_id = ? ORDER BY position, rowid",
        (row["id"],),
    ):
        item = json_column(data)
        if not isinstance(item, dict):
            unknown.saw("item:not-json")
            continue
        drafts.extend(item_drafts(item, epoch(created), unknown))
    overrides = as_dict(json_column(row["session_overrides"])) if "session_overrides" in keys else {}
    cwd, branch = meta.get(native, (None, None))
    parent = native_of(row["parent_conversation_id"]) if "parent_conversation_id" in keys else None
    title = str_or_none(row["title"]) if "title" in keys else None
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source="prompt" if title else None,
        cwd=cwd,
        git_branch=branch,
        model=str_or_none(overrides.get("reported_model")),
        started=epoch(row["created_at"]),
        updated=epoch(row["updated_at"]),
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=resume_command(cwd, native),
        source=path,
    )
    yield from number(EventCounter(sid, 0), drafts)


class OmnigentAdapter:
    """Omnigent's one SQLite database of conversations."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [db_path(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from sqlite_source(PROVIDER, db_path(env), named=bool(env.get("VOYAGER_OMNIGENT_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = OmnigentAdapter()


def probe(path: str) -> str:
    """``conversations+conversation_items`` (the observed schema), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "conversations+conversation_items")
