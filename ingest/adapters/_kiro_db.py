"""kiro-cli's SQLite store: ``data.sqlite3``, table ``conversations_v2`` (one JSON conversation a row).

A row is ``(key = the directory, conversation_id, value = JSON, created_at ms, updated_at
ms)`` (AV, whose sample mirrors kiro-cli's serde types). ``value`` holds ``history``: turns
``{user, assistant, request_metadata}`` (older serde wrote ``[user, assistant]`` pairs);
``user.content`` is one of ``Prompt {prompt}``, ``ToolUseResults {tool_use_results}`` or
``CancelledToolUses {prompt, tool_use_results}``; ``assistant`` is ``Response {content}``
or ``ToolUse {content, tool_uses: [{id, name, args}]}``. The same row also keeps a
``transcript``: the conversation again as display lines (``> prompt``, the reply). That is
a copy and is never indexed; so is a conversation whose id the CLI also keeps as a JSONL
session (``~/.kiro/sessions/cli/<id>.jsonl``), which is read from there.

The database is also kiro-cli's auth and settings store, so it changes when nothing was
said: each conversation's ``(updated_at, length(value))`` is its signature in the Cursor,
an untouched one comes back ``Unchanged`` and only changed rows' JSON is decoded.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    epoch,
    list_or_empty,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters._kiro_cli import PROVIDER, SHELL_TOOLS, failed, tool_result
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.ingest.sqlite import SessionSignatures
from voyager_sessions.core.model import Session, session_id

TABLE = "conversations_v2"
_COLUMNS = frozenset({"key", "conversation_id", "value"})
_decode = decode_json


def has_conversations(schema: dict[str, frozenset[str]]) -> bool:
    return TABLE in schema and _COLUMNS <= schema[TABLE]


def read_db(source: Source, cursor: Cursor | None, elsewhere: frozenset[str] = frozenset()) -> Iterator[Item]:
    """Every conversation in ``conversations_v2``; with the last read's signatures, untouched ones as Unchanged.

    ``elsewhere``: conversation ids the CLI also keeps as JSONL sessions. Those are read there
    (a CLI that moved to JSONL may carry its older conversations over), so not twice.
    """

    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        # No conversations_v2: a kiro-cli that has not chatted yet (the file is its auth store too).
        if has_conversations(schema):
            yield from _conversations(conn, schema[TABLE], source.path, signatures, elsewhere)

    return read_database(source.path, "kiro-cli", {}, cursor, body)  # one snapshot while kiro-cli writes


def _conversations(
    conn: sqlite3.Connection, cols: frozenset[str], path: str, signatures: SessionSignatures, elsewhere: frozenset[str]
) -> Iterator[Item]:
    created = "created_at" if "created_at" in cols else "NULL"
    updated = "updated_at" if "updated_at" in cols else "NULL"
    rows = conn.execute(
        f"SELECT rowid, key, conversation_id, {created}, {updated}, length(value) FROM {TABLE} "
        f"ORDER BY {created}, conversation_id"
    ).fetchall()
    unknown = UnknownRecords("kiro-cli")
    for rowid, key, native, created_at, updated_at, size in rows:
        if not isinstance(native, str) or not native:
            continue
        if native in elsewhere:
            continue  # a copy, like the transcript: never a second session (and no notice: nothing was lost)
        sig = [updated_at, size, key]
        if signatures.same(native, sig):
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        (value,) = conn.execute(f"SELECT value FROM {TABLE} WHERE rowid = ?", (rowid,)).fetchone()
        try:
            doc = _decode(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value)
        except (msgspec.DecodeError, TypeError, RecursionError, UnicodeEncodeError) as exc:
            yield Notice(source=path, where=f"conversation {native}", reason=f"malformed JSON, row skipped: {exc}")
            continue
        if not isinstance(doc, dict):
            yield Notice(source=path, where=f"conversation {native}", reason="not a JSON object, row skipped")
            continue
        signatures.record(native, sig)
        yield from _conversation(doc, native, key, created_at, updated_at, path, unknown)
    if (notice := unknown.notice(path)) is not None:
        yield notice


def _conversation(
    doc: dict[str, Any], native: str, key: Any, created_at: Any, updated_at: Any, path: str, unknown: UnknownRecords
) -> Iterator[Item]:
    sid = session_id(PROVIDER, native)
    turns = list_or_empty(doc.get("history"))
    cwd = str_or_none(key)
    if cwd is None:
        cwd = next((d for t in turns if (d := _cwd(_user(t)))), None)
    info = as_dict(doc.get("model_info"))
    model = str_or_none(info.get("model_id")) or str_or_none(doc.get("model"))
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        cwd=cwd,
        model=model,
        started=epoch(created_at),
        updated=epoch(updated_at),
        source=path,
    )
    yield from number(EventCounter(sid, 0), _turns(turns, doc, unknown))


def _user(turn: Any) -> dict[str, Any]:
    value = turn.get("user") if isinstance(turn, dict) else (turn[0] if isinstance(turn, list) and turn else None)
    return value if isinstance(value, dict) else {}


def _assistant(turn: Any) -> dict[str, Any]:
    value = (
        turn.get("assistant")
        if isinstance(turn, dict)
        else (turn[1] if isinstance(turn, list) and len(turn) > 1 else None)
    )
    return value if isinstance(value, dict) else {}


def _cwd(user: dict[str, Any]) -> str | None:
    env = as_dict(user.get("env_context"))
    state = as_dict(env.get("env_state"))
    return str_or_none(state.get("current_working_directory"))


def _turns(turns: list[Any], doc: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    context: str | None = None
    for turn in turns:
        if not isinstance(turn, (dict, list)):
            unknown.saw(f"turn:{type(turn).__name__}")
            continue
        user = _user(turn)
        ts = epoch(user.get("timestamp"))
        extra = str_or_none(user.get("additional_context"))
        if extra and extra != context:
            # Context kiro-cli adds to a prompt (hooks, steering): injected, and repeated turn after
            # turn, so only a change is indexed.
            context = extra
            yield ("meta", "provider", extra, {"ts": ts})
        yield from _user_content(user.get("content"), ts, unknown)
        meta = turn.get("request_metadata") if isinstance(turn, dict) else None
        end = epoch(meta.get("stream_end_timestamp_ms")) if isinstance(meta, dict) else None
        yield from _assistant_content(_assistant(turn), end or ts, unknown)
    summary = doc.get("latest_summary")
    if isinstance(summary, list) and summary:
        summary = summary[0]
    if isinstance(summary, str):
        yield ("meta", "provider", summary, {})


def _user_content(content: Any, ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    if not isinstance(content, dict) or not content:
        return
    for variant, body in content.items():
        body = body if isinstance(body, dict) else {}
        if variant in ("ToolUseResults", "CancelledToolUses"):
            for result in list_or_empty(body.get("tool_use_results")):
                if isinstance(result, dict):
                    text, code = tool_result(result.get("content"))
                    yield (
                        "tool_result",
                        "tool",
                        text,
                        {
                            "ts": ts,
                            "call_id": str_or_none(result.get("tool_use_id")),
                            "exit_code": code,
                            "is_error": failed(result.get("status")),
                        },
                    )
        if variant in ("Prompt", "CancelledToolUses"):
            yield ("user", "human", body.get("prompt"), {"ts": ts})
        elif variant != "ToolUseResults":
            unknown.saw(f"user:{variant}")


def _assistant_content(assistant: dict[str, Any], ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    for variant, body in assistant.items():
        body = body if isinstance(body, dict) else {}
        if variant not in ("Response", "ToolUse"):
            unknown.saw(f"assistant:{variant}")
            continue
        yield ("assistant", "agent", body.get("content"), {"ts": ts})
        for use in list_or_empty(body.get("tool_uses")) if variant == "ToolUse" else ():
            if isinstance(use, dict):
                name = str_or_none(use.get("name")) or str_or_none(use.get("orig_name"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, use.get("args"), SHELL_TOOLS),
                    {"ts": ts, "tool": name, "call_id": str_or_none(use.get("id"))},
                )
