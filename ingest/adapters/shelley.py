"""The Shelley adapter: exe.dev's agent, ``~/.config/shelley/shelley.db`` (documented, not yet observed), read-only.

Shelley keeps every conversation in one SQLite database, as agentsview's ``shelley.go`` reads it:

* ``conversations(conversation_id, slug, user_initiated, created_at, updated_at, cwd, archived,
  parent_conversation_id, model, …)``: the slug is its title; a conversation with a parent that the
  person did not start (``user_initiated`` false) is a subagent's, whose prompts its parent wrote;
* ``messages(message_id, conversation_id, sequence_id, type, llm_data, user_data, usage_data,
  display_data, created_at, generation, excluded_from_context)``, in ``sequence_id`` order;
  ``type`` is ``user``, ``agent`` or ``tool`` (anything else is Shelley's own: meta).

``llm_data`` is the message as Shelley's Go code serialized it: PascalCase keys and **integer**
content types, ``{"Role", "Content": [{"Type", "ID", "Text", "Thinking", "ToolName", "ToolInput",
"ToolUseID", "ToolError", "ToolResult": [contents], "Title", "URL"}]}`` with ``Type`` 2 text, 3
thinking, 4 redacted thinking, 5 tool use, 6 tool result, 7 server tool use, 8 web search result
(a tool result), 9 one search hit. A message without ``llm_data`` text keeps it in ``user_data``.
``usage_data`` holds token counts (input with the cache's, and output). One database holds every
conversation: the Cursor keeps a signature per conversation, an untouched one is ``Unchanged``.
Not run here; no resume command is documented (Shelley is a web UI on an exe.dev VM).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    changed_sessions,
    int_or_none,
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

PROVIDER = "shelley"
LABEL = "Shelley"
_REQUIRED = {
    "conversations": frozenset({"conversation_id"}),
    "messages": frozenset({"conversation_id", "sequence_id", "type", "llm_data"}),
}
#: ``llm_data`` content types (Shelley's Go enum; the values start at 2).
TEXT, THINKING, REDACTED, TOOL_USE, TOOL_RESULT, SERVER_TOOL_USE, SEARCH_RESULTS, SEARCH_HIT = 2, 3, 4, 5, 6, 7, 8, 9
#: Shelley's shell tool.
SHELL_TOOLS = frozenset({"bash"})


def db_path(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_SHELLEY_HOME`` or ``~/.config/shelley`` (where peers find it), with ``shelley.db`` in it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "shelley.db"


def result_text(contents: Any, depth: int = 0) -> str:
    """A tool result's text: its contents' text, nested results, search hits' titles and addresses."""
    parts: list[str] = []
    for c in list_or_empty(contents):
        c = as_dict(c)
        if isinstance(c.get("Text"), str) and c["Text"]:
            parts.append(c["Text"])
        elif c.get("ToolResult") and depth < 8:
            parts.append(result_text(c["ToolResult"], depth + 1))
        elif c.get("Title") or c.get("URL"):
            parts.append(" ".join(str(c.get(k) or "") for k in ("Title", "URL")).strip())
    return "\n".join(p for p in parts if p)


def user_data_text(value: Any) -> str | None:
    """The text Shelley kept in ``user_data`` (a string, or an object's ``text``/``content``/``prompt``/``message``)."""
    data = json_column(value)
    if isinstance(data, str):
        return data
    data = as_dict(data)
    return next((data[k] for k in ("text", "content", "prompt", "message") if isinstance(data.get(k), str)), None)


def message_drafts(row: sqlite3.Row, person: Origin, unknown: UnknownRecords) -> Iterator[Draft]:
    mtype = row["type"]
    ts = parse_ts(row["created_at"])
    llm = json_column(row["llm_data"])
    if row["llm_data"] is not None and not isinstance(llm, dict):
        unknown.saw("llm_data:not-json")
    said = False
    for content in list_or_empty(as_dict(llm).get("Content")):
        content = as_dict(content)
        ctype = int_or_none(content.get("Type"))
        if ctype == TEXT:
            said = said or bool(content.get("Text"))
            if mtype == "agent":
                yield ("assistant", "agent", content.get("Text"), {"ts": ts})
            elif mtype == "user":
                yield ("user", person, content.get("Text"), {"ts": ts})
            else:
                yield ("meta", "provider", content.get("Text"), {"ts": ts})
        elif ctype == THINKING:
            yield ("reasoning", "agent", content.get("Thinking"), {"ts": ts})
        elif ctype in (TOOL_USE, SERVER_TOOL_USE):
            name = str_or_none(content.get("ToolName"))
            said = True
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, content.get("ToolInput"), SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(content.get("ID"))},
            )
        elif ctype in (TOOL_RESULT, SEARCH_RESULTS):
            said = True
            yield (
                "tool_result",
                "tool",
                result_text(content.get("ToolResult")),
                {
                    "ts": ts,
                    "call_id": str_or_none(content.get("ToolUseID")),
                    "is_error": content.get("ToolError") is True,
                },
            )
        elif ctype == SEARCH_HIT:  # a search hit the model quoted in its message: part of what it said
            hit = " ".join(str(content.get(k) or "") for k in ("Title", "URL")).strip()
            yield (
                "assistant" if mtype == "agent" else "meta",
                "agent" if mtype == "agent" else "provider",
                hit,
                {"ts": ts},
            )
        elif ctype != REDACTED:
            unknown.saw(f"content type {ctype}" if ctype is not None else "content without a type")
    if not said and "user_data" in row.keys():
        text = user_data_text(row["user_data"])
        if mtype == "user":
            yield ("user", person, text, {"ts": ts})
        else:
            yield ("meta", "provider", text, {"ts": ts})


def _tokens(value: Any) -> tuple[int, int]:
    usage = as_dict(json_column(value))
    total_in = sum(
        int_or_none(usage.get(k)) or 0
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return total_in, int_or_none(usage.get("output_tokens")) or 0


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        sigs = {
            cid: [n, top, size]
            for cid, n, top, size in conn.execute(
                "SELECT conversation_id, count(*), max(rowid), total(length(llm_data)) FROM messages GROUP BY conversation_id"
            )
        }
        cols = schema["conversations"]
        wanted = ("slug", "user_initiated", "created_at", "updated_at", "cwd", "parent_conversation_id", "model")
        select = ", ".join(["conversation_id AS id", *(c if c in cols else f"NULL AS {c}" for c in wanted)])
        rows = conn.execute(f"SELECT {select} FROM conversations ORDER BY rowid").fetchall()
        msg_cols = schema["messages"]
        extra = ", ".join(c if c in msg_cols else f"NULL AS {c}" for c in ("user_data", "usage_data", "created_at"))
        yield from changed_sessions(
            PROVIDER, rows, sigs, signatures, lambda row: _session(conn, row, extra, unknown, source.path)
        )
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _session(
    conn: sqlite3.Connection, row: sqlite3.Row, extra: str, unknown: UnknownRecords, path: str
) -> Iterator[Item]:
    native = row["id"]
    sid = session_id(PROVIDER, native)
    parent = str_or_none(row["parent_conversation_id"])
    subagent = parent is not None and row["user_initiated"] in (0, False, "0", "false")
    person: Origin = "provider" if subagent else "human"
    drafts: list[Draft] = []
    tokens_in = tokens_out = 0
    for message in conn.execute(
        f"SELECT type, llm_data, {extra} FROM messages WHERE conversation_id = ? ORDER BY sequence_id, rowid", (native,)
    ):
        drafts.extend(message_drafts(message, person, unknown))
        more_in, more_out = _tokens(message["usage_data"])
        tokens_in, tokens_out = tokens_in + more_in, tokens_out + more_out
    slug = str_or_none(row["slug"])
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=slug,
        title_source="agent" if slug else None,
        cwd=str_or_none(row["cwd"]),
        model=str_or_none(row["model"]),
        started=parse_ts(row["created_at"]),
        updated=parse_ts(row["updated_at"]),
        parent=session_id(PROVIDER, parent) if parent and parent != native else None,
        resume=None,
        source=path,
        tokens_in=tokens_in or None,
        tokens_out=tokens_out or None,
    )
    yield from number(EventCounter(sid, 0), drafts)


class ShelleyAdapter:
    """Shelley's one SQLite database of conversations."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [db_path(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return sqlite_source(PROVIDER, db_path(env), named=bool(env.get("VOYAGER_SHELLEY_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = ShelleyAdapter()


def probe(path: str) -> str:
    """``conversations+messages`` (the documented schema), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "conversations+messages")
