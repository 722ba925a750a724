"""The Zed adapter (``zed``, documented): agent threads in ``threads/threads.db``.

Where: Zed's data dir, ``$FLATPAK_XDG_DATA_HOME/zed`` or ``$XDG_DATA_HOME/zed`` (default
``~/.local/share/zed``) on Linux and ``~/Library/Application Support/Zed`` on macOS, each
holding ``threads/threads.db``.

Shape (Zed's own ``ThreadsDatabase``; agentsview and deja-vu agree): one table
``threads(id, summary, updated_at, data_type, data, parent_id, folder_paths,
folder_paths_order, created_at)``; ``summary`` is the title Zed generates, ``data`` the whole
thread as JSON, zstd-compressed when ``data_type = 'zstd'`` (every thread Zed writes now) and
plain when ``'json'`` (older rows). A thread is rewritten whole on every save, so each
thread's change is detected on its row (``updated_at``, the blob's length, the metadata
columns), kept per thread in ``Cursor.state``: an untouched thread is ``Unchanged``, a
touched one is read again whole.

The thread JSON comes in two generations: ``"version": "0.3.0"`` (messages tagged
``{"User": {content: [{"Text"}|{"Mention"}|{"Image"}]}}``, ``{"Agent": {content:
[{"Text"}|{"Thinking"}|{"RedactedThinking"}|{"ToolUse"}], tool_results: {id: result}}}`` and
the bare ``"Resume"`` marker) and the agent-1 ``SerializedThread`` (``0.1.0``/``0.2.0``:
``{role, segments: [{type: text|thinking|redacted_thinking}], tool_uses, tool_results,
context}``). A subagent's thread names its parent in ``parent_id`` (or
``subagent_context.parent_thread_id``); its user turns are the parent agent's prompts.
Attached context (mentions, agent-1 ``context``) and Zed's thread summary are ``meta``.
Tool results carry no exit code. Zed has no command that reopens a thread: no resume.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest import zstd
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    int_or_none,
    list_or_empty,
    parse_ts,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.jsonl import BadLine, decode_line
from voyager_sessions.ingest.sqlite import SessionSignatures, probe_store, sqlite_source
from voyager_sessions.core.model import Event, Kind, Origin, Session, session_id

PROVIDER = "zed"
LABEL = "Zed"
_HOMES = ("zed", "zed.mac")
_REQUIRED = {"threads": frozenset({"id", "summary", "updated_at", "data_type", "data"})}
_OPTIONAL = ("parent_id", "folder_paths", "folder_paths_order", "created_at")
#: Zed's shell tool: its input's ``command`` is what a person searches for.
_SHELL_TOOLS = frozenset({"terminal", "bash"})


def _tagged(item: Any) -> tuple[str | None, Any]:
    """``{"Tag": value}`` (serde's externally tagged enum) as (tag, value); a bare string is a unit variant."""
    if isinstance(item, str):
        return item, None
    if isinstance(item, dict) and len(item) == 1:
        ((tag, value),) = item.items()
        return tag, value
    return None, item


def result_text(content: Any) -> str:
    """A tool result's text, from any of the shapes Zed has written: a string, ``{"Text": …}``,
    ``{"type": "text", "text": …}``, ``{"text": …}`` or a list of those (images have no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (result_text(c) for c in content) if t)
    if isinstance(content, dict):
        for key, value in content.items():
            if key.lower() == "text" and isinstance(value, str):
                return value
    return ""


def first_folder(folders: Any, order: Any) -> str | None:
    """The first of a thread's workspace folders as the person opened them (Zed stores them sorted,
    newline-separated, with their original positions in ``folder_paths_order``)."""
    if not isinstance(folders, str) or not folders:
        return None
    listed = folders.split("\n")
    positions = [int(p) for p in order.split(",") if p.strip().isdigit()] if isinstance(order, str) else []
    if len(positions) == len(listed) and 0 in positions:
        return listed[positions.index(0)] or None
    return listed[0] or None


class _Thread:
    """One thread's JSON turned into events (both generations)."""

    def __init__(self, sid: str, subagent: bool, ts: float | None, unknown: UnknownRecords) -> None:
        self.counter = EventCounter(sid, 0)
        self.subagent = subagent
        self.ts = ts  # Zed keeps no per-message time: every event carries the thread's
        self.unknown = unknown

    def emit(self, kind: Kind, origin: Origin, text: str | None, **extra: Any) -> Iterator[Event]:
        if (ev := self.counter.make(kind, origin, text, ts=self.ts, **extra)) is not None:
            yield ev

    def prompt(self, text: str | None) -> Iterator[Event]:
        yield from self.emit("user", "provider" if self.subagent else "human", text)

    def events(self, doc: dict[str, Any]) -> Iterator[Event]:
        for message in list_or_empty(doc.get("messages")):
            tag, value = _tagged(message)
            if tag == "User":
                yield from self._user(as_dict(value))
            elif tag == "Agent":
                yield from self._agent(as_dict(value))
            elif tag == "Resume":
                continue  # "continue where you left off": no text
            elif isinstance(message, dict) and "role" in message:
                yield from self._legacy(message)
            else:
                self.unknown.saw(f"message {tag or type(message).__name__}")
        summary = doc.get("detailed_summary")
        if isinstance(summary, dict):  # agent-1: {"Generated": {"text": …}}
            summary = as_dict(summary.get("Generated")).get("text")
        yield from self.emit("meta", "provider", str_or_none(summary))

    def _user(self, message: dict[str, Any]) -> Iterator[Event]:
        for item in list_or_empty(message.get("content")):
            tag, value = _tagged(item)
            if tag == "Text":
                yield from self.prompt(str_or_none(value))
            elif tag == "Mention":
                mention = as_dict(value)
                yield from self.emit(
                    "meta", "provider", str_or_none(mention.get("content")) or str_or_none(mention.get("uri"))
                )
            elif tag != "Image":
                self.unknown.saw(f"user content {tag}")

    def _agent(self, message: dict[str, Any]) -> Iterator[Event]:
        results = as_dict(message.get("tool_results"))
        for item in list_or_empty(message.get("content")):
            tag, value = _tagged(item)
            if tag == "Text":
                yield from self.emit("assistant", "agent", str_or_none(value))
            elif tag == "Thinking":
                yield from self.emit("reasoning", "agent", str_or_none(as_dict(value).get("text")))
            elif tag == "ToolUse":
                use = as_dict(value)
                call_id, name = str_or_none(use.get("id")), str_or_none(use.get("name"))
                tool_input = use.get("input") if use.get("input") is not None else use.get("raw_input")
                yield from self.emit(
                    "tool_call",
                    "agent",
                    tool_call_text(name, tool_input, _SHELL_TOOLS),
                    tool=name,
                    call_id=call_id,
                )
                if call_id is not None and call_id in results:
                    yield from self._result(results.pop(call_id))
            elif tag != "RedactedThinking":  # redacted reasoning has no readable text
                self.unknown.saw(f"agent content {tag}")
        for result in results.values():  # results whose call is not in this message
            yield from self._result(result)

    def _result(self, result: Any) -> Iterator[Event]:
        r = as_dict(result)
        yield from self.emit(
            "tool_result",
            "tool",
            result_text(r.get("content")),
            tool=str_or_none(r.get("tool_name")),
            call_id=str_or_none(r.get("tool_use_id")),
            is_error=r.get("is_error") is True,
        )

    def _legacy(self, message: dict[str, Any]) -> Iterator[Event]:
        role = message.get("role")
        if role == "system":
            return  # Zed's own prompt; agent-1 did not keep it either
        if role not in ("user", "assistant"):
            self.unknown.saw(f"role {role}")
            return
        yield from self.emit("meta", "provider", str_or_none(message.get("context")))
        names: dict[str, str | None] = {}
        for seg in list_or_empty(message.get("segments")):
            seg = as_dict(seg)
            stype, text = seg.get("type"), str_or_none(seg.get("text"))
            if stype == "redacted_thinking":
                continue
            if stype not in ("text", "thinking"):
                self.unknown.saw(f"segment {stype}")
            elif role == "user":
                yield from self.prompt(text)
            else:
                yield from self.emit("assistant" if stype == "text" else "reasoning", "agent", text)
        for use in list_or_empty(message.get("tool_uses")):
            use = as_dict(use)
            call_id, name = str_or_none(use.get("id")), str_or_none(use.get("name"))
            names[call_id or ""] = name
            yield from self.emit(
                "tool_call",
                "agent",
                tool_call_text(name, use.get("input"), _SHELL_TOOLS),
                tool=name,
                call_id=call_id,
            )
        for result in list_or_empty(message.get("tool_results")):
            r = as_dict(result)
            call_id = str_or_none(r.get("tool_use_id"))
            yield from self.emit(
                "tool_result",
                "tool",
                result_text(r.get("content")),
                tool=names.get(call_id or ""),
                call_id=call_id,
                is_error=r.get("is_error") is True,
            )


def _decode(source: str, native: str, data_type: Any, data: Any) -> dict[str, Any] | Notice:
    """The thread document of one row, or a Notice naming the row and why it was skipped."""
    where = f"thread {native}"
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if not isinstance(raw, bytes):
        return Notice(source=source, where=where, reason=f"data is {type(data).__name__}, not a document; skipped")
    if data_type == "zstd":
        try:
            raw = zstd.decompress_blob(raw)
        except zstd.ZstdError as exc:
            return Notice(source=source, where=where, reason=f"{exc}; skipped")
    elif data_type != "json":
        return Notice(source=source, where=where, reason=f"data_type {data_type!r} is not one Voyager knows; skipped")
    try:
        doc = decode_line(raw.strip())
    except BadLine as exc:
        return Notice(source=source, where=where, reason=f"{exc}; skipped")
    if not isinstance(doc, dict):
        return Notice(source=source, where=where, reason=f"a JSON {type(doc).__name__}, not a thread; skipped")
    return doc


def _session(source: str, row: sqlite3.Row, doc: dict[str, Any], cols: frozenset[str]) -> Session:
    native = row["id"]
    parent = str_or_none(row["parent_id"]) or str_or_none(as_dict(doc.get("subagent_context")).get("parent_thread_id"))
    cwd = first_folder(row["folder_paths"], row["folder_paths_order"]) if "folder_paths" in cols else None
    if cwd is None:  # agent-1 threads name their worktrees in the project snapshot
        trees = as_dict(doc.get("initial_project_snapshot")).get("worktree_snapshots")
        cwd = str_or_none(as_dict(trees[0]).get("worktree_path")) if isinstance(trees, list) and trees else None
    model = as_dict(doc.get("model"))
    model_name = str_or_none(model.get("model"))
    if model_name and str_or_none(model.get("provider")):
        model_name = f"{model['provider']}/{model_name}"
    usage = as_dict(doc.get("cumulative_token_usage"))
    title = str_or_none(row["summary"]) or str_or_none(doc.get("title")) or str_or_none(doc.get("summary"))
    updated = parse_ts(row["updated_at"]) or parse_ts(doc.get("updated_at"))
    return Session(
        id=session_id(PROVIDER, native),
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source="agent" if title else None,  # Zed summarizes each thread itself
        cwd=cwd,
        model=model_name,
        started=(parse_ts(row["created_at"]) if "created_at" in cols else None) or updated,
        updated=updated,
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=None,
        source=source,
        tokens_in=int_or_none(usage.get("input_tokens")),
        tokens_out=int_or_none(usage.get("output_tokens")),
    )


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    return read_database(
        source.path,
        LABEL,
        _REQUIRED,
        cursor,
        lambda conn, schema, signatures: _threads(source.path, conn, schema["threads"], signatures),
    )


def _threads(
    path: str, conn: sqlite3.Connection, cols: frozenset[str], signatures: SessionSignatures
) -> Iterator[Item]:
    extra = ", ".join(c if c in cols else f"NULL AS {c}" for c in _OPTIONAL)
    unknown = UnknownRecords(LABEL)
    compressed_unread = 0
    rows = conn.execute(
        f"SELECT id, summary, updated_at, data_type, length(data) AS size, {extra} FROM threads ORDER BY updated_at, id"
    ).fetchall()
    for row in rows:
        native = row["id"]
        if not isinstance(native, str) or not native:
            continue
        signature = [
            row["updated_at"],
            row["data_type"],
            row["size"],
            row["summary"],
            row["parent_id"],
            row["folder_paths"],
            row["folder_paths_order"],
            row["created_at"],
        ]
        if signatures.same(native, signature):
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        if row["data_type"] == "zstd" and not zstd.available():
            compressed_unread += 1
            continue
        data = conn.execute("SELECT data FROM threads WHERE id = ?", (native,)).fetchone()
        doc = _decode(path, native, row["data_type"], data[0] if data else None)
        if isinstance(doc, Notice):
            yield doc
            continue
        meta = _session(path, row, doc, cols)
        yield meta
        yield from _Thread(
            meta.id, meta.parent is not None or bool(doc.get("subagent_context")), meta.updated, unknown
        ).events(doc)
        signatures.record(native, signature)
    if (notice := unknown.notice(path)) is not None:
        yield notice
    if compressed_unread:
        # Fatal (the source is retried every scan until zstd is installed), after everything readable.
        yield zstd.missing_notice(
            path, LABEL, fatal=True, detail=f"{compressed_unread} of {len(rows)} threads are zstd-compressed"
        )


def probe(path: str) -> str:
    """``threads`` for a threads database Voyager can read, else what is wrong with it (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "threads")


class ZedAdapter:
    """Zed's agent threads database (``threads/threads.db`` in Zed's data dir)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        found = [manifest.agent_home(h, env) for h in _HOMES]
        return list(dict.fromkeys(p / "threads" / "threads.db" for p in found if p is not None))

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        named = bool(env.get("VOYAGER_ZED_HOME"))
        for db in self.roots(env):
            found = list(sqlite_source(PROVIDER, db, named=named))
            yield from found
            if any(isinstance(s, Source) for s in found) and not zstd.available():
                yield zstd.missing_notice(
                    str(db),
                    LABEL,
                    fatal=False,
                    detail="Zed compresses every thread it saves; only uncompressed ones are read",
                )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = ZedAdapter()
