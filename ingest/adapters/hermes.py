"""The Hermes Agent adapter: ``$HERMES_HOME/state.db`` (and each profile's) to Sessions and Events.

Hermes keeps every session in one SQLite store: ``sessions`` (id, cwd, model, title,
``parent_session_id``, epoch-second times) and ``messages`` (OpenAI-style rows: ``role``,
``content``, ``tool_calls`` JSON, ``tool_call_id``, ``reasoning``/``reasoning_content``).
Most rows live in the ``-wal`` until a checkpoint, so the database is opened only
through :func:`voyager_sessions.ingest.sqlite.connect_readonly`. Profiles
(``profiles/<name>/state.db``) are stores of their own.

What a row becomes, and what it does not:

* ``user`` rows are a person's prompts, except the compaction handoff (a row opening with
  ``[CONTEXT COMPACTION``) and the harness prompts of Hermes's background review (meta),
  and the task a delegated subagent session was given (``user``, origin ``provider``).
* ``assistant`` rows give reasoning (``reasoning`` and ``reasoning_content`` usually hold
  the same text: it is indexed once), the reply, then one ``tool_call`` per entry of
  ``tool_calls`` (arguments decoded, so CJK written as ``\\uXXXX`` is searchable).
* ``tool`` rows hold JSON ``{"output", "exit_code", "error"}``: the output (and error) is the
  result, the exit code is kept as recorded.
* The system prompt lives only in ``sessions.system_prompt``: never indexed.
* Compression, decided from Hermes's own code: in-place compaction (``archive_and_compact``)
  marks the original rows ``active=0, compacted=1`` and inserts the compressed transcript
  (summary plus copies of the rows it keeps) as new active rows. The archived rows *are*
  the conversation, so they are indexed; the copies are not (a row repeating an earlier
  row of the session is skipped in a session that was compacted). Rows ``active=0,
  compacted=0`` were rewound (undone) by the person; Hermes's own search leaves them out,
  and so does Voyager. A session continued after compression (its parent ended with
  ``end_reason='compression'``) opens with copies of its parent's rows: skipped the same way.

Change detection is per session (as for OpenCode): the final Cursor remembers each
session's row signature; an untouched session is reported ``Unchanged``, one that only
gained rows is re-read from its last row on (``Partial``), anything else (compaction
flipping flags, a rewind, deleted rows) is re-read whole.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    compact_json,
    epoch,
    EventCounter,
    int_or_none,
    join_text,
    openai_tool_calls,
    opt,
    read_database,
    resume_in,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source, Unchanged
from voyager_sessions.ingest.jsonl import BadLine, decode_line
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, probe_store, sqlite_source
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin, Session, TitleSource, session_id

PROVIDER = "hermes"

#: The columns each table must have to be read at all; the rest are used when present.
_REQUIRED = {"sessions": frozenset({"id"}), "messages": frozenset({"id", "session_id", "role"})}
_SESSION_COLUMNS = (
    "id",
    "source",
    "model",
    "model_config",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "cwd",
    "title",
    "title_source",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "git_branch",
    "git_repo_root",
    "profile_name",
)
_MESSAGE_COLUMNS = (
    "id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "reasoning",
    "reasoning_content",
    "active",
    "compacted",
)

#: Hermes writes the compaction handoff as a message opening with this (``[CONTEXT COMPACTION]`` in
#: older releases, ``[CONTEXT COMPACTION — REFERENCE ONLY]`` now).
_COMPACTION_PREFIX = "[CONTEXT COMPACTION"
#: The prompts of Hermes's background review, which older builds wrote into real sessions.
_HARNESS_PREFIXES = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)
#: Tools whose ``command`` argument is a shell command: indexed as the command itself.
_SHELL_TOOLS = frozenset({"terminal", "shell", "bash", "execute_command", "run_command"})
#: ``sessions.title_source`` values (newer schemas) -> Voyager's.
_TITLE_SOURCES: dict[str, TitleSource] = {"user": "user", "llm": "agent", "derived": "prompt"}


def resume_command(cwd: str | None, native_id: str, profile: str | None = None) -> str | None:
    """``hermes chat --resume <id>`` (``hermes --profile <name> …`` for a profile's store), in the cwd."""
    return resume_in(
        cwd, "hermes", *((opt("--profile", profile),) if profile else ()), "chat", opt("--resume", native_id)
    )


def _json(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        # decode_line, not json.loads: a lone surrogate escape (a cut emoji) is replaced, since
        # the index cannot take one; nesting too deep is refused.
        return decode_line(text.encode("utf-8", "surrogatepass"))
    except BadLine:
        return None


def render_call(name: str | None, arguments: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, arguments, _SHELL_TOOLS)


def tool_output(content: Any) -> tuple[str, int | None, bool]:
    """(text, exit code, is_error) of a tool row: its JSON ``output``/``error``/``exit_code`` when it has them."""
    text = content if isinstance(content, str) else ""
    doc = _json(text) if text.lstrip().startswith("{") else None
    if not isinstance(doc, dict) or not ({"output", "exit_code", "error"} & doc.keys()):
        return text, None, False
    out = doc.get("output")
    err = doc.get("error")
    parts = [p if isinstance(p, str) else compact_json(p) for p in (out, err) if p not in (None, "")]
    code = int_or_none(doc.get("exit_code"))
    return "\n".join(parts), code, bool(err) or (code is not None and code != 0)


def message_text(content: Any) -> str:
    """A row's text: plain, or the text parts of a multimodal list Hermes stored as JSON."""
    if not isinstance(content, str):
        return ""
    if content.startswith("[{"):
        parts = _json(content)
        if isinstance(parts, list) and all(isinstance(p, dict) and "type" in p for p in parts):
            return join_text(parts, types=("text", "input_text"))
    return content


class _Store:
    """One open state.db: its columns and the queries the read needs."""

    def __init__(self, conn: sqlite3.Connection, schema: Mapping[str, frozenset[str]], path: str) -> None:
        self.conn = conn
        self.path = path
        self.scols = schema["sessions"]
        self.mcols = schema["messages"]
        self.profile = _profile_of(path)
        version = None
        if "schema_version" in schema:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            version = row[0] if row else None
        self.unknown = UnknownRecords("Hermes Agent")
        if version is not None:
            self.unknown.version = f"(state schema {version})"

    def _select(self, names: tuple[str, ...], have: frozenset[str]) -> str:
        return ", ".join(n if n in have else f"NULL AS {n}" for n in names)

    def sessions(self) -> list[sqlite3.Row]:
        order = "started_at, id" if "started_at" in self.scols else "id"
        return self.conn.execute(
            f"SELECT {self._select(_SESSION_COLUMNS, self.scols)} FROM sessions ORDER BY {order}"
        ).fetchall()

    def signatures(self) -> dict[str, list[Any]]:
        """session id -> [row count, max id, active sum, compacted sum, newest timestamp], in one grouped query."""
        active = "total(active)" if "active" in self.mcols else "count(*)"
        compacted = "total(compacted)" if "compacted" in self.mcols else "0"
        ts = "max(timestamp)" if "timestamp" in self.mcols else "NULL"
        return {
            sid: [n, top, a, c, newest]
            for sid, n, top, a, c, newest in self.conn.execute(
                f"SELECT session_id, count(*), max(id), {active}, {compacted}, {ts} FROM messages GROUP BY session_id"
            )
        }

    def prefix(self, native: str, last: int) -> list[Any]:
        """[count, active sum, compacted sum] of a session's rows up to id ``last``."""
        active = "total(active)" if "active" in self.mcols else "count(*)"
        compacted = "total(compacted)" if "compacted" in self.mcols else "0"
        row = self.conn.execute(
            f"SELECT count(*), {active}, {compacted} FROM messages WHERE session_id = ? AND id <= ?", (native, last)
        ).fetchone()
        return list(row)

    def messages(self, native: str, after: int | None = None) -> Iterator[sqlite3.Row]:
        where = " AND id > ?" if after is not None else ""
        params = (native, after) if after is not None else (native,)
        yield from self.conn.execute(
            f"SELECT {self._select(_MESSAGE_COLUMNS, self.mcols)} FROM messages WHERE session_id = ?{where} ORDER BY id",
            params,
        )

    def row_keys(self, native: str) -> set[str]:
        return {_row_key(r) for r in self.messages(native)}


def _profile_of(path: str) -> str | None:
    p = Path(path)
    return p.parent.name if p.parent.parent.name == "profiles" else None


def _row_key(row: sqlite3.Row) -> str:
    """What makes a row a copy of another: the same role, content and tool fields."""
    return digest(row["role"], row["content"], row["tool_call_id"], row["tool_calls"])


def _is_subagent(srow: sqlite3.Row) -> bool:
    """A delegated task's session: its prompt was written by the parent agent, not a person."""
    if srow["source"] == "tool":
        return True
    config = _json(srow["model_config"])
    return isinstance(config, dict) and config.get("_delegate_from") is not None


class _SessionRead:
    """Turns one session's rows into Events, in id order."""

    def __init__(self, store: _Store, counter: EventCounter, *, subagent: bool, seen: set[str] | None) -> None:
        self.store = store
        self.counter = counter
        self.subagent = subagent
        #: Keys of rows already read (and the parent's, for a continuation): None when the
        #: session shows no compression, so nothing is taken for a copy.
        self.seen = seen
        self.last_id: int | None = None

    def rows(self, rows: Iterator[sqlite3.Row]) -> Iterator[Event]:
        for row in rows:
            self.last_id = row["id"]
            if row["active"] == 0 and not row["compacted"]:
                continue  # rewound by the person: not part of the conversation any more
            if self.seen is not None:
                key = _row_key(row)
                if key in self.seen:
                    continue  # a compaction's copy of a row already indexed
                self.seen.add(key)
            yield from self.row(row)

    def row(self, row: sqlite3.Row) -> Iterator[Event]:
        make = self.counter.make
        ts = epoch(row["timestamp"])
        role = row["role"]
        text = message_text(row["content"])
        if role == "user":
            if text.lstrip().startswith(_COMPACTION_PREFIX) or text.lstrip().startswith(_HARNESS_PREFIXES):
                ev = make("meta", "provider", text, ts=ts)
            else:
                ev = make("user", "provider" if self.subagent else "human", text, ts=ts)
            if ev is not None:
                yield ev
        elif role == "assistant":
            yield from self._assistant(row, text, ts)
        elif role == "tool":
            out, code, failed = tool_output(row["content"])
            ev = make(
                "tool_result",
                "tool",
                out,
                ts=ts,
                tool=str_or_none(row["tool_name"]),
                call_id=str_or_none(row["tool_call_id"]),
                exit_code=code,
                is_error=failed,
            )
            if ev is not None:
                yield ev
        elif role == "system":
            if (ev := make("meta", "provider", text, ts=ts)) is not None:
                yield ev
        else:
            self.store.unknown.saw(f"role:{role}")

    def _assistant(self, row: sqlite3.Row, text: str, ts: float | None) -> Iterator[Event]:
        make = self.counter.make
        said: list[str] = []
        for thought in (row["reasoning"], row["reasoning_content"]):
            if isinstance(thought, str) and thought.strip() and thought not in said:
                said.append(thought)
                if (ev := make("reasoning", "agent", thought, ts=ts)) is not None:
                    yield ev
        said_as: tuple[Kind, Origin] = (
            ("meta", "provider") if text.lstrip().startswith(_COMPACTION_PREFIX) else ("assistant", "agent")
        )
        kind, origin = said_as
        if (ev := make(kind, origin, text, ts=ts)) is not None:
            yield ev
        for call in openai_tool_calls(_json(row["tool_calls"])):
            ev = make(
                "tool_call",
                "agent",
                render_call(call.name, call.arguments),  # Hermes' own rendering of its tools' arguments
                ts=ts,
                tool=call.name,
                call_id=call.id or str_or_none(call.raw.get("call_id")),  # Hermes also writes ``call_id``
            )
            if ev is not None:
                yield ev


def _session(store: _Store, srow: sqlite3.Row, sig: list[Any] | None, subagent: bool) -> Session:
    native = srow["id"]
    cwd = str_or_none(srow["cwd"])
    parent = str_or_none(srow["parent_session_id"])
    started = epoch(srow["started_at"])
    updated = max(
        (t for t in (epoch(srow["ended_at"]), epoch(sig[4]) if sig else None, started) if t is not None), default=None
    )
    title = str_or_none(srow["title"])
    title_source = _TITLE_SOURCES.get(srow["title_source"]) if isinstance(srow["title_source"], str) else None
    tokens_in = [int_or_none(srow[c]) for c in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
    return Session(
        id=session_id(PROVIDER, native),
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source=title_source if title else None,
        cwd=cwd,
        git_branch=str_or_none(srow["git_branch"]),
        git_repo=str_or_none(srow["git_repo_root"]),
        model=str_or_none(srow["model"]),
        started=started,
        updated=updated,
        parent=session_id(PROVIDER, parent) if parent else None,
        # A delegated subagent cannot be resumed on its own; its parent can.
        resume=resume_command(
            cwd, parent if parent and subagent else native, str_or_none(srow["profile_name"]) or store.profile
        ),
        source=store.path,
        tokens_in=sum(t for t in tokens_in if t is not None) if any(t is not None for t in tokens_in) else None,
        tokens_out=int_or_none(srow["output_tokens"]),
    )


def _read_store(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        store = _Store(conn, schema, source.path)  # it reads schema_version: corruption can show here first
        yield from _read_sessions(store, signatures)
        if (notice := store.unknown.notice(source.path)) is not None:
            yield notice

    # One snapshot for the whole read, while Hermes writes.
    return read_database(source.path, "Hermes Agent", _REQUIRED, cursor, body)


def _read_sessions(store: _Store, signatures: SessionSignatures) -> Iterator[Item]:
    """Every session with messages, Unchanged / Partial / whole as its signature says (kept in ``signatures``)."""
    srows = store.sessions()
    ended_by_compression = {r["id"] for r in srows if r["end_reason"] == "compression"}
    sigs = store.signatures()
    for srow in srows:
        native = srow["id"]
        sig = sigs.get(native)
        if not isinstance(native, str) or not native or sig is None:
            continue  # a session without a single message has nothing to find
        sid = session_id(PROVIDER, native)
        row_digest = digest(*srow)
        before = signatures.known.get(native)
        before = before if isinstance(before, dict) else None
        if before is not None and before.get("sig") == sig and before.get("row") == row_digest:
            signatures.record(native, before)
            yield Unchanged(session=sid)
            continue
        parent = srow["parent_session_id"]
        subagent = _is_subagent(srow)
        continuation = parent in ended_by_compression and not subagent
        dedup = bool(sig[3]) or continuation
        meta = _session(store, srow, sig, subagent)
        yield meta
        after: int | None = None
        start = 0
        if (
            before is not None
            and not dedup
            and not before.get("dedup")
            and isinstance(before.get("last"), int)
            and isinstance(before.get("sig"), list)
            and len(before["sig"]) == 5
            and store.prefix(native, before["last"]) == [before["sig"][0], before["sig"][2], before["sig"][3]]
        ):
            # Only rows after the last one read are new: the events before them stay.
            after, start = before["last"], int(before.get("seq", 0))
            yield Partial(session=sid, from_seq=start)
        seen: set[str] | None = None
        if dedup:
            seen = store.row_keys(parent) if continuation else set()
        counter = EventCounter(sid, start)
        reader = _SessionRead(store, counter, subagent=subagent, seen=seen)
        yield from reader.rows(store.messages(native, after))
        signatures.record(native, {"sig": sig, "row": row_digest, "seq": counter.seq, "last": sig[1], "dedup": dedup})


class HermesAdapter:
    """Hermes Agent's ``state.db`` and its profiles' ``profiles/<name>/state.db``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_home("hermes", env)
        assert home is not None
        return [home / "state.db", home / "profiles"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        home = manifest.agent_home("hermes", env)
        assert home is not None
        yield from sqlite_source(PROVIDER, home / "state.db")
        try:
            profiles = sorted(p for p in (home / "profiles").iterdir() if os.path.isdir(p))
        except OSError:
            profiles = []
        for profile in profiles:
            yield from sqlite_source(PROVIDER, profile / "state.db")
        yield from _unread_transcripts(home)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        """Every session of one state.db; with the last read's Cursor, untouched sessions come as Unchanged."""
        yield from _read_store(source, cursor)


def _unread_transcripts(home: Path) -> Iterator[Notice]:
    """Gateway transcripts (``sessions/*.jsonl``, ``session_*.json``) that some Hermes builds wrote. Their
    shape is not pinned down and 0.19 writes none: when they are all a home holds, say so instead of
    reporting nothing; beside a state.db they are its older copies."""
    if os.path.exists(home / "state.db"):
        return
    try:
        names = [e.name for e in os.scandir(home / "sessions") if e.name.endswith((".jsonl", ".json"))]
    except OSError:
        return
    if names:
        yield Notice(
            source=str(home / "sessions"),
            reason=f"{len(names)} Hermes gateway transcript file(s) and no "
            "state.db: Voyager does not read this older layout yet",
        )


ADAPTER = HermesAdapter()


def probe(path: str | os.PathLike[str]) -> str:
    """``state.db`` when the file holds Hermes's tables, ``unknown-schema`` or ``unreadable`` otherwise (for doctor)."""
    return probe_store(path, _REQUIRED, "state.db")
