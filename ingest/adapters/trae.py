"""The Trae IDE adapter: ByteDance's VS Code fork, its agent chats in ``state.vscdb`` (documented, not yet observed).

Trae (and its Chinese builds, Trae CN and TRAE SOLO CN) keeps its AI agent's sessions in VS Code's
key-value databases, as agentsview's ``trae_provider.go`` reads them: ``<User>/globalStorage/state.vscdb``
and each ``<User>/workspaceStorage/<id>/state.vscdb`` (that workspace's: its ``workspace.json`` names
the folder, the sessions' cwd), ``ItemTable`` key ``memento/icube-ai-agent-storage``, a JSON value::

    {"list": [{"sessionId", "createdAt", "updatedAt", "model",
               "messages": [{"role": "user"|"assistant", "content", "agentTaskContent", "timestamp",
                             "model", "turnIndex"}, …]}, …]}

Times are epoch seconds or milliseconds, or ISO text. An assistant message with no ``content`` keeps
its text in ``agentTaskContent`` (a string, or an object's ``content``/``text``/``proposal``, or its
``guideline.planItems``). Only the words are kept there: tool calls are not stored in this key.

Newer builds keep their agent data in ``<Trae>/ModularData/ai-agent/database.db`` instead, which is
**not** SQLite (encrypted): it is found and reported as unreadable (``voyager doctor`` lists it),
never as "no sessions". Each database holds many sessions: the Cursor keeps a signature per session,
and an untouched one comes back ``Unchanged``. No command reopens a chat outside the IDE.
"""

from __future__ import annotations

import os
import sqlite3
from functools import partial
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    epoch,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters._vscode import (
    STATE_DB,
    chat_items,
    item,
    table_exists,
    workspace_dirs,
    workspace_folder,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, fingerprint
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.ingest.sqlite import digest, open_store, sqlite_source, unreadable
from voyager_sessions.core.model import Session, session_id

PROVIDER = "trae"
LABEL = "Trae"
APPS = ("Trae", "Trae CN", "TRAE SOLO CN")
KEY = "memento/icube-ai-agent-storage"
#: The newer builds' agent store, below the app's user-data dir.
MODULAR = Path("ModularData", "ai-agent", "database.db")
SQLITE_MAGIC = b"SQLite format 3\x00"
ENCRYPTED = "unreadable (encrypted; no reader exists)"


def user_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_TRAE_HOME`` (one user dir, authoritative), else the ``User`` dir of every Trae build."""
    named = manifest.agent_home(PROVIDER, env)
    return [named] if named is not None else paths.vscode_user_dirs(env, APPS)


def assistant_text(message: dict[str, Any]) -> Any:
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content
    task = message.get("agentTaskContent")
    if isinstance(task, str):
        return task
    task = as_dict(task)
    for key in ("content", "text", "proposal"):
        if isinstance(task.get(key), str) and task[key].strip():
            return task[key]
    items = list_or_empty(as_dict(task.get("guideline")).get("planItems"))
    return "\n".join(i["content"] for i in items if isinstance(i, dict) and isinstance(i.get("content"), str))


def session_items(session: dict[str, Any], cwd: str | None, path: str, unknown: UnknownRecords) -> list[Item]:
    native = str_or_none(session.get("sessionId"))
    if native is None:
        unknown.saw("session without a sessionId")
        return []
    sid = session_id(PROVIDER, native)
    drafts: list[Draft] = []
    model = str_or_none(session.get("model"))
    stamps: list[float] = []
    for message in list_or_empty(session.get("messages")):
        if not isinstance(message, dict):
            unknown.saw("message:not-object")
            continue
        ts = epoch(message.get("timestamp"))
        if ts is not None:
            stamps.append(ts)
        role = str(message.get("role") or "").lower()
        if role == "user":
            drafts.append(("user", "human", message.get("content"), {"ts": ts}))
        elif role == "assistant":
            model = str_or_none(message.get("model")) or model
            drafts.append(("assistant", "agent", assistant_text(message), {"ts": ts}))
        else:
            unknown.saw(f"role:{role}")
    events = list(number(EventCounter(sid, 0), drafts))
    if not events:
        return []
    session_row = Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        cwd=cwd,
        model=model,
        started=epoch(session.get("createdAt")) or (min(stamps) if stamps else None),
        updated=epoch(session.get("updatedAt")) or (max(stamps) if stamps else None),
        resume=None,
        source=path,
    )
    return [session_row, *events]


def read_state_db(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    path = source.path
    known = cursor.state.get("sessions") if cursor is not None else None
    known = known if isinstance(known, dict) else {}
    out: dict[str, Any] = {}
    unknown = UnknownRecords(LABEL)
    opened = open_store(path, LABEL, {}, lenient_text=True)
    if isinstance(opened, Notice):
        yield opened
        return
    conn, _ = opened
    folder = Path(path).parent
    cwd = workspace_folder(folder) if folder.parent.name == "workspaceStorage" else None
    try:
        raw = item(conn, "ItemTable", KEY) if table_exists(conn, "ItemTable") else None
    except sqlite3.DatabaseError as exc:
        yield unreadable(path, exc)
        return
    finally:
        conn.close()
    if raw is not None:
        try:
            store = decode_json(raw)
        except ValueError:
            store = None
        listed = as_dict(store).get("list")
        if not isinstance(listed, list):
            yield Notice(source=path, reason=f"the {KEY} value holds no session list; skipped")
        for session in listed if isinstance(listed, list) else ():
            if not isinstance(session, dict) or not str_or_none(session.get("sessionId")):
                unknown.saw("session without a sessionId")
                continue
            read = partial(session_items, session, cwd, path, unknown)
            yield from chat_items(PROVIDER, session["sessionId"], digest(repr(session)), known, out, read)
    if (notice := unknown.notice(path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": out})


def read_modular(path: str) -> Iterator[Item]:
    try:
        with open_regular(path) as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        yield Notice(source=path, reason=f"cannot read: {exc.strerror or exc}", fatal=True, transient=True)
        return
    shape = "a SQLite database of a shape Voyager does not know" if head == SQLITE_MAGIC else ENCRYPTED
    yield Notice(source=path, fatal=True, reason=f"Trae's newer agent store present but {shape}; not indexed")


class TraeAdapter:
    """Trae's agent chats in its ``state.vscdb`` databases, and its newer (encrypted) store, reported."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        users = user_dirs(env)
        return [*users, *(u.parent / MODULAR for u in users)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for user in user_dirs(env):
            yield from sqlite_source(PROVIDER, user / "globalStorage" / STATE_DB, empty_ok=True)
            for ws in workspace_dirs(user):
                yield from sqlite_source(PROVIDER, ws / STATE_DB, empty_ok=True)
            modular = user.parent / MODULAR
            if os.path.isfile(modular):
                try:
                    yield Source(
                        provider=PROVIDER, path=str(modular), fingerprint=fingerprint(modular), append_only=False
                    )
                except OSError:
                    continue

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if source.path.endswith(os.sep + str(MODULAR)):
            return read_modular(source.path)
        return read_state_db(source, cursor)


def probe(path: str | os.PathLike[str]) -> str:
    """``state.vscdb`` with Trae's agent key, one without (``no-chat``), or the newer store (unreadable)."""
    p = os.fspath(path)
    if p.endswith(os.sep + str(MODULAR)):
        return ENCRYPTED
    opened = open_store(p, LABEL, {}, lenient_text=True)
    if isinstance(opened, Notice):
        return "unreadable"
    conn, _ = opened
    try:
        has = table_exists(conn, "ItemTable") and item(conn, "ItemTable", KEY) is not None
        return "icube-ai-agent-storage" if has else "no-chat"
    except sqlite3.DatabaseError:
        return "unreadable"
    finally:
        conn.close()


ADAPTER = TraeAdapter()
