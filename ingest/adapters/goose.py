"""The Goose adapter (``goose``, documented): ``sessions.db`` (v1.20+) and legacy ``*.jsonl`` sessions.

Where: the sessions dir, ``$GOOSE_PATH_ROOT/data/sessions`` when Goose's own root variable is
set, else ``$XDG_DATA_HOME/goose/sessions`` (default ``~/.local/share/goose/sessions``; Goose
uses the XDG layout on macOS too), holding ``sessions.db`` and, from before 1.20, one
``<id>.jsonl`` a session; older installs kept those in ``~/.goose/sessions``. A legacy file
whose id ``sessions.db`` also holds was migrated by Goose: the database copy is the session,
the file is not read again.

``sessions.db`` (schema_version 15 in agentsview's test; FAD, AV, DJ agree on the columns
read here): ``sessions(id, name, description, user_set_name, session_type, working_dir,
created_at, updated_at, provider_name, model_config_json, accumulated_*_tokens,
parent_session_id)`` and ``messages(id, session_id, role, content_json, created_timestamp (s),
metadata_json)``. One database, many sessions: each session's change is detected on its
row and its messages' count, newest id and total size, kept in ``Cursor.state``; an
untouched session is ``Unchanged``, a touched one is read again whole.

Content blocks (Goose's ``MessageContent``): ``text`` (a person's prompt in a ``user`` row,
the reply in an ``assistant`` row), ``thinking`` (reasoning), ``toolRequest`` /
``frontendToolRequest`` (tool_call), ``toolResponse`` (tool_result; ``isError`` or an
``error`` status; no exit code is recorded), ``toolConfirmationRequest``, ``actionRequired``
and ``systemNotification`` (Goose talking: meta), ``image`` and ``redactedThinking`` (no text).
Other block types are counted and named, never guessed. A row with ``metadata_json``
``userVisible: false`` was never shown to the person (injected context, compaction
summaries): meta, whatever its role. A ``sub_agent`` session's parent is
``parent_session_id``; its prompts are the parent agent's (user/provider).

Resume: ``goose session --resume --session-id <id>`` (goose-cli's ``session`` command:
``-r/--resume`` with ``--session-id``, alias ``--id``), run in the session's working dir.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    SessionEvents,
    SessionFacts,
    UnknownRecords,
    as_dict,
    cached_by_stat,
    epoch,
    int_or_none,
    parse_ts,
    read_database,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import decode_json, read_records
from voyager_sessions.ingest.sqlite import SessionSignatures, connect_readonly, digest, probe_store, sqlite_source
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "goose"
LABEL = "Goose"
DB_NAME = "sessions.db"
_HOMES = ("goose", "goose.legacy")
_REQUIRED = {"sessions": frozenset({"id"}), "messages": frozenset({"session_id", "role", "content_json"})}
_SESSION_COLS = (
    "name",
    "description",
    "user_set_name",
    "session_type",
    "working_dir",
    "created_at",
    "updated_at",
    "provider_name",
    "model_config_json",
    "parent_session_id",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
    "input_tokens",
    "output_tokens",
)
#: Goose's shell tools (``developer__shell`` and the like): the command is the searchable text.
_SHELL_SUFFIXES = ("shell", "__shell", "bash")
#: Blocks that carry no text to find.
_SILENT = frozenset({"image", "redactedThinking", "conversationCompacted"})

_decode = decode_json


def _loads(text: Any) -> Any:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    try:
        return _decode(text)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def resume_command(native: str, cwd: str | None) -> str | None:
    """The shell command that reopens session ``native`` (every part quoted: ids and paths are hostile)."""
    return resume_in(cwd, "goose", "session", "--resume", opt("--session-id", native))


def _is_shell(tool: str | None) -> bool:
    return bool(tool) and tool.lower().endswith(_SHELL_SUFFIXES)  # type: ignore[union-attr]


def _content_text(blocks: Any) -> str:
    """Text of MCP content items (``[{"type": "text", "text": …}, …]``); images and resources without text are skipped."""
    if isinstance(blocks, str):
        return blocks
    parts = []
    for b in blocks if isinstance(blocks, list) else ():
        b = as_dict(b)
        text = b.get("text")
        if not isinstance(text, str):
            text = as_dict(b.get("resource")).get("text")
        if isinstance(text, str) and text:
            parts.append(text)
    return "\n".join(parts)


class _Message(SessionEvents):
    """Maps one message's content blocks to events; one instance per session (it remembers tool names)."""

    def events(self, role: Any, content: Any, visible: bool, ts: float | None) -> Iterator[Event]:
        if role not in ("user", "assistant"):
            self.unknown.saw(f"role {role}")
            return
        for block in content if isinstance(content, list) else ():
            block = as_dict(block)
            btype = block.get("type")
            if btype == "text":
                yield from self.text(role, str_or_none(block.get("text")), ts, meta=not visible)
            elif btype == "thinking":
                yield from self.emit("reasoning", "agent", str_or_none(block.get("thinking")), ts)
            elif btype in ("toolRequest", "frontendToolRequest"):
                yield from self._request(block, ts)
            elif btype == "toolResponse":
                yield from self._response(block, ts)
            elif btype in ("toolConfirmationRequest", "actionRequired", "systemNotification"):
                yield from self.emit("meta", "provider", _notice_text(block), ts)
            elif not (isinstance(btype, str) and btype in _SILENT):  # a list or dict type is unhashable
                self.unknown.saw(f"block {btype}")

    def _request(self, block: dict[str, Any], ts: float | None) -> Iterator[Event]:
        call_id = str_or_none(block.get("id"))
        call = as_dict(block.get("toolCall"))
        value = as_dict(call.get("value"))
        name = str_or_none(value.get("name"))
        self.tools[call_id or ""] = name
        if call.get("status") == "error" or not value:
            # The model asked for a tool Goose could not parse: what it sent is the error text.
            yield from self.emit(
                "tool_call",
                "agent",
                tool_call_text(name, call.get("error")),
                ts,
                tool=name,
                call_id=call_id,
                is_error=True,
            )
            return
        text = tool_call_text(name, value.get("arguments"), {name} if _is_shell(name) else ())
        yield from self.emit("tool_call", "agent", text, ts, tool=name, call_id=call_id)

    def _response(self, block: dict[str, Any], ts: float | None) -> Iterator[Event]:
        call_id = str_or_none(block.get("id"))
        result = as_dict(block.get("toolResult"))
        value = result.get("value")
        if result.get("status") == "error":
            text, is_error = str_or_none(result.get("error")) or "", True
        else:
            items = value if isinstance(value, list) else as_dict(value).get("content")
            text, is_error = _content_text(items), as_dict(value).get("isError") is True
        yield from self.emit(
            "tool_result", "tool", text, ts, tool=self.tools.get(call_id or ""), call_id=call_id, is_error=is_error
        )


def _notice_text(block: dict[str, Any]) -> str | None:
    """What Goose showed: a confirmation prompt, an elicitation, a notification (shapes vary by release)."""
    data = as_dict(block.get("data"))
    for holder in (block, data):
        for key in ("msg", "message", "prompt", "text", "reason"):
            if isinstance(holder.get(key), str) and holder[key].strip():
                return holder[key]
    name = str_or_none(block.get("toolName")) or str_or_none(data.get("toolName"))
    return f"confirm tool: {name}" if name else None


# ---------------------------------------------------------------------------
# sessions.db
# ---------------------------------------------------------------------------


def _model(config: Any) -> str | None:
    try:
        cfg = as_dict(_loads(config)) if config is not None else {}
    except ValueError:
        return None
    for key in ("model_name", "modelName", "model"):
        if isinstance(cfg.get(key), str) and cfg[key]:
            return cfg[key]
    return None


def _db_session(source: str, row: sqlite3.Row) -> Session:
    native = row["id"]
    title = str_or_none(row["name"]) or str_or_none(row["description"])
    named = bool(row["user_set_name"]) and bool(str_or_none(row["name"]))
    parent = str_or_none(row["parent_session_id"])
    cwd = str_or_none(row["working_dir"])
    tokens_in = int_or_none(row["accumulated_input_tokens"]) or int_or_none(row["input_tokens"])
    tokens_out = int_or_none(row["accumulated_output_tokens"]) or int_or_none(row["output_tokens"])
    return Session(
        id=session_id(PROVIDER, native),
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source=("user" if named else "agent") if title else None,
        cwd=cwd,
        model=_model(row["model_config_json"]),
        started=parse_ts(row["created_at"]) or epoch(row["created_at"]),
        updated=parse_ts(row["updated_at"]) or epoch(row["updated_at"]),
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=None if row["session_type"] == "sub_agent" else resume_command(native, cwd),
        source=source,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
    )


def _read_db(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    return read_database(
        source.path,
        LABEL,
        _REQUIRED,
        cursor,
        lambda conn, schema, signatures: _db_sessions(source.path, conn, schema, signatures),
    )


def _db_sessions(
    path: str, conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
) -> Iterator[Item]:
    s_cols, m_cols = schema["sessions"], schema["messages"]
    picks = ", ".join(c if c in s_cols else f"NULL AS {c}" for c in _SESSION_COLS)
    order = ", ".join(c for c in ("created_timestamp", "id") if c in m_cols) or "rowid"
    ts_col = "created_timestamp" if "created_timestamp" in m_cols else "NULL"
    meta_col = "metadata_json" if "metadata_json" in m_cols else "NULL"
    top = "max(id)" if "id" in m_cols else "max(rowid)"
    unknown = UnknownRecords(LABEL)
    if "schema_version" in schema:
        try:
            version = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            unknown.version = f"(sessions.db schema {version})" if version is not None else None
        except sqlite3.DatabaseError:
            pass
    aggregates = {
        sid: list(rest)
        for sid, *rest in conn.execute(
            f"SELECT session_id, count(*), {top}, sum(length(content_json)), sum(length({meta_col})) "
            "FROM messages GROUP BY session_id"
        )
    }
    sessions = conn.execute(
        f"SELECT id, {picks} FROM sessions ORDER BY {'created_at, ' if 'created_at' in s_cols else ''}id"
    ).fetchall()
    for row in sessions:
        native = row["id"]
        if not isinstance(native, str) or not native:
            continue
        signature = [digest(*tuple(row)), *aggregates.get(native, [0, None, None, None])]
        if signatures.same(native, signature):
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        meta = _db_session(path, row)
        yield meta
        mapper = _Message(meta.id, row["session_type"] == "sub_agent" or meta.parent is not None, unknown)
        for mid, role, content, metadata, created in conn.execute(
            f"SELECT {'id' if 'id' in m_cols else 'rowid'}, role, content_json, {meta_col}, {ts_col} "
            f"FROM messages WHERE session_id = ? ORDER BY {order}",
            (native,),
        ):
            try:
                blocks = _loads(content)
                visible = as_dict(_loads(metadata) if metadata else {}).get("userVisible") is not False
            except ValueError as exc:
                yield Notice(
                    source=path,
                    where=f"session {native}, message {mid}",
                    reason=f"malformed JSON, message skipped: {exc}",
                )
                continue
            yield from mapper.events(role, blocks, visible, epoch(created))
        signatures.record(native, signature)
    if (notice := unknown.notice(path)) is not None:
        yield notice


# ---------------------------------------------------------------------------
# Legacy JSONL (before 1.20): a metadata line, then one message a line
# ---------------------------------------------------------------------------


def _db_ids(db: str) -> frozenset[str]:
    """The session ids a ``sessions.db`` holds (what Goose migrated its JSONL files into)."""

    def load(path: str) -> frozenset[str]:
        conn = connect_readonly(path)
        try:
            return frozenset(r[0] for r in conn.execute("SELECT id FROM sessions"))
        finally:
            conn.close()

    try:
        return cached_by_stat(db, load, frozenset())
    except sqlite3.Error:
        return frozenset()


def _read_legacy(source: Source) -> Iterator[Item]:
    native = Path(source.path).name.removesuffix(".jsonl")
    facts = SessionFacts()
    facts.native_id = native
    unknown = UnknownRecords(LABEL)
    sid = session_id(PROVIDER, native)
    mapper = _Message(sid, False, unknown)
    title: str | None = None
    sent: Session | None = None
    for item in read_records(source.path):
        if isinstance(item, Notice):
            yield item
            if item.fatal:
                return
            continue
        line = item.value
        if not isinstance(line, dict):
            unknown.saw(f"a JSON {type(line).__name__}")
            continue
        if "role" not in line and item.lineno == 1:  # the metadata line
            title = str_or_none(line.get("description")) or str_or_none(line.get("name"))
            facts.cwd = str_or_none(line.get("working_dir"))
            facts.observe_ts(parse_ts(line.get("created_at")))
            facts.observe_ts(parse_ts(line.get("updated_at")))
            mapper.subagent = line.get("session_type") == "sub_agent"
            continue
        if sent is None:
            sent = facts.session(PROVIDER, title=title, title_source="agent", resume=None, source=source.path)
            yield sent
        ts = epoch(line.get("created"))
        facts.observe_ts(ts)
        visible = as_dict(line.get("metadata")).get("userVisible") is not False
        yield from mapper.events(line.get("role"), line.get("content"), visible, ts)
    if sent is None:
        return
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    final = facts.session(PROVIDER, title=title, title_source="agent", resume=None, source=source.path)
    if final != sent:
        yield final


def probe(path: str) -> str:
    """``sessions.db`` or ``legacy-jsonl`` for what Voyager reads, else what is wrong (for ``voyager doctor``)."""
    if path.endswith(".jsonl"):
        return "legacy-jsonl"
    return probe_store(path, _REQUIRED, "sessions.db")


class GooseAdapter:
    """Goose's ``sessions.db`` and legacy JSONL sessions."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        found = [manifest.agent_home(h, env) for h in _HOMES]
        return list(dict.fromkeys(p for p in found if p is not None))

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        roots = self.roots(env)
        db = roots[0] / DB_NAME
        yield from sqlite_source(PROVIDER, db, named=bool(env.get("VOYAGER_GOOSE_HOME")))
        migrated: frozenset[str] | None = None  # read from sessions.db only once a legacy file turns up
        for root in roots:
            for item in walk_files(root, ".jsonl", PROVIDER, append_only=False, skip_dir=lambda _name: True):
                if isinstance(item, Source):
                    if migrated is None:
                        migrated = _db_ids(str(db)) if db.is_file() else frozenset()
                    if Path(item.path).name.removesuffix(".jsonl") in migrated:
                        continue  # Goose copied it into sessions.db: the database copy is the session
                yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if source.path.endswith(".jsonl"):
            return _read_legacy(source)
        return _read_db(source, cursor)


ADAPTER = GooseAdapter()
