"""OpenCode adapter: every storage shape OpenCode has shipped, read-only, into Sessions and Events.

OpenCode changed where it keeps conversations four times (see FORMATS.md, "OpenCode").
This module owns recognising each shape *by its tables and columns* and turning it into
Voyager's model; nothing else in Voyager knows these layouts. The shapes:

``json``        ``storage/{session,message,part}/…/*.json`` files (early 1.x)
``v1``          ``opencode.db`` with ``session`` + ``message`` + ``part`` (1.2 … 1.18; 1.18.33 also
                creates an *empty* ``session_message``, which must not make it look like v2)
``v2``          ``session_v2`` + ``session_message`` + ``session_part`` (content in part rows)
``v2-inline``   ``session_v2`` + ``session_message`` and no ``session_part`` (content inline in ``data``)
``migrating``   OpenCode 2 opened a 1.x database: both table sets, progress in ``kv['migration.v1-v2']``

Anything else is ``unknown-schema``; a file SQLite cannot read is ``unreadable``. Both are
reported as a fatal ``Notice`` from ``read`` (never as "0 sessions"), and ``probe(path)``
names the shape for ``voyager doctor``.

Read-only is a contract, not a habit: databases open through
:func:`voyager_sessions.ingest.sqlite.connect_readonly` (``mode=ro``, ``query_only``, and
``immutable`` only when there is no ``-wal`` to hide). A whole source is read inside one read transaction so the migrating shape sees
the kv cursor and both table sets at the same instant. Rows stream one session at a time
through SQLite cursors; nothing fetches a whole table.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions import paths
from voyager_sessions.ingest.adapters._common import int_or_none as _int
from voyager_sessions.ingest.adapters._common import str_or_none as _str
from voyager_sessions.ingest.adapters.base import (
    Cursor,
    Evidence,
    Fingerprint,
    Item,
    Notice,
    Partial,
    Source,
    Unchanged,
    fingerprint,
)
from voyager_sessions.ingest.sqlite import connect_readonly
from voyager_sessions.ingest.sqlite import is_transient as _transient
from voyager_sessions.ingest.sqlite import tables as _schema
from voyager_sessions.model import Event, Kind, Origin, Session, session_id

PROVIDER = "opencode"

#: Every answer ``probe`` can give, in the order FORMATS.md describes them.
SHAPES: tuple[str, ...] = ("json", "v1", "v2", "v2-inline", "migrating", "unknown-schema", "unreadable")

#: kv key under which OpenCode 2 records its copy of 1.x sessions.
MIGRATION_KEY = "migration.v1-v2"

# Columns a table must have for us to read it. Deliberately minimal: optional columns
# (tokens, model, workspace …) are used when present, so an older or newer release that
# adds or drops one still reads; a release that drops one of *these* is a new shape and
# must fail loudly as unknown-schema instead of being misread.
_REQUIRED: dict[str, frozenset[str]] = {
    "session": frozenset({"id", "directory"}),
    "message": frozenset({"id", "session_id", "data"}),
    "part": frozenset({"id", "message_id", "data"}),
    "session_v2": frozenset({"id", "directory"}),
    "session_message": frozenset({"id", "session_id", "type", "data"}),
    "session_part": frozenset({"id", "message_id", "data"}),
}

# Part / content types that carry no searchable text (bookkeeping of the agent loop).
# They are known, so they are skipped silently rather than counted as unknown.
_NOISE_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "compaction"})
# v2 message rows that carry no text (``idle`` marks the end of a run).
_NOISE_MESSAGES = frozenset({"idle"})


# ---------------------------------------------------------------------------
# Opening and recognising a database
# ---------------------------------------------------------------------------


def _has(schema: Mapping[str, frozenset[str]], table: str) -> bool:
    return table in schema and _REQUIRED[table] <= schema[table]


def detect_shape(schema: Mapping[str, frozenset[str]]) -> str:
    """The shape a database's tables describe: v1, v2, v2-inline, migrating or unknown-schema.

    Only structure counts. v2 needs ``session_v2`` (the 1.18.33 empty ``session_message``
    alone is not v2); inline is v2 *without* ``session_part``, so a database that has a
    parts table can never be misread as inline.
    """
    v1 = _has(schema, "session") and _has(schema, "message") and _has(schema, "part")
    v2 = _has(schema, "session_v2") and _has(schema, "session_message")
    if "session_part" in schema and not _has(schema, "session_part"):
        return "unknown-schema"  # a parts table we do not understand: do not guess it away
    if v2 and v1:
        return "migrating"
    if v2:
        return "v2" if "session_part" in schema else "v2-inline"
    if v1:
        return "v1"
    return "unknown-schema"


def probe(path: str | os.PathLike[str]) -> str:
    """Name the storage shape at ``path`` (a database file or a ``storage/`` directory), for ``voyager doctor``."""
    p = Path(path)
    if p.is_dir():
        return "json" if (p / "session").is_dir() else "unknown-schema"
    if not p.is_file():
        return "unreadable"
    try:
        conn = connect_readonly(p)
    except sqlite3.Error:
        return "unreadable"
    try:
        return detect_shape(_schema(conn))
    except sqlite3.DatabaseError:
        return "unreadable"
    finally:
        conn.close()


# ---------------------------------------------------------------------------
# Small helpers shared by every shape
# ---------------------------------------------------------------------------


def _secs(ms: Any) -> float | None:
    """OpenCode stores epoch milliseconds; Voyager uses float seconds."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return None
    return ms / 1000.0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _col(row: sqlite3.Row, name: str) -> Any:
    """A column that may not exist in this release's table."""
    return row[name] if name in row.keys() else None


def _model_name(model: Any) -> str | None:
    """``provider/model`` (how OpenCode's own ``-m`` flag names a model) from the shapes it stores."""
    if isinstance(model, str):
        try:
            model = json.loads(model)
        except ValueError:
            return model or None
    m = _dict(model)
    ident = _str(m.get("id")) or _str(m.get("modelID"))
    provider = _str(m.get("providerID"))
    if ident and provider:
        return f"{provider}/{ident}"
    return ident


def _resume(directory: str | None, native: str) -> str:
    # Verified against ``opencode --help`` of 1.18.33: ``opencode [project]`` takes the
    # directory positionally and ``-s/--session`` names the session to continue.
    if directory:
        return f"opencode {shlex.quote(directory)} --session {shlex.quote(native)}"
    return f"opencode --session {shlex.quote(native)}"


def _text(value: Any) -> str | None:
    """Text worth an event: a string with something other than whitespace in it."""
    return value if isinstance(value, str) and value.strip() else None


def _error_text(err: Any) -> str | None:
    """``Name: message`` from OpenCode's error shapes: v1 ``{name, data:{message}}``, v2 ``{type, message}``, text."""
    if isinstance(err, str):
        return err or None
    e = _dict(err)
    if not e:
        return None
    name = _str(e.get("name")) or _str(e.get("type"))
    message = _str(_dict(e.get("data")).get("message")) or _str(e.get("message"))
    if name and message:
        return f"{name}: {message}"
    return message or name


def _tool_output(state: Mapping[str, Any]) -> str | None:
    """A finished tool's output: v1 keeps a string in ``output``, v2 a list of content blocks."""
    out = state.get("output")
    if isinstance(out, str):
        return out
    blocks = state.get("content")
    if isinstance(blocks, list):
        texts = []
        for b in blocks:
            b = _dict(b)
            t = _str(b.get("text")) if b.get("type", "text") == "text" else _str(b.get("uri"))
            if t:
                texts.append(t)
        return "\n".join(texts)
    return None


def _render_input(value: Any) -> str:
    # Sorted keys keep the text identical across rescans (JSON object order is not promised).
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class _Ctx:
    """What reading one source accumulates: skipped-type counts, reported once at the end."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.unknown: Counter[str] = Counter()

    def malformed(self, where: str, exc: Exception) -> Notice:
        return Notice(source=self.source, where=where, reason=f"malformed JSON, row skipped: {exc}")

    def summary(self) -> Iterator[Notice]:
        if self.unknown:
            detail = ", ".join(f"{k}={n}" for k, n in sorted(self.unknown.items()))
            total = sum(self.unknown.values())
            yield Notice(source=self.source, reason=f"skipped {total} record(s) of unknown type: {detail}")


# ---------------------------------------------------------------------------
# Turning one session's rows into Events (shared by every shape)
# ---------------------------------------------------------------------------


class _Emitter:
    """Assigns ``seq`` and maps OpenCode's parts, content items and message rows to Events.

    One per session. v1 parts, JSON-tree parts, v2 ``session_part`` rows and v2 inline
    ``content`` items are the same vocabulary with a few renamed fields (``tool``/``name``,
    ``callID``/``id``, ``output``/``content``), so one mapper serves all of them.
    """

    def __init__(self, sid: str, *, subagent: bool, ctx: _Ctx) -> None:
        self.sid = sid
        self.subagent = subagent
        self.ctx = ctx
        self.seq = 0
        #: (message id, seq of its first event) of the last message seen.
        self.last_message: tuple[Any, int] | None = None

    def _event(self, kind: Kind, origin: Origin, text: str, ts: float | None, **kw: Any) -> Event:
        ev = Event(session=self.sid, seq=self.seq, kind=kind, origin=origin, text=text, ts=ts, **kw)
        self.seq += 1
        return ev

    def _user_origin(self) -> Origin:
        # A subagent's "user" turn is a prompt written by the parent agent, not a person.
        return "provider" if self.subagent else "human"

    def user_text(self, text: Any, ts: float | None) -> Iterator[Event]:
        if text := _text(text):
            yield self._event("user", self._user_origin(), text, ts)

    def meta(self, text: Any, ts: float | None, *, is_error: bool = False) -> Iterator[Event]:
        if text := _text(text):
            yield self._event("meta", "provider", text, ts, is_error=is_error)

    def assistant_error(self, err: Any, ts: float | None) -> Iterator[Event]:
        text = _error_text(err)
        if text:
            yield self._event("assistant", "provider", text, ts, is_error=True)

    def part(self, role: str, part: Mapping[str, Any], ts: float | None, *, summary: bool = False) -> Iterator[Event]:
        """One part / content item of a ``role`` message. Unknown types are counted, not guessed."""
        ptype = part.get("type")
        if ptype == "text":
            text = part.get("text")
            if part.get("synthetic") is True or summary:
                # Injected by OpenCode (file contents, reminders) or a compaction summary.
                yield from self.meta(text, ts)
            elif role == "user":
                yield from self.user_text(text, ts)
            elif text := _text(text):
                yield self._event("assistant", "agent", text, ts)
        elif ptype == "reasoning":
            if text := _text(part.get("text")):
                yield self._event("reasoning", "agent", text, ts)
        elif ptype == "tool":
            yield from self._tool(part, ts)
        elif ptype == "agent":
            yield from self.meta(f"agent: {part['name']}" if _str(part.get("name")) else None, ts)
        elif ptype == "subtask":
            yield from self.meta(_str(part.get("prompt")) or _str(part.get("description")), ts)
        elif ptype == "retry":
            yield from self.meta(_error_text(part.get("error")), ts, is_error=True)
        elif ptype == "file":
            # Name the attachment; never index a data: URL's payload.
            src = _dict(part.get("source"))
            name = _str(part.get("filename")) or _str(src.get("path"))
            url = _str(part.get("url"))
            if not name and url and not url.startswith("data:"):
                name = url
            yield from self.meta(f"file: {name}" if name else None, ts)
        elif ptype in _NOISE_PARTS:
            return
        else:
            self.ctx.unknown[f"part:{ptype}"] += 1

    def _tool(self, part: Mapping[str, Any], ts: float | None) -> Iterator[Event]:
        state = _dict(part.get("state"))
        tool = _str(part.get("tool")) or _str(part.get("name"))
        call_id = _str(part.get("callID")) or _str(part.get("id"))
        times = _dict(state.get("time")) or _dict(part.get("time"))
        start = _secs(times.get("start")) or _secs(times.get("created")) or ts
        end = _secs(times.get("end")) or _secs(times.get("completed")) or start
        yield self._event("tool_call", "agent", _render_input(state.get("input")), start, tool=tool, call_id=call_id)
        status = state.get("status")
        exit_code = _int(_dict(state.get("metadata")).get("exit"))
        if status == "completed":
            out = _tool_output(state)
            yield self._event("tool_result", "tool", out or "", end, tool=tool, call_id=call_id, exit_code=exit_code)
        elif status == "error":
            # The error text is the result; an exit code only if OpenCode recorded one.
            text = _error_text(state.get("error")) or _tool_output(state) or ""
            yield self._event(
                "tool_result", "tool", text, end, tool=tool, call_id=call_id, exit_code=exit_code, is_error=True
            )
        # pending / running: the call happened, its result does not exist yet.

    def v2_row(self, mtype: str, data: Mapping[str, Any], ts: float | None) -> Iterator[Event]:
        """A ``session_message`` row of a type other than user/assistant (provider rows)."""
        if mtype in ("synthetic", "system"):
            yield from self.meta(data.get("text"), ts)
        elif mtype == "compaction":
            yield from self.meta(_str(data.get("summary")) or _str(data.get("text")), ts)
        elif mtype == "agent-switched":
            yield from self.meta(f"agent switched: {data['agent']}" if _str(data.get("agent")) else None, ts)
        elif mtype == "model-switched":
            name = _model_name(data.get("model"))
            yield from self.meta(f"model switched: {name}" if name else None, ts)
        elif mtype == "shell":
            # A command the person ran with ``!`` in the TUI: a tool run they asked for.
            cmd = _str(data.get("command"))
            yield self._event("tool_call", "human", cmd or "", ts, tool="shell")
            status = data.get("status")
            if status in (None, "completed", "failed", "cancelled", "timed_out") and (
                "output" in data or "error" in data
            ):
                err = _str(data.get("error"))
                out = _str(data.get("output")) or ""
                text = "\n".join(t for t in (out, err) if t)
                yield self._event(
                    "tool_result",
                    "tool",
                    text,
                    ts,
                    tool="shell",
                    exit_code=_int(_dict(data.get("metadata")).get("exit")),
                    is_error=bool(err) or status in ("failed", "timed_out"),
                )
        elif mtype in _NOISE_MESSAGES:
            return
        else:
            self.ctx.unknown[f"message:{mtype}"] += 1


_json_decode = msgspec.json.Decoder().decode  # several times faster than json.loads on part rows


def _loads(text: Any) -> dict[str, Any]:
    """Parse a JSON object column; ValueError when it is not one (the caller names the row)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):  # NULL or a number where JSON text belongs
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    try:
        value = _json_decode(text)
    except msgspec.DecodeError as exc:  # callers catch ValueError and name the row
        raise ValueError(str(exc)) from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------
# SQLite shapes
# ---------------------------------------------------------------------------


#: Each table generation's message table.
_MSG_TABLE = {"v1": "message", "v2": "session_message"}


class _Db:
    """One open database and what its schema offers; builds the queries each table set needs."""

    #: Signatures from the previous read (session id -> list), when resuming; None reads all.
    known: dict[str, Any] | None = None

    def _tables(self, gen: str, parts: bool) -> tuple[str, str | None]:
        """The message table of ``gen`` and its part table (None when there is none to read)."""
        msg = _MSG_TABLE[gen]
        part = "part" if gen == "v1" else ("session_part" if parts else None)
        if part is not None and (part not in self.schema or "message_id" not in self.cols(part)):
            part = None
        return msg, part

    def _updates(self, table: str, alias: str) -> tuple[str, str]:
        """SQL for the max and the sum of a table's update times (``NULL`` without the column).

        The sum moves when any one row is updated, not only the newest. It is an integer
        sum (SQLite's ``total()`` is a float, which loses single milliseconds past 2^53),
        exact, because a session's prefix signature is its whole sum minus the sum of its
        tail; of the times mod 2^32, so it cannot overflow. OpenCode stores integer
        milliseconds; a REAL time counts in thousandths and an ISO-text one through
        ``julianday`` in milliseconds, so an edit within the same second still shows.
        """
        if "time_updated" not in self.cols(table):
            return "NULL", "NULL"
        col = f"{alias}.time_updated"
        as_int = (f"CASE typeof({col}) WHEN 'integer' THEN {col} WHEN 'real' THEN CAST({col} * 1000 AS INTEGER) "
                  f"WHEN 'text' THEN CAST(julianday({col}) * 86400000 AS INTEGER) END")
        return f"max({col})", f"sum(({as_int}) % 4294967296)"

    def _part_owner(self, part: str) -> str:
        """Which session a part row counts for: its own ``session_id`` when it has one (no join needed).

        OpenCode sets it to its message's session. A part whose ``session_id`` disagrees is
        still read with its message; only its later edits then go unnoticed until that
        message's session changes otherwise (malformed data; the join to tell would cost a
        lookup for every part on every rescan)."""
        return "p.session_id" if "session_id" in self.cols(part) else "m.session_id"

    def row_aggregates(self, gen: str, parts: bool) -> dict[str, list[Any]]:
        """session id -> [message count, newest update, update sum, max id, the same four for parts], in two grouped queries."""
        msg, part = self._tables(gen, parts)
        out: dict[str, list[Any]] = {}
        if msg not in self.schema or "session_id" not in self.cols(msg):
            return out
        for sid, n, newest, updates, top in self.conn.execute(
            f"SELECT m.session_id, count(*), {', '.join(self._updates(msg, 'm'))}, max(m.id) FROM {msg} m GROUP BY m.session_id"
        ):
            out[sid] = [n, newest, updates, top, 0, None, None, None]
        if part is not None:
            owner = self._part_owner(part)
            join = "" if owner.startswith("p.") else f" JOIN {msg} m ON p.message_id = m.id"
            for sid, n, newest, updates, top in self.conn.execute(
                f"SELECT {owner}, count(*), {', '.join(self._updates(part, 'p'))}, max(p.id) FROM {part} p{join} GROUP BY {owner}"
            ):
                out.setdefault(sid, [0, None, None, None, 0, None, None, None])[4:] = [n, newest, updates, top]
        return out

    def __init__(self, conn: sqlite3.Connection, schema: Mapping[str, frozenset[str]], source: str) -> None:
        self.signatures_out: dict[str, list[Any]] = {}
        self.conn = conn
        self.schema = schema
        self.source = source
        self.projects = self._projects()
        self.branches = self._branches()

    def cols(self, table: str) -> frozenset[str]:
        return self.schema.get(table, frozenset())

    def _order(self, table: str, alias: str, *names: str, desc: bool = False) -> str:
        """ORDER BY terms for the columns of ``names`` this table has (id always exists)."""
        have = self.cols(table)
        suffix = " DESC" if desc else ""
        return ", ".join(f"{alias}.{n}{suffix}" for n in names if n in have or n == "id")

    def _projects(self) -> dict[str, str | None]:
        """project id -> worktree, when the project is a repository.

        OpenCode's catch-all ``global`` project has worktree ``/`` and no vcs; calling that a
        repository would be wrong, so only projects with a vcs (or, lacking the column, a
        worktree other than ``/``) count.
        """
        cols = self.cols("project")
        if not {"id", "worktree"} <= cols:
            return {}
        out: dict[str, str | None] = {}
        vcs = "vcs" if "vcs" in cols else "NULL"
        for pid, worktree, v in self.conn.execute(f"SELECT id, worktree, {vcs} FROM project"):
            keep = bool(v) if "vcs" in cols else worktree not in (None, "", "/")
            out[pid] = worktree if keep and isinstance(worktree, str) and worktree else None
        return out

    def _branches(self) -> dict[str, str]:
        cols = self.cols("workspace")
        if not {"id", "branch"} <= cols:
            return {}
        return {wid: b for wid, b in self.conn.execute("SELECT id, branch FROM workspace") if isinstance(b, str) and b}

    def session_meta(self, row: sqlite3.Row, *, gen: str) -> Session:
        native = row["id"]
        directory = _str(row["directory"])
        parent = _str(_col(row, "parent_id"))
        tokens_in, tokens_out = _col(row, "tokens_input"), _col(row, "tokens_output")
        if not (_int(tokens_in) or _int(tokens_out)):
            # Sessions imported or created before OpenCode kept per-session totals have 0 there
            # while their messages carry the real counts (seen with ``opencode import`` on 1.18.33).
            s_in, s_out = self._message_tokens(native, gen)
            if s_in is not None or s_out is not None:
                tokens_in, tokens_out = s_in, s_out
        model = _model_name(_col(row, "model")) or self._last_model(native, gen)
        return Session(
            id=session_id(PROVIDER, native),
            provider=PROVIDER,
            native_id=native,
            title=_str(_col(row, "title")),
            cwd=directory,
            git_repo=self.projects.get(_col(row, "project_id")),
            git_branch=self.branches.get(_col(row, "workspace_id")),
            model=model,
            started=_secs(_col(row, "time_created")),
            updated=_secs(_col(row, "time_updated")),
            parent=session_id(PROVIDER, parent) if parent else None,
            resume=_resume(directory, native),
            source=self.source,
            tokens_in=_int(tokens_in),
            tokens_out=_int(tokens_out),
        )

    def _message_tokens(self, native: str, gen: str) -> tuple[int | None, int | None]:
        table, extra = ("message", "") if gen == "v1" else ("session_message", " AND type = 'assistant'")
        try:
            # json_extract runs in SQLite: no message body is materialised in Python.
            row = self.conn.execute(
                f"SELECT sum(json_extract(data, '$.tokens.input')), sum(json_extract(data, '$.tokens.output')) "
                f"FROM {table} WHERE session_id = ? AND json_valid(data){extra}",
                (native,),
            ).fetchone()
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            return None, None
        return _int(row[0]), _int(row[1])

    def _last_model(self, native: str, gen: str) -> str | None:
        if gen == "v1":
            # The newest assistant message names the model last used; a few rows back is
            # enough (a session whose last 20 messages are all from the user has no model yet).
            order = self._order("message", "m", "time_created", "id", desc=True)
            sql = f"SELECT m.id, m.data FROM message m WHERE m.session_id = ? ORDER BY {order} LIMIT 20"
        else:
            order = self._order("session_message", "m", "seq", "id", desc=True)
            sql = (
                f"SELECT m.id, m.data FROM session_message m WHERE m.session_id = ? AND m.type = 'assistant' "
                f"ORDER BY {order} LIMIT 1"
            )
        for _mid, data in self.conn.execute(sql, (native,)):
            try:
                d = _loads(data)
            except ValueError:
                continue
            name = _model_name(d.get("model")) or _model_name(
                {"id": d.get("modelID"), "providerID": d.get("providerID")}
            )
            if name and (gen != "v1" or d.get("role") == "assistant"):
                return name
        return None

    # -- sessions -----------------------------------------------------------

    def sessions(self, table: str, where: str = "", params: tuple[Any, ...] = ()) -> Iterator[sqlite3.Row]:
        order = self._order(table, "s", "time_created", "id")
        yield from self.conn.execute(f"SELECT * FROM {table} s {where} ORDER BY {order}", params)

    # -- events -------------------------------------------------------------

    def key_columns(self, gen: str) -> list[str]:
        """The columns that order a session's messages (what ``seq`` follows), as present."""
        table = _MSG_TABLE[gen]
        names = ("time_created", "id") if gen == "v1" else ("seq", "time_created", "id")
        have = self.cols(table)
        return [n for n in names if n in have or n == "id"]

    def _from_key(self, gen: str, from_key: list[Any] | None) -> tuple[str, tuple[Any, ...]]:
        if from_key is None:
            return "", ()
        cols = ", ".join(f"m.{c}" for c in self.key_columns(gen))
        return f" AND ({cols}) >= ({', '.join('?' * len(from_key))})", tuple(from_key)

    def v1_events(self, native: str, em: _Emitter, ctx: _Ctx, from_key: list[Any] | None = None) -> Iterator[Event | Notice]:
        """A v1 session's messages and parts (from message ``from_key`` on), one joined cursor, in (time_created, id) order."""
        m_ts = "m.time_created" if "time_created" in self.cols("message") else "NULL"
        where, params = self._from_key("v1", from_key)
        sql = (
            f"SELECT m.id AS mid, {m_ts} AS mts, m.data AS mdata, p.id AS pid, p.data AS pdata "
            f"FROM message m LEFT JOIN part p ON p.message_id = m.id WHERE m.session_id = ?{where} "
            f"ORDER BY {self._order('message', 'm', 'time_created', 'id')}, "
            f"{self._order('part', 'p', 'time_created', 'id')}"
        )
        yield from _grouped(self.conn.execute(sql, (native, *params)), em, ctx, v2=False)

    def v2_events(self, native: str, em: _Emitter, ctx: _Ctx, *, parts: bool,
                  from_key: list[Any] | None = None) -> Iterator[Event | Notice]:
        """A v2 session's ``session_message`` rows (ordered by OpenCode's own ``seq``), with their parts if any."""
        m_ts = "m.time_created" if "time_created" in self.cols("session_message") else "NULL"
        order = self._order("session_message", "m", "seq", "time_created", "id")
        where, params = self._from_key("v2", from_key)
        if parts:
            sql = (
                f"SELECT m.id AS mid, m.type AS mtype, {m_ts} AS mts, m.data AS mdata, p.id AS pid, p.data AS pdata "
                f"FROM session_message m LEFT JOIN session_part p ON p.message_id = m.id WHERE m.session_id = ?{where} "
                f"ORDER BY {order}, {self._order('session_part', 'p', 'time_created', 'id')}"
            )
        else:
            sql = (
                f"SELECT m.id AS mid, m.type AS mtype, {m_ts} AS mts, m.data AS mdata, NULL AS pid, NULL AS pdata "
                f"FROM session_message m WHERE m.session_id = ?{where} ORDER BY {order}"
            )
        yield from _grouped(self.conn.execute(sql, (native, *params)), em, ctx, v2=True)

    def tail_of(self, native: str, gen: str, parts: bool, last_mid: Any, start_seq: int,
                whole: list[Any]) -> list[Any] | None:
        """What resuming this session at its last message needs: [message key, seq at that message,
        signature of everything before it]. None when the key cannot be read."""
        table = _MSG_TABLE[gen]
        cols = self.key_columns(gen)
        row = self.conn.execute(f"SELECT {', '.join(cols)} FROM {table} WHERE id = ?", (last_mid,)).fetchone()
        if row is None:
            return None
        key = list(row)
        return [key, start_seq, self.prefix_signature(native, gen, parts, key, whole)]

    def prefix_signature(self, native: str, gen: str, parts: bool, key: list[Any], whole: list[Any]) -> list[Any]:
        """Count and update sum of a session's messages (and their parts) before message ``key``.

        ``whole`` is the session's row aggregates; the prefix is that minus the rows from
        ``key`` on, which are few (the last turn), so this reads a handful of rows through the
        (session, key) index instead of the whole session.
        """
        msg, part = self._tables(gen, parts)
        where, params = self._from_key(gen, key)
        _, m_upd = self._updates(msg, "m")
        tail = list(self.conn.execute(f"SELECT count(*), {m_upd} FROM {msg} m WHERE m.session_id = ?{where}",
                                      (native, *params)).fetchone())
        if part is not None:
            _, p_upd = self._updates(part, "p")
            owner = self._part_owner(part)
            also = f" AND {owner} = ?" if owner.startswith("p.") else ""
            tail += list(self.conn.execute(
                f"SELECT count(*), {p_upd} FROM {part} p JOIN {msg} m ON p.message_id = m.id "
                f"WHERE m.session_id = ?{also}{where}", (native, *((native,) if also else ()), *params)).fetchone())
        else:
            tail += [0, None]
        w = whole or [0, None, None, None, 0, None, None, None]
        return [_minus(w[0], tail[0]), _minus(w[2], tail[1]), _minus(w[4], tail[2]), _minus(w[6], tail[3])]


def _minus(whole: int | None, tail: int | None) -> int | None:
    """``whole - tail`` of counts or integer sums, where SQL NULL (no rows, no such column) is 0."""
    if whole is None and tail is None:
        return None
    return (whole or 0) - (tail or 0)


def _grouped(rows: Iterable[sqlite3.Row], em: _Emitter, ctx: _Ctx, *, v2: bool) -> Iterator[Event | Notice]:
    """Walk (message, part) rows grouped by message, emitting events as each row arrives.

    Only the current message's header is held; parts stream through. An assistant
    message's error is emitted after its parts (where OpenCode shows it).
    """
    cur_id: object = object()
    cur: _Message | None = None
    for row in rows:
        if row["mid"] != cur_id:
            if cur is not None:
                yield from cur.finish(em)
            cur_id = row["mid"]
            em.last_message = (cur_id, em.seq)  # where a later read may resume this session
            cur = _Message.from_row(row, v2=v2, ctx=ctx)
            if cur.notice is not None:
                yield cur.notice
            else:
                yield from cur.start(em)
        assert cur is not None
        if row["pid"] is not None and cur.ok:
            try:
                part = _loads(row["pdata"])
            except ValueError as exc:
                yield ctx.malformed(f"part {row['pid']}", exc)
                continue
            cur.has_parts = True
            if cur.role in ("user", "assistant"):
                yield from em.part(cur.role, part, cur.ts, summary=cur.summary)
            else:
                # Parts of a provider row (synthetic, system …) are provider text too.
                yield from em.meta(part.get("text") if part.get("type") == "text" else None, cur.ts)
    if cur is not None:
        yield from cur.finish(em)


class _Message:
    """The header of the message being walked: role, time, and what to emit when it ends."""

    __slots__ = ("mid", "role", "ts", "data", "summary", "ok", "notice", "has_parts", "v2", "mtype")

    def __init__(self) -> None:
        self.mid = ""
        self.role = ""
        self.mtype = ""
        self.ts: float | None = None
        self.data: dict[str, Any] = {}
        self.summary = False
        self.ok = False
        self.notice: Notice | None = None
        self.has_parts = False
        self.v2 = False

    @classmethod
    def from_row(cls, row: sqlite3.Row, *, v2: bool, ctx: _Ctx) -> _Message:
        m = cls()
        m.mid, m.v2 = row["mid"], v2
        try:
            m.data = _loads(row["mdata"])
        except ValueError as exc:
            # One bad row costs that message (and its parts), never the session.
            m.notice = ctx.malformed(f"message {m.mid}", exc)
            return m
        m.ts = _secs(row["mts"]) if row["mts"] is not None else _secs(_dict(m.data.get("time")).get("created"))
        if v2:
            m.mtype = row["mtype"] if isinstance(row["mtype"], str) else ""
            m.role = m.mtype
        else:
            role = m.data.get("role")
            m.role = role if isinstance(role, str) else ""
            if m.role not in ("user", "assistant"):
                ctx.unknown[f"message:{m.role or '?'}"] += 1
                return m
        # v1 marks a compaction summary with ``summary: true`` on an assistant message
        # (a user message's ``summary`` is an object of diffs, not this flag).
        m.summary = m.role == "assistant" and m.data.get("summary") is True
        m.ok = True
        return m

    def start(self, em: _Emitter) -> Iterator[Event]:
        if not self.ok or not self.v2 or self.role in ("user", "assistant"):
            return iter(())
        return em.v2_row(self.role, self.data, self.ts)

    def finish(self, em: _Emitter) -> Iterator[Event]:
        if not self.ok:
            return
        if self.v2 and self.role in ("user", "assistant") and not self.has_parts:
            # v2 inline (or a v2-with-parts message that kept its content inline).
            if self.role == "user":
                yield from em.user_text(self.data.get("text"), self.ts)
            else:
                content = self.data.get("content")
                for item in content if isinstance(content, list) else ():
                    if isinstance(item, dict):
                        yield from em.part("assistant", item, self.ts)
        if self.role == "assistant" and self.data.get("error"):
            yield from em.assistant_error(self.data.get("error"), self.ts)


def _migration_state(db: _Db, ctx: _Ctx) -> Iterator[Notice | tuple[str | None, str | None]]:
    """(phase, cursor) from ``kv['migration.v1-v2']``; (None, None) when absent (nothing copied yet)."""
    if not {"key", "value"} <= db.cols("kv"):
        yield (None, None)
        return
    row = db.conn.execute("SELECT value FROM kv WHERE key = ?", (MIGRATION_KEY,)).fetchone()
    if row is None or row[0] is None or row[0] == "":
        yield (None, None)
        return
    try:
        state = _loads(row[0])
    except ValueError as exc:
        yield Notice(
            source=ctx.source,
            where=f"kv {MIGRATION_KEY}",
            reason=f"unreadable migration state ({exc}); treating as not started",
        )
        yield (None, None)
        return
    phase, cursor = _str(state.get("phase")), _str(state.get("cursor"))
    if phase not in (None, "sessions", "completed"):
        yield Notice(
            source=ctx.source,
            where=f"kv {MIGRATION_KEY}",
            reason=f"unknown migration phase {phase!r}; reading 1.x sessions below the cursor",
        )
    yield (phase, cursor)


def _read_db(source: Source, known: dict[str, Any] | None = None) -> Iterator[Item]:
    path = source.path
    ctx = _Ctx(path)
    try:
        conn = connect_readonly(path)
    except sqlite3.Error as exc:
        yield Notice(source=path, reason=f"unreadable: {exc}", fatal=True, transient=_transient(exc))
        return
    try:
        try:
            # One read transaction for the whole source: the kv cursor, session_v2 and the
            # 1.x tables are then one consistent snapshot even while OpenCode writes.
            conn.execute("BEGIN")
            schema = _schema(conn)
        except sqlite3.DatabaseError as exc:
            yield Notice(source=path, reason=f"unreadable: {exc}", fatal=True, transient=_transient(exc))
            return
        shape = detect_shape(schema)
        if shape == "unknown-schema":
            tables = ", ".join(sorted(schema)) or "no tables"
            yield Notice(source=path, reason=f"unknown-schema: no OpenCode table set recognised ({tables})", fatal=True)
            return
        db = _Db(conn, schema, path)
        db.known = known
        try:
            yield from _read_shape(db, shape, ctx)
        except sqlite3.DatabaseError as exc:
            yield Notice(source=path, reason=f"unreadable: {exc}", fatal=True, transient=_transient(exc))
            return
        yield from ctx.summary()
        yield Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": db.signatures_out})
    finally:
        conn.close()


def _read_shape(db: _Db, shape: str, ctx: _Ctx) -> Iterator[Item]:
    parts = "session_part" in db.schema
    if shape == "v1":
        yield from _read_sessions(db, ctx, db.sessions("session"), gen="v1", parts=False)
        return
    if shape in ("v2", "v2-inline"):
        yield from _read_sessions(db, ctx, db.sessions("session_v2"), gen="v2", parts=parts)
        return
    # migrating: every session in session_v2 is read from there (it is the copy OpenCode
    # now uses). A 1.x session is read from the 1.x tables only if it has not been copied:
    # not in session_v2 *and* below the cursor (ids at or above it were copied; if one is
    # missing from session_v2 now, OpenCode deleted it there and it must stay deleted).
    # After phase=completed no 1.x row is read at all.
    phase: str | None = None
    cursor: str | None = None
    for item in _migration_state(db, ctx):
        if isinstance(item, Notice):
            yield item
        else:
            phase, cursor = item
    yield from _read_sessions(db, ctx, db.sessions("session_v2"), gen="v2", parts=parts)
    if phase == "completed":
        return
    where = "WHERE NOT EXISTS (SELECT 1 FROM session_v2 v WHERE v.id = s.id)"
    params: tuple[Any, ...] = ()
    if cursor is not None:
        where += " AND s.id < ?"
        params = (cursor,)
    yield from _read_sessions(db, ctx, db.sessions("session", where, params), gen="v1", parts=False)


def _row_digest(row: sqlite3.Row) -> str:
    return hashlib.blake2b(repr(tuple(row)).encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def _read_sessions(db: _Db, ctx: _Ctx, rows: Iterable[sqlite3.Row], *, gen: str, parts: bool) -> Iterator[Item]:
    aggregates = db.row_aggregates(gen, parts)
    for row in rows:
        native = row["id"]
        if not isinstance(native, str) or not native:
            continue
        # A session's signature: its own row, and the aggregates of its message and part rows.
        signature = [gen, _row_digest(row), *aggregates.get(native, ())]
        before = db.known.get(native) if db.known is not None else None
        if not isinstance(before, dict):
            before = None
        if before is not None and before.get("sig") == signature:
            db.signatures_out[native] = before
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        # Changed. If only its last message and newer ones did (the usual case while an agent
        # works: new turns, the streaming reply's parts), read from that message on.
        tail = before.get("tail") if before is not None else None
        resume_key: list[Any] | None = None
        # (The session row itself changes with every turn; of it, only the parent decides how
        # events are mapped, so that is what must be the same.)
        whole = aggregates.get(native, [])
        if (tail and len(tail) == 4 and before["sig"][0] == gen and tail[3] == _col(row, "parent_id")
                and db.prefix_signature(native, gen, parts, tail[0], whole) == tail[2]):
            resume_key = tail[0]
        meta = db.session_meta(row, gen=gen)
        yield meta
        em = _Emitter(meta.id, subagent=meta.parent is not None, ctx=ctx)
        if resume_key is not None:
            em.seq = tail[1]
            yield Partial(session=meta.id, from_seq=tail[1])
        if gen == "v1":
            yield from db.v1_events(native, em, ctx, from_key=resume_key)
        else:
            yield from db.v2_events(native, em, ctx, parts=parts, from_key=resume_key)
        entry: dict[str, Any] = {"sig": signature}
        if em.last_message is not None:
            found = db.tail_of(native, gen, parts, em.last_message[0], em.last_message[1], whole)
            if found is not None:
                entry["tail"] = [*found, _col(row, "parent_id")]
        elif resume_key is not None:
            entry["tail"] = tail  # nothing from the key on any more: keep the old resume point
        db.signatures_out[native] = entry


# ---------------------------------------------------------------------------
# The JSON tree (storage/)
# ---------------------------------------------------------------------------

_TREE_DIRS = ("session", "message", "part", "project")


def tree_fingerprint(storage: Path) -> Fingerprint:
    """A stat summary of the JSON tree that changes when any file under it is added, removed or rewritten.

    ``size`` = total bytes, ``mtime_ns`` = newest mtime of any file or directory (a
    deletion touches its directory), ``inode`` = number of files.
    """
    total = newest = count = 0
    stack = [storage / d for d in _TREE_DIRS]
    while stack:
        d = stack.pop()
        try:
            newest = max(newest, d.stat().st_mtime_ns)
            with os.scandir(d) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            st = entry.stat()
                            total += st.st_size
                            newest = max(newest, st.st_mtime_ns)
                            count += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return Fingerprint(size=total, mtime_ns=newest, inode=count)


def _json_files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


def _load_file(p: Path) -> dict[str, Any]:
    with open(p, "rb") as f:  # read-only by construction
        return _loads(f.read())


def _db_session_ids(db_path: Path) -> set[str]:
    """Session ids a sibling opencode.db already holds: it supersedes the JSON copies (OpenCode migrated them)."""
    if not db_path.is_file():
        return set()
    try:
        conn = connect_readonly(db_path)
    except sqlite3.Error:
        return set()
    try:
        schema = _schema(conn)
        ids: set[str] = set()
        for table in ("session", "session_v2"):
            if table in schema and "id" in schema[table]:
                ids.update(r[0] for r in conn.execute(f"SELECT id FROM {table}"))
        return ids
    except sqlite3.DatabaseError:
        return set()
    finally:
        conn.close()


def _read_tree(source: Source) -> Iterator[Item]:
    storage = Path(source.path)
    ctx = _Ctx(source.path)
    if not (storage / "session").is_dir():
        yield Notice(source=source.path, reason="unknown-schema: no session/ directory in the storage tree", fatal=True)
        return
    superseded = _db_session_ids(storage.parent / "opencode.db")
    skipped = 0
    projects: dict[str, str | None] = {}
    session_files: list[Path] = []
    try:
        project_dirs = sorted(p for p in (storage / "session").iterdir() if p.is_dir())
    except OSError as exc:
        yield Notice(source=source.path, reason=f"unreadable: {exc}", fatal=True)
        return
    for pdir in project_dirs:
        session_files.extend(_json_files(pdir))
    for sfile in session_files:
        try:
            info = _load_file(sfile)
        except (OSError, ValueError) as exc:
            yield ctx.malformed(f"session {sfile.stem}", exc)
            continue
        native = _str(info.get("id")) or sfile.stem
        if native in superseded:
            skipped += 1
            continue
        yield from _read_tree_session(storage, source.path, native, info, projects, ctx)
    if skipped:
        yield Notice(
            source=source.path,
            reason=f"skipped {skipped} JSON session(s) that opencode.db also holds (the database copy is read)",
        )
    yield from ctx.summary()


def _tree_project(storage: Path, pid: Any, cache: dict[str, str | None]) -> str | None:
    if not isinstance(pid, str) or not pid:
        return None
    if pid not in cache:
        worktree: str | None = None
        try:
            proj = _load_file(storage / "project" / f"{pid}.json")
            wt = _str(proj.get("worktree"))
            worktree = wt if wt and (proj.get("vcs") or ("vcs" not in proj and wt != "/")) else None
        except (OSError, ValueError):
            pass
        cache[pid] = worktree
    return cache[pid]


def _read_tree_session(
    storage: Path, src: str, native: str, info: dict[str, Any], projects: dict[str, str | None], ctx: _Ctx
) -> Iterator[Item]:
    # One session's message headers are loaded to order them; parts stream per message.
    msgs: list[tuple[int | float, str, dict[str, Any]]] = []
    for mfile in _json_files(storage / "message" / native):
        try:
            m = _load_file(mfile)
        except (OSError, ValueError) as exc:
            yield ctx.malformed(f"message {mfile.stem}", exc)
            continue
        created = _dict(m.get("time")).get("created")
        msgs.append((created if isinstance(created, (int, float)) else 0, _str(m.get("id")) or mfile.stem, m))
    msgs.sort(key=lambda t: (t[0], t[1]))

    tokens_in = tokens_out = None
    model = None
    for _c, _mid, m in msgs:
        if m.get("role") != "assistant":
            continue
        tok = _dict(m.get("tokens"))
        if _int(tok.get("input")) is not None:
            tokens_in = (tokens_in or 0) + tok["input"]
        if _int(tok.get("output")) is not None:
            tokens_out = (tokens_out or 0) + tok["output"]
        model = _model_name({"id": m.get("modelID"), "providerID": m.get("providerID")}) or model
    times = _dict(info.get("time"))
    directory = _str(info.get("directory"))
    parent = _str(info.get("parentID"))
    meta = Session(
        id=session_id(PROVIDER, native),
        provider=PROVIDER,
        native_id=native,
        title=_str(info.get("title")),
        cwd=directory,
        git_repo=_tree_project(storage, info.get("projectID"), projects),
        model=model,
        started=_secs(times.get("created")),
        updated=_secs(times.get("updated")),
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=_resume(directory, native),
        source=src,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
    )
    yield meta
    em = _Emitter(meta.id, subagent=parent is not None, ctx=ctx)
    for created, mid, m in msgs:
        role = m.get("role")
        if role not in ("user", "assistant"):
            ctx.unknown[f"message:{role}"] += 1
            continue
        ts = _secs(created) if created else None
        summary = role == "assistant" and m.get("summary") is True
        parts = []
        for pfile in _json_files(storage / "part" / mid):
            try:
                p = _load_file(pfile)
            except (OSError, ValueError) as exc:
                yield ctx.malformed(f"part {pfile.stem}", exc)
                continue
            parts.append((_str(p.get("id")) or pfile.stem, p))
        parts.sort(key=lambda t: t[0])
        for _pid, p in parts:
            yield from em.part(role, p, ts, summary=summary)
        if role == "assistant" and m.get("error"):
            yield from em.assistant_error(m.get("error"), ts)


# ---------------------------------------------------------------------------
# The adapter object
# ---------------------------------------------------------------------------


class OpenCodeAdapter:
    """Discovers OpenCode's database(s) and JSON tree and streams their sessions, read-only."""

    name: ClassVar[str] = PROVIDER
    label: ClassVar[str] = "OpenCode"
    evidence: ClassVar[Evidence] = "observed"
    versions: ClassVar[tuple[str, ...]] = ("1.18.33",)

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        override = paths.opencode_db_override(env)
        if override is not None:
            return [override]
        home = paths.opencode_home(env)
        return [home / "opencode.db", home / "storage"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        override = paths.opencode_db_override(env)
        if override is not None:
            # Authoritative: an operator-named database must not lead to reading the default one.
            yield from self._db_source(override, named=True)
            return
        home = paths.opencode_home(env)
        yield from self._db_source(home / "opencode.db", named=False)
        storage = home / "storage"
        if (storage / "session").is_dir():
            yield Source(provider=PROVIDER, path=str(storage), fingerprint=tree_fingerprint(storage))

    def _db_source(self, db: Path, *, named: bool) -> Iterator[Source | Notice]:
        try:
            fp = fingerprint(db, wal=True)
        except OSError as exc:
            if named:
                yield Notice(source=str(db), reason=f"unreadable: {exc.strerror or exc}", fatal=True)
            return
        yield Source(provider=PROVIDER, path=str(db), fingerprint=fp, append_only=False)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        """Every session of ``source`` (Session first, then its events, seq from 0).

        For a database, the final Cursor records each session's row signature; given that
        cursor back, sessions whose rows did not change are reported ``Unchanged`` instead
        of being read again. The JSON tree is always read whole.
        """
        if Path(source.path).is_dir():
            yield from _read_tree(source)
        else:
            known = cursor.state.get("sessions") if cursor is not None else None
            yield from _read_db(source, known if isinstance(known, dict) else None)


ADAPTER = OpenCodeAdapter()
