"""The Grok Build (xAI) adapter: ``$GROK_HOME/sessions/<percent-encoded cwd>/<id>/`` and ``grok.db``, read-only.

A session is a folder: ``summary.json`` (``info.id``, ``info.cwd``, ``generated_title``,
``session_summary``, times, ``current_model_id``, ``head_branch``, ``git_root_dir``,
``parent_session_id``, ``session_kind``, ``chat_format_version``), ``chat_history.jsonl``
(the conversation as items), ``updates.jsonl`` (the ACP update stream), ``events.jsonl``
and ``signals.json`` (telemetry and metrics: never indexed). Which of the two transcripts
is authoritative is disputed among the peers (FR, cass, DJ read ``updates.jsonl``; AV, VY
``chat_history.jsonl``). Voyager reads ``chat_history.jsonl`` when it holds anything (AV's
samples were serialised by Grok Build's own types) and falls back to ``updates.jsonl``
(merging its chunks, honouring ``rewind_marker``); one session is never read from both.
``probe`` names which a folder turned out to be: ``chat-history-v1``, ``chat-history-v0``
or ``updates-jsonl``. The mapping itself lives in :mod:`._grok_history`.

Each folder is one Source, fingerprinted over those files and re-read whole when one
changes (Grok rewrites ``chat_history.jsonl`` on compaction and rewind). A fork
(``parent_session_id``) opens with a copy of its parent's items, ``inherited_prefix_len`` of
them: when the parent's folder is there too, the copy is left out (it is indexed in the
parent). A ``session_kind`` of ``subagent…`` makes the prompt the parent agent's
(``user``/``provider``), and links it to the parent.

``grok.db`` (``workspaces``, ``sessions``, ``messages``; DJ) holds sessions too; one whose id
is also a session folder is a copy and is skipped. Per-session signatures in the Cursor make
an untouched one ``Unchanged``.

``~/.grok`` is shared with the unrelated community ``grok-cli``, which writes only
``settings.json``/``user-settings.json`` there: such a folder has no ``sessions/`` and no
``grok.db`` and yields nothing, without a word. Homes: ``VOYAGER_GROK_HOME``, ``GROK_HOME``,
``~/.grok``. Resume: docs.x.ai's Sessions page, "``grok --resume <session-id>``  # a
specific session", sessions kept per working directory: ``cd <cwd> && grok --resume <id>``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    epoch,
    int_or_none,
    read_database,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, absolute_path, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters._grok_history import SHELL_TOOLS, HistoryMapper, UpdatesReducer, content_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.files import folder_fingerprint, open_regular
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import Record, decode_json, read_records
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, probe_store, sqlite_source
from voyager_sessions.core.model import Session, session_id

PROVIDER = "grok"
CHAT = "chat_history.jsonl"
UPDATES = "updates.jsonl"
SUMMARY = "summary.json"
DB_NAME = "grok.db"
_DB_REQUIRED = {"sessions": frozenset({"id"}), "messages": frozenset({"session_id", "role", "message_json"})}
_decode = decode_json


def grok_home(env: Mapping[str, str]) -> Path:
    home = manifest.agent_home("grok", env)
    assert home is not None
    return home


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``grok --resume <id>`` in the session's directory (Grok keeps sessions per working directory)."""
    return resume_in(cwd, "grok", opt("--resume", native_id))


def _subdirs(folder: Path) -> Iterator[Path | Notice]:
    try:
        with os.scandir(folder) as it:
            entries = sorted((e for e in it if e.is_dir()), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        yield Notice(source=str(folder), reason=f"cannot read directory: {exc.strerror or exc}")
        return
    for entry in entries:
        yield Path(entry.path)


def _has(folder: Path, name: str) -> bool:
    try:
        return os.stat(folder / name).st_size > 0
    except OSError:
        return False


def transcript_of(folder: Path) -> Path | None:
    """The file a session folder is read from: ``chat_history.jsonl`` when it holds anything, else ``updates.jsonl``."""
    for name in (CHAT, UPDATES):
        if _has(folder, name):
            return folder / name
    return None


def _cwd_of(group: Path, summary: dict[str, Any]) -> str | None:
    info = summary.get("info") if isinstance(summary.get("info"), dict) else {}
    cwd = str_or_none(info.get("cwd")) or str_or_none(summary.get("cwd"))
    if cwd:
        return cwd
    try:
        with open_regular(group / ".cwd") as fh:
            marker = fh.read(1 << 16).decode("utf-8", "replace").strip()
        if marker:
            return marker
    except OSError:
        pass
    decoded = unquote(group.name)
    # Only an absolute path is a cwd: deja-vu's sample folder ("workspace%2Fregistry-demo") lacks the
    # leading "%2F", and a relative path would name a different directory wherever it is used.
    return absolute_path(decoded)


def _folder_ids(sessions: Path) -> dict[str, Path]:
    """session id (folder name) -> folder, for every session folder under ``sessions/``."""
    out: dict[str, Path] = {}
    for group in _subdirs(sessions):
        if isinstance(group, Path):
            for folder in _subdirs(group):
                if isinstance(folder, Path):
                    out.setdefault(folder.name, folder)
    return out


def read_folder(source: Source) -> Iterator[Item]:
    folder = Path(source.path)
    transcript = transcript_of(folder)
    if transcript is None:
        yield Notice(
            source=source.path,
            reason=f"no {CHAT} or {UPDATES} with anything in it any more",
            fatal=True,
            transient=True,
        )
        return
    summary: dict[str, Any] = {}
    if (folder / SUMMARY).exists():
        doc = read_json_object(folder / SUMMARY, fatal=False)
        if isinstance(doc, Notice):
            yield doc
        else:
            summary = doc
    info = summary.get("info") if isinstance(summary.get("info"), dict) else {}
    native = str_or_none(info.get("id")) or folder.name
    kind = str_or_none(summary.get("session_kind")) or ""
    subagent = kind.startswith("subagent")
    parent = str_or_none(summary.get("parent_session_id"))
    unknown = UnknownRecords("Grok Build")
    version = int_or_none(summary.get("chat_format_version"))
    if version is not None:
        unknown.version = f"(chat format v{version})"
    drafts: list[Draft] = []
    model: str | None = None
    first_ts = last_ts = None
    if transcript.name == CHAT:
        mapper = HistoryMapper(unknown, subagent=subagent)
        skip = _inherited(summary, parent, folder)
        for item in read_records(str(transcript), 0):
            if isinstance(item, Notice):
                yield item
                if item.fatal:
                    return
                continue
            if skip > 0:
                skip -= 1  # the parent's items a fork starts with: indexed in the parent
                continue
            drafts.extend(mapper.item(item.value))
        model = mapper.model
    else:
        reducer = UpdatesReducer(unknown, subagent=subagent)
        for item in read_records(str(transcript), 0):
            if isinstance(item, Notice):
                yield item
                if item.fatal:
                    return
                continue
            reducer.line(item.value)
        drafts = reducer.finish()
        first_ts, last_ts = reducer.first_ts, reducer.last_ts
    cwd = _cwd_of(folder.parent, summary)
    title = str_or_none(summary.get("generated_title")) or str_or_none(summary.get("session_summary"))
    sid = session_id(PROVIDER, native)
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source="agent" if title else None,
        cwd=cwd,
        git_branch=str_or_none(summary.get("head_branch")),
        git_repo=str_or_none(summary.get("git_root_dir")),
        model=str_or_none(summary.get("current_model_id")) or model,
        started=epoch(summary.get("created_at")) or first_ts,
        updated=epoch(summary.get("last_active_at")) or epoch(summary.get("updated_at")) or last_ts,
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=resume_command(cwd, parent if subagent and parent else native),
        source=source.path,
    )
    yield from number(EventCounter(sid, 0), drafts)
    if (notice := unknown.notice(str(transcript))) is not None:
        yield notice


def _inherited(summary: dict[str, Any], parent: str | None, folder: Path) -> int:
    """How many leading items are the parent's copy: ``inherited_prefix_len``, when the parent is on disk."""
    count = int_or_none(summary.get("inherited_prefix_len"))
    if not count or count < 0 or not parent:
        return 0
    return count if _has_folder(folder.parent.parent, parent) else 0


def _has_folder(sessions: Path, native: str) -> bool:
    """True when a ``sessions/<group>/<native>/`` folder is there: one stat a group (listing every session
    for each fork read would make a scan cost forks × sessions)."""
    if native in (".", "..") or os.path.basename(native) != native:
        return False  # a path, not a folder's name
    return any(isinstance(group, Path) and os.path.isdir(group / native) for group in _subdirs(sessions))


# -- grok.db ------------------------------------------------------------------------------


def read_db(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    path = source.path

    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        yield from _db_sessions(conn, schema, path, signatures, _folder_ids(Path(path).parent / "sessions"))

    return read_database(path, "Grok grok.db", _DB_REQUIRED, cursor, body)


def _db_sessions(
    conn: sqlite3.Connection,
    schema: Mapping[str, frozenset[str]],
    path: str,
    signatures: SessionSignatures,
    folders: dict[str, Path],
) -> Iterator[Item]:
    scols, mcols = schema["sessions"], schema["messages"]
    workspaces: dict[Any, str] = {}
    if {"id", "canonical_path"} <= schema.get("workspaces", frozenset()):
        workspaces = {w: p for w, p in conn.execute("SELECT id, canonical_path FROM workspaces") if isinstance(p, str)}
    seq = "seq" if "seq" in mcols else "rowid"
    sigs = {
        sid: [n, top, size]
        for sid, n, top, size in conn.execute(
            f"SELECT session_id, count(*), max({seq}), total(length(message_json)) FROM messages GROUP BY session_id"
        )
    }
    order = "created_at, id" if "created_at" in scols else "id"
    unknown = UnknownRecords("Grok (grok.db)")
    for row in conn.execute(f"SELECT * FROM sessions ORDER BY {order}").fetchall():
        row = dict(zip(row.keys(), tuple(row)))
        native = row.get("id")
        if not isinstance(native, str) or not native or native not in sigs:
            continue
        if native in folders:
            continue  # the same session as a session folder: that copy is read (a copy is no loss to report)
        sig = [digest(*row.values()), *sigs[native]]
        if signatures.same(native, sig):
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        signatures.record(native, sig)
        sid = session_id(PROVIDER, native)
        cwd = str_or_none(row.get("cwd_last")) or workspaces.get(row.get("workspace_id"))
        ts_col = "created_at" if "created_at" in mcols else "NULL"
        drafts: list[Draft] = []
        times: list[float] = []
        for role, body, created in conn.execute(
            f"SELECT role, message_json, {ts_col} FROM messages WHERE session_id = ? ORDER BY {seq}", (native,)
        ):
            ts = epoch(created)
            if ts is not None:
                times.append(ts)
            drafts.extend(_db_message(role, body, ts, unknown))
        title = str_or_none(row.get("title"))
        yield Session(
            id=sid,
            provider=PROVIDER,
            native_id=native,
            title=title,
            cwd=cwd,
            started=epoch(row.get("created_at")) or (min(times) if times else None),
            updated=max(times) if times else None,
            source=path,
        )
        yield from number(EventCounter(sid, 0), drafts)
    if (notice := unknown.notice(path)) is not None:
        yield notice


def _db_message(role: Any, body: Any, ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    try:
        message = _decode(body) if isinstance(body, (str, bytes)) else None
    except (msgspec.DecodeError, RecursionError):
        message = None
    if not isinstance(message, dict):
        unknown.saw("message_json:not-json")
        return
    content = message.get("content")
    if role == "system":
        return
    if role == "tool":
        yield (
            "tool_result",
            "tool",
            content_text(content),
            {"ts": ts, "call_id": str_or_none(message.get("tool_call_id"))},
        )
        return
    if role not in ("user", "assistant"):
        unknown.saw(f"role:{role}")
        return
    if isinstance(content, str):
        yield ("user" if role == "user" else "assistant", "human" if role == "user" else "agent", content, {"ts": ts})
        return
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            yield (
                "user" if role == "user" else "assistant",
                "human" if role == "user" else "agent",
                block.get("text"),
                {"ts": ts},
            )
        elif btype in ("thinking", "reasoning"):
            yield ("reasoning", "agent", block.get("thinking") or block.get("text"), {"ts": ts})
        elif btype == "tool_use":
            name = str_or_none(block.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, block.get("input"), SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
            )
        elif btype == "tool_result":
            yield (
                "tool_result",
                "tool",
                content_text(block.get("content")),
                {"ts": ts, "call_id": str_or_none(block.get("tool_use_id")), "is_error": block.get("is_error") is True},
            )
        elif btype != "image":
            unknown.saw(f"block:{btype}")


# -- the adapter ----------------------------------------------------------------------------


class GrokAdapter:
    """Grok Build's session folders and its ``grok.db``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = grok_home(env)
        return [home / "sessions", home / DB_NAME]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        home = grok_home(env)
        for group in _subdirs(home / "sessions"):
            if isinstance(group, Notice):
                yield group
                continue
            for folder in _subdirs(group):
                if isinstance(folder, Notice):
                    yield folder
                    continue
                if transcript_of(folder) is None:
                    continue  # created before anything was said, or metadata only
                try:
                    fp = folder_fingerprint(folder, [folder / CHAT, folder / UPDATES, folder / SUMMARY])
                except OSError:
                    continue
                yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)
        yield from sqlite_source(PROVIDER, home / DB_NAME)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if os.path.isdir(source.path):
            return read_folder(source)
        return read_db(source, cursor)


ADAPTER = GrokAdapter()


def probe(path: str | os.PathLike[str]) -> str:
    """``chat-history-v1``/``-v0`` or ``updates-jsonl`` for a session folder; ``grok.db`` for the database."""
    p = Path(path)
    if p.is_dir():
        transcript = transcript_of(p)
        if transcript is None:
            return "unreadable"
        if transcript.name == UPDATES:
            return "updates-jsonl"
        for item in read_records(str(transcript), 0):
            if isinstance(item, Record) and isinstance(item.value, dict):
                return "chat-history-v1" if "type" in item.value else "chat-history-v0"
        return "unknown-schema"
    return probe_store(p, _DB_REQUIRED, "grok.db")
