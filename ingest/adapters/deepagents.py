"""The Deep Agents Code adapter (``dcode``): ``~/.deepagents/.state/sessions.db`` (observed, 0.1.88), read-only.

LangChain's terminal coding agent keeps its threads in LangGraph's SQLite checkpointer:

* ``writes(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)``:
  what each step of the graph wrote; the rows with ``channel = 'messages'`` hold the conversation, each
  ``value`` a msgpack list of the messages that step added.
* ``checkpoints(thread_id, checkpoint_ns, checkpoint_id, …, checkpoint, metadata)``: the state after each
  step; in other LangGraph versions its ``channel_values.messages`` holds the *whole* history again.
* ``dcode_thread_workspaces(thread_id, cwd, …)``: the working directory of each thread.

Messages are LangChain objects serialised as msgpack extension 5, ``[module, class, fields, method]``
(msgspec decodes them: no LangChain needed). ``HumanMessage`` is the person's prompt, ``AIMessage``
the reply (``content`` a string or blocks: ``reasoning`` summaries, ``text``, and ``tool_calls``),
``ToolMessage`` a result (``artifact.exit_code``, ``status``), ``SystemMessage`` meta.

A step's rows are not in time order by rowid (a final reply was seen written before the tool result
that preceded it): they are ordered by ``checkpoint_id`` (LangGraph's ids are time-ordered UUIDs,
whose time is also each message's), then ``task_path`` and ``idx``. Every message has an ``id``, and
each is indexed once however many rows or checkpoints repeat it: one event per message, never one
per checkpoint. The checkpoints' copy is read only for a thread whose writes hold no message.

One database holds every thread, so the Cursor keeps a signature per thread (the count, newest rowid
and total size of its message rows and checkpoints): an untouched thread comes back ``Unchanged``.
Resume: ``dcode -r <thread id>`` in the thread's directory.
"""

from __future__ import annotations

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
    int_or_none,
    join_text,
    json_column,
    list_or_empty,
    read_database,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, exit_code, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, probe_store, sqlite_source
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "deepagents"
LABEL = "Deep Agents Code"
_REQUIRED = {
    "checkpoints": frozenset({"thread_id", "checkpoint_id", "checkpoint"}),
    "writes": frozenset({"thread_id", "checkpoint_id", "task_path", "idx", "channel", "value"}),
}
SHELL_TOOLS = frozenset({"execute", "shell", "bash"})
#: LangGraph's msgpack extension for a pydantic object (``[module, class, fields, method]``).
_EXT_PYDANTIC = 5
#: Extensions nested deeper than this are corrupt or hostile, not a message.
_MAX_EXT_DEPTH = 32
#: 100 ns ticks from the Gregorian epoch (UUID time) to the Unix epoch.
_UUID_EPOCH = 0x01B21DD213814000


def db_path(env: Mapping[str, str]) -> Path:
    base = manifest.agent_home(PROVIDER, env)
    assert base is not None
    return base / ".state" / "sessions.db"


def resume_command(cwd: str | None, thread: str) -> str | None:
    return resume_in(cwd, "dcode", opt("-r", thread))


def uuid_time(value: Any) -> float | None:
    """The time in a version-6 (or version-1) UUID, as LangGraph's checkpoint ids are; None for any other."""
    if not isinstance(value, str):
        return None
    hexa = value.replace("-", "")
    if len(hexa) != 32:
        return None
    try:
        if hexa[12] == "6":
            ticks = int(hexa[:12] + hexa[13:16], 16)
        elif hexa[12] == "1":
            ticks = int(hexa[13:16] + hexa[8:12] + hexa[:8], 16)
        else:
            return None
    except ValueError:
        return None
    return (ticks - _UUID_EPOCH) / 1e7


def decode_blob(data: Any) -> Any:
    """A msgpack blob with LangGraph's extensions: a pydantic object as its fields plus ``"__class__"``;
    any other extension as None. Raises ``msgspec.DecodeError`` for damaged data."""
    depth = 0

    def ext(code: int, payload: memoryview) -> Any:
        nonlocal depth
        if depth >= _MAX_EXT_DEPTH:
            raise msgspec.DecodeError("extensions nested too deep")
        depth += 1
        try:
            value = msgspec.msgpack.decode(payload, ext_hook=ext)
        finally:
            depth -= 1
        if isinstance(value, list) and len(value) >= 3 and isinstance(value[2], dict):
            return {**value[2], "__class__": value[1] if isinstance(value[1], str) else None, "__ext__": code}
        return None

    if not isinstance(data, (bytes, bytearray)):
        return None
    return msgspec.msgpack.decode(bytes(data), ext_hook=ext)


def message_drafts(
    message: dict[str, Any], ts: float | None, unknown: UnknownRecords, facts: dict[str, Any]
) -> Iterator[Draft]:
    """The drafts of one LangChain message (decoded: its fields, ``__class__`` its class)."""
    kind = message.get("type") or message.get("__class__")
    content = message.get("content")
    if kind in ("human", "HumanMessage"):
        yield ("user", "human", join_text(content), {"ts": ts})
    elif kind in ("ai", "AIMessage", "AIMessageChunk"):
        meta = as_dict(message.get("response_metadata"))
        facts["model"] = str_or_none(meta.get("model_name")) or str_or_none(meta.get("model")) or facts.get("model")
        usage = as_dict(message.get("usage_metadata"))
        facts["in"] = facts.get("in", 0) + (int_or_none(usage.get("input_tokens")) or 0)
        facts["out"] = facts.get("out", 0) + (int_or_none(usage.get("output_tokens")) or 0)
        if isinstance(content, str):
            yield ("assistant", "agent", content, {"ts": ts})
        for block in list_or_empty(content):
            block = as_dict(block)
            btype = block.get("type")
            if btype == "reasoning":
                summary = join_text(block.get("summary"), ("summary_text", "text"))
                yield ("reasoning", "agent", summary or str_or_none(block.get("reasoning")), {"ts": ts})
            elif btype == "thinking":
                yield ("reasoning", "agent", str_or_none(block.get("thinking")), {"ts": ts})
            elif btype == "text":
                yield ("assistant", "agent", str_or_none(block.get("text")), {"ts": ts})
        for call in list_or_empty(message.get("tool_calls")):
            call = as_dict(call)
            name = str_or_none(call.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, call.get("args"), SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(call.get("id"))},
            )
    elif kind in ("tool", "ToolMessage"):
        code = exit_code(as_dict(message.get("artifact")).get("exit_code"))
        failed = message.get("status") == "error" or (code is not None and code != 0)
        yield (
            "tool_result",
            "tool",
            join_text(content),
            {
                "ts": ts,
                "tool": str_or_none(message.get("name")),
                "call_id": str_or_none(message.get("tool_call_id")),
                "exit_code": code,
                "is_error": failed,
            },
        )
    elif kind in ("system", "SystemMessage"):
        yield ("meta", "provider", join_text(content), {"ts": ts})
    else:
        unknown.saw(f"message:{kind}")


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        sigs: dict[str, list[Any]] = {}
        for tid, n, top, size in conn.execute(
            "SELECT thread_id, count(*), max(rowid), total(length(value)) FROM writes "
            "WHERE channel = 'messages' GROUP BY thread_id"
        ):
            sigs[tid] = [n, top, size]
        for tid, n, top in conn.execute(
            "SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints GROUP BY thread_id"
        ):
            sigs.setdefault(tid, []).extend([n, top])
        cwds: dict[str, str | None] = {}
        if {"thread_id", "cwd"} <= schema.get("dcode_thread_workspaces", frozenset()):
            cwds = {
                tid: str_or_none(cwd) for tid, cwd in conn.execute("SELECT thread_id, cwd FROM dcode_thread_workspaces")
            }
        for thread in sorted(t for t in sigs if isinstance(t, str) and t):
            sig = [digest(cwds.get(thread)), *sigs[thread]]
            if signatures.same(thread, sig):
                yield Unchanged(session=session_id(PROVIDER, thread))
                continue
            items = list(_thread(conn, thread, cwds.get(thread), unknown, source.path))
            if not any(not isinstance(i, (Session, Notice)) for i in items):
                continue  # a thread with no message (a run that never got one) has nothing to find
            signatures.record(thread, sig)
            yield from items
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _messages(
    conn: sqlite3.Connection, thread: str, unknown: UnknownRecords
) -> Iterator[tuple[dict[str, Any], float | None]]:
    """The thread's messages in order, each once (by id), with the time of the step that wrote it."""
    seen: set[str] = set()
    found = False
    rows = conn.execute(
        "SELECT checkpoint_id, value FROM writes WHERE thread_id = ? AND channel = 'messages' "
        "ORDER BY checkpoint_id, task_path, idx",
        (thread,),
    )
    for checkpoint, value in rows:
        for message in _decoded(value, unknown):
            found = True
            if _fresh(message, seen):
                yield message, uuid_time(checkpoint)
    if found:
        return
    # No write names a message: this LangGraph keeps the history in the checkpoints (the latest has it all).
    row = conn.execute(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    if row is None:
        return
    try:
        state = as_dict(decode_blob(row[1]))
    except (msgspec.DecodeError, RecursionError):
        unknown.saw("checkpoint:not-msgpack")
        return
    for message in list_or_empty(as_dict(state.get("channel_values")).get("messages")):
        if isinstance(message, dict) and _fresh(message, seen):
            yield message, uuid_time(row[0])


def _decoded(value: Any, unknown: UnknownRecords) -> list[dict[str, Any]]:
    try:
        decoded = decode_blob(value)
    except (msgspec.DecodeError, RecursionError):
        unknown.saw("write:not-msgpack")
        return []
    listed = decoded if isinstance(decoded, list) else [decoded]
    return [m for m in listed if isinstance(m, dict)]


def _fresh(message: dict[str, Any], seen: set[str]) -> bool:
    mid = message.get("id")
    if not isinstance(mid, str) or not mid:
        return True
    if mid in seen:
        return False
    seen.add(mid)
    return True


def _thread(
    conn: sqlite3.Connection, thread: str, cwd: str | None, unknown: UnknownRecords, path: str
) -> Iterator[Item]:
    sid = session_id(PROVIDER, thread)
    facts: dict[str, Any] = {}
    drafts: list[Draft] = []
    times: list[float] = []
    for message, ts in _messages(conn, thread, unknown):
        if ts is not None:
            times.append(ts)
        drafts.extend(message_drafts(message, ts, unknown, facts))
    if cwd is None:
        row = conn.execute(
            "SELECT metadata FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1", (thread,)
        ).fetchone()
        cwd = str_or_none(as_dict(as_dict(json_column(row[0]) if row else None).get("workspace")).get("cwd"))
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=thread,
        cwd=cwd,
        model=facts.get("model"),
        started=min(times, default=None),
        updated=max(times, default=None),
        resume=resume_command(cwd, thread),
        source=path,
        tokens_in=facts.get("in") or None,
        tokens_out=facts.get("out") or None,
    )
    yield from number(EventCounter(sid, 0), drafts)


class DeepAgentsAdapter:
    """dcode's one SQLite checkpointer of threads."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [db_path(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from sqlite_source(PROVIDER, db_path(env), named=bool(env.get("VOYAGER_DEEPAGENTS_HOME")))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = DeepAgentsAdapter()


def probe(path: str) -> str:
    """``checkpoints+writes`` (LangGraph's SQLite saver), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "checkpoints+writes")
