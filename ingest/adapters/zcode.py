"""The ZCode adapter: ``~/.zcode/cli/db/db.sqlite`` (``session``, ``message``, ``part``, ``model_usage``), read-only.

ZCode is documented, not observed (VY, AV); the only sample is agentsview's test schema:

* ``session(id, project_id, workspace_id, directory, title, time_created, time_updated)``
* ``message(id, session_id, time_created, data)``: ``data`` JSON with ``role`` and the model
  (``model.modelID`` or ``modelID``)
* ``part(id, message_id, session_id, time_created, data)``: ``data`` JSON of one content block,
  ``text``, ``thinking``/``reasoning``, ``tool_use`` (``id``, ``name``, ``input``),
  ``tool_result`` (``tool_use_id``, ``content``), or an OpenCode-style ``tool`` part with
  ``state.input``/``state.output``
* ``model_usage(session_id, model_id, input_tokens, output_tokens, cache_*_tokens, …)``: tokens

A person's prompt is a ``text`` part of a ``user`` message; the tool results ZCode files
under ``user`` messages are results, never prompts. An exit code is kept where a part
states one (``exit_code``/``exitCode``, or ``metadata.exit``), never guessed. Times are
ISO text in the sample and may be epoch milliseconds: both are read. Parts are ordered by
``(time_created, id)`` (a message's parts do not sort by id alone).

One database holds every session, so the Cursor keeps a signature per session (its row,
and the count, newest rowid and total size of its message, part and usage rows): an
untouched session comes back ``Unchanged``, a changed one is read again whole. All access
goes through :func:`~voyager_sessions.ingest.sqlite.connect_readonly`. ZCode is a desktop
app: there is no resume command.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    changed_sessions,
    epoch,
    int_or_none,
    json_column,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, epoch_text, exit_code, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.sqlite import (
    SessionSignatures,
    missing_tables,
    read_schema,
    sqlite_source,
)
from voyager_sessions.core.model import Session, session_id

PROVIDER = "zcode"
_REQUIRED = {"session": frozenset({"id"}), "message": frozenset({"id", "session_id", "data"})}
_PART = frozenset({"id", "message_id", "data"})
SHELL_TOOLS = frozenset({"bash", "shell", "run_command", "execute_command", "terminal"})


def db_path(env: Mapping[str, str]) -> Path:
    home = manifest.agent_home("zcode", env)
    assert home is not None
    return home / "cli" / "db" / "db.sqlite"


def _ts(value: Any) -> float | None:
    return epoch(epoch_text(value))


class _Db:
    """One open ZCode database: which optional tables and columns it has, and the queries reading needs."""

    def __init__(self, conn: sqlite3.Connection, schema: Mapping[str, frozenset[str]], path: str) -> None:
        self.conn = conn
        self.schema = schema
        self.path = path
        self.parts = "part" in schema and _PART <= schema["part"]
        self.usage = "model_usage" in schema and "session_id" in schema["model_usage"]
        self.unknown = UnknownRecords("ZCode")

    def col(self, table: str, name: str, alias: str = "") -> str:
        return f"{alias}{name}" if name in self.schema.get(table, frozenset()) else "NULL"

    def signatures(self) -> dict[str, list[Any]]:
        """session id -> [messages: count, max rowid, total size; parts: the same; usage rows], three grouped queries."""
        out: dict[str, list[Any]] = {}
        for sid, n, top, size in self.conn.execute(
            "SELECT session_id, count(*), max(rowid), total(length(data)) FROM message GROUP BY session_id"
        ):
            out[sid] = [n, top, size, 0, None, 0, 0]
        if self.parts:
            owner = "p.session_id" if "session_id" in self.schema["part"] else "m.session_id"
            join = "" if owner.startswith("p.") else " JOIN message m ON p.message_id = m.id"
            for sid, n, top, size in self.conn.execute(
                f"SELECT {owner}, count(*), max(p.rowid), total(length(p.data)) FROM part p{join} GROUP BY {owner}"
            ):
                out.setdefault(sid, [0, None, 0, 0, None, 0, 0])[3:6] = [n, top, size]
        if self.usage:
            for sid, n in self.conn.execute("SELECT session_id, count(*) FROM model_usage GROUP BY session_id"):
                out.setdefault(sid, [0, None, 0, 0, None, 0, 0])[6] = n
        return out

    def tokens(self, native: str) -> tuple[int | None, int | None, str | None]:
        """(tokens in, tokens out, the last model) from ``model_usage``."""
        if not self.usage:
            return None, None, None
        cols = self.schema["model_usage"]
        parts_in = [c for c in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens") if c in cols]
        sum_in = " + ".join(f"coalesce({c}, 0)" for c in parts_in) or "NULL"
        out_col = "output_tokens" if "output_tokens" in cols else "NULL"
        row = self.conn.execute(
            f"SELECT sum({sum_in}), sum({out_col}) FROM model_usage WHERE session_id = ?", (native,)
        ).fetchone()
        model = None
        if "model_id" in cols:
            order = self.col("model_usage", "started_at")
            found = self.conn.execute(
                f"SELECT model_id FROM model_usage WHERE session_id = ? AND model_id IS NOT NULL "
                f"ORDER BY {order} DESC, rowid DESC LIMIT 1",
                (native,),
            ).fetchone()
            model = str_or_none(found[0]) if found else None
        return int_or_none(row[0]), int_or_none(row[1]), model

    def rows(self, native: str) -> Iterator[tuple[Any, Any, Any, Any, Any]]:
        """(message id, message time, message data, part time, part data) in message then part order."""
        m_time = self.col("message", "time_created", "m.")
        if self.parts and "session_id" in self.schema["part"]:
            # Two lookups by session instead of a join: without an index on part.message_id
            # (agentsview's schema has none) SQLite would build one for every session read.
            p_time = self.col("part", "time_created")
            parts: dict[Any, list[tuple[Any, Any, Any]]] = {}
            for pid, mid, p_ts, data in self.conn.execute(
                f"SELECT id, message_id, {p_time}, data FROM part WHERE session_id = ?", (native,)
            ):
                parts.setdefault(mid, []).append((p_ts if p_ts is not None else "", pid, data))
            for mid, ts, data in self.conn.execute(
                f"SELECT m.id, {m_time}, m.data FROM message m WHERE m.session_id = ? "
                f"ORDER BY coalesce({m_time}, ''), m.rowid",
                (native,),
            ):
                own = parts.pop(mid, None)
                if not own:
                    yield mid, ts, data, None, None
                    continue
                for p_ts, _pid, p_data in sorted(own, key=lambda t: (str(t[0]), str(t[1]))):
                    yield mid, ts, data, p_ts or None, p_data
        elif self.parts:
            p_time = self.col("part", "time_created", "p.")
            yield from self.conn.execute(
                f"SELECT m.id, {m_time}, m.data, {p_time}, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id "
                f"WHERE m.session_id = ? ORDER BY coalesce({m_time}, ''), m.rowid, coalesce({p_time}, ''), p.id",
                (native,),
            )
        else:
            yield from self.conn.execute(
                f"SELECT m.id, {m_time}, m.data, NULL, NULL FROM message m WHERE m.session_id = ? "
                f"ORDER BY coalesce({m_time}, ''), m.rowid",
                (native,),
            )


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        db = _Db(conn, schema, source.path)
        yield from _sessions(db, signatures)
        if (notice := db.unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, "ZCode", _REQUIRED, cursor, body)  # one snapshot while ZCode writes


def _sessions(db: _Db, signatures: SessionSignatures) -> Iterator[Item]:
    sigs = db.signatures()
    order = db.col("session", "time_created")
    rows = db.conn.execute(f"SELECT * FROM session ORDER BY coalesce({order}, ''), id").fetchall()
    yield from changed_sessions(PROVIDER, rows, sigs, signatures, lambda row: _session(db, row))


def _session(db: _Db, row: sqlite3.Row) -> Iterator[Item]:
    native = row["id"]
    keys = row.keys()
    sid = session_id(PROVIDER, native)
    tokens_in, tokens_out, model = db.tokens(native)
    parent = str_or_none(row["parent_id"]) if "parent_id" in keys else None
    drafts: list[Draft] = []
    message_model = None
    for draft_or_model in _events(db, native, subagent=parent is not None):
        if isinstance(draft_or_model, str):
            message_model = draft_or_model
        else:
            drafts.append(draft_or_model)
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=str_or_none(row["title"]) if "title" in keys else None,
        cwd=str_or_none(row["directory"]) if "directory" in keys else None,
        model=model or message_model,
        started=_ts(row["time_created"]) if "time_created" in keys else None,
        updated=_ts(row["time_updated"]) if "time_updated" in keys else None,
        parent=session_id(PROVIDER, parent) if parent else None,
        source=db.path,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
    )
    yield from number(EventCounter(sid, 0), drafts)


def _events(db: _Db, native: str, *, subagent: bool) -> Iterator[Draft | str]:
    """The drafts of one session's messages and parts (and, as plain strings, the models its messages name)."""
    current: Any = object()
    role = ""
    m_ts: float | None = None
    for mid, m_time, m_data, p_time, p_data in db.rows(native):
        if mid != current:
            current = mid
            data = json_column(m_data)
            if not isinstance(data, dict):
                db.unknown.saw("message:not-json")
                role = ""
                continue
            role = said if isinstance(said := data.get("role"), str) else ""
            m_ts = _ts(m_time)
            model = data.get("model")
            name = str_or_none(model.get("modelID")) if isinstance(model, dict) else str_or_none(model)
            if name := name or str_or_none(data.get("modelID")):
                yield name
            if p_data is None and isinstance(data.get("content"), str):
                # A message kept its text inline, without parts.
                yield from _block(db, role, {"type": "text", "text": data["content"]}, m_ts, subagent)
        if p_data is None or not role:
            continue
        part = json_column(p_data)
        if not isinstance(part, dict):
            db.unknown.saw("part:not-json")
            continue
        yield from _block(db, role, part, _ts(p_time) or m_ts, subagent)


def _block(db: _Db, role: str, part: dict[str, Any], ts: float | None, subagent: bool) -> Iterator[Draft]:
    ptype = part.get("type")
    if ptype == "text":
        text = part.get("text") if isinstance(part.get("text"), str) else part.get("content")
        if role == "user":
            yield ("user", "provider" if subagent else "human", text, {"ts": ts})
        elif role in ("assistant", "model"):
            yield ("assistant", "agent", text, {"ts": ts})
        elif role == "system":
            yield ("meta", "provider", text, {"ts": ts})
        else:
            db.unknown.saw(f"role:{role}")
    elif ptype in ("thinking", "reasoning"):
        yield ("reasoning", "agent", part.get("thinking") or part.get("text"), {"ts": ts})
    elif ptype in ("tool_use", "tool"):
        yield from _tool(part, ts)
    elif ptype == "tool_result":
        text = _content(part.get("content") if "content" in part else part.get("output"))
        meta = as_dict(part.get("metadata"))
        code = exit_code(part.get("exit_code", part.get("exitCode", meta.get("exit", meta.get("exit_code")))))
        yield (
            "tool_result",
            "tool",
            text,
            {
                "ts": ts,
                "call_id": str_or_none(part.get("tool_use_id")) or str_or_none(part.get("toolUseID")),
                "exit_code": code,
                "is_error": part.get("is_error") is True or part.get("isError") is True,
            },
        )
    elif ptype not in ("image", "step-start", "step-finish"):
        db.unknown.saw(f"part:{ptype}")


def _tool(part: dict[str, Any], ts: float | None) -> Iterator[Draft]:
    state = as_dict(part.get("state"))
    name = str_or_none(part.get("name")) or str_or_none(part.get("tool")) or str_or_none(part.get("toolName"))
    call_id = str_or_none(part.get("id")) or str_or_none(part.get("callID")) or str_or_none(part.get("tool_use_id"))
    args = part.get("input") if part.get("input") not in (None, {}) else state.get("input")
    yield ("tool_call", "agent", tool_call_text(name, args, SHELL_TOOLS), {"ts": ts, "tool": name, "call_id": call_id})
    if state.get("status") in ("completed", "error"):
        # An OpenCode-style tool part carries its own result.
        meta = as_dict(state.get("metadata"))
        text = _content(state.get("output")) if state.get("status") == "completed" else _content(state.get("error"))
        yield (
            "tool_result",
            "tool",
            text,
            {
                "ts": ts,
                "tool": name,
                "call_id": call_id,
                "exit_code": exit_code(meta.get("exit", meta.get("exit_code"))),
                "is_error": state.get("status") == "error",
            },
        )


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else (b if isinstance(b, str) else "")
            for b in value
        ).strip("\n")
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return "" if value is None else msgspec.json.encode(value).decode("utf-8")


class ZCodeAdapter:
    """ZCode's one SQLite database of sessions."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [db_path(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from sqlite_source(PROVIDER, db_path(env), named=bool(env.get("VOYAGER_ZCODE_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = ZCodeAdapter()


def probe(path: str | os.PathLike[str]) -> str:
    """``session+message+part`` (the documented schema), ``session+message`` (no part table), or a problem."""
    schema = read_schema(path)
    if schema is None:
        return "unreadable"
    if missing_tables(schema, _REQUIRED):
        return "unknown-schema"
    return "session+message+part" if "part" in schema and _PART <= schema["part"] else "session+message"
