"""The Piebald adapter: the Piebald desktop app's ``app.db`` (documented, not yet observed), read-only.

Piebald keeps its chats in one SQLite database, normalised over several tables, as agentsview's
``piebald.go`` and splitrail's ``piebald.rs`` read it:

* ``chats(id, title, created_at, updated_at, message_count, current_directory, worktree_path,
  branch_name, project_id, is_deleted)`` and ``projects(id, directory, name)``;
* ``messages(id, parent_chat_id, parent_message_id, enabled, role, model, created_at, …tokens,
  finish_reason, error)``: a tree of messages per chat (``parent_message_id``);
* ``message_parts(id, parent_chat_message_id, part_type: "text"|"tool_call", part_index)``;
* a text part's ``message_part_text(message_part_id, is_thinking)`` and its chunks in
  ``message_content_nodes(id, parent_text_part_id, node_type, node_index)`` →
  ``message_node_text(node_id, content)``;
* a tool call part's ``message_part_tool_call(message_part_id, provider_tool_use_id, tool_name,
  tool_input, tool_result, tool_error, tool_state, sub_agent_chat_id)``: the call and its result in
  one row, and the chat of the subagent it started.

A message with several children is where the person edited or regenerated a turn: every branch is
indexed, in the order its messages were written (what a branch left behind said was still said, as
with Pi's session trees), and only the branch the app shows is not told apart. A subagent's
chat is a session under the chat whose tool call started it, and its prompts are that agent's.
Deleted chats are not read. The Cursor keeps a signature per chat (its row and its messages'
count and last change): an untouched chat comes back ``Unchanged``. Not run here (a desktop app);
it has no resume command.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    changed_sessions,
    parse_ts,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.sqlite import SessionSignatures, probe_store, sqlite_source
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Origin, Session, session_id

PROVIDER = "piebald"
LABEL = "Piebald"
_REQUIRED = {
    "chats": frozenset({"id"}),
    "messages": frozenset({"id", "parent_chat_id", "role", "created_at"}),
    "message_parts": frozenset({"id", "parent_chat_message_id", "part_type"}),
}


def db_paths(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_PIEBALD_HOME`` (authoritative), else Piebald's data dir for this platform, with ``app.db`` in it."""
    named = manifest.agent_home(PROVIDER, env)
    if named is not None:
        return [named / "app.db"]
    homes = (
        ["piebald.mac"]
        if sys.platform == "darwin"
        else ["piebald.windows"]
        if sys.platform.startswith("win")
        else [PROVIDER]
    )
    return [home / "app.db" for home in manifest.agent_homes(homes, env)]


class _Chat:
    """One chat's messages, parts and text, read with a handful of queries."""

    def __init__(self, conn: sqlite3.Connection, schema: Mapping[str, frozenset[str]], chat: Any) -> None:
        self.conn = conn
        cols = schema["messages"]
        pick = ", ".join(c if c in cols else f"NULL AS {c}" for c in ("model", "error"))
        self.messages = conn.execute(
            f"SELECT id, role, created_at, {pick} FROM messages WHERE parent_chat_id = ? ORDER BY created_at, id",
            (chat,),
        ).fetchall()
        self.schema = schema

    def text(self, part: int) -> tuple[str, bool]:
        thinking = False
        if "message_part_text" in self.schema:
            row = self.conn.execute(
                "SELECT is_thinking FROM message_part_text WHERE message_part_id = ?", (part,)
            ).fetchone()
            thinking = bool(row and row[0])
        if "message_content_nodes" not in self.schema or "message_node_text" not in self.schema:
            return "", thinking
        chunks = self.conn.execute(
            "SELECT t.content FROM message_content_nodes n JOIN message_node_text t ON t.node_id = n.id "
            "WHERE n.parent_text_part_id = ? AND n.node_type = 'text' ORDER BY n.node_index, n.id",
            (part,),
        )
        return "".join(c for (c,) in chunks if isinstance(c, str)), thinking

    def drafts(self, message: Any, person: Origin, unknown: UnknownRecords) -> Iterator[Draft]:
        ts = parse_ts(message["created_at"])
        role = str(message["role"] or "").lower()
        if role not in ("user", "assistant"):
            unknown.saw(f"role:{role}")
            return
        parts = self.conn.execute(
            "SELECT id, part_type FROM message_parts WHERE parent_chat_message_id = ? ORDER BY part_index, id",
            (message["id"],),
        ).fetchall()
        for part, ptype in parts:
            if ptype == "text":
                text, thinking = self.text(part)
                if thinking:
                    yield ("reasoning", "agent", text, {"ts": ts})
                elif role == "assistant":
                    yield ("assistant", "agent", text, {"ts": ts})
                else:
                    yield ("user", person, text, {"ts": ts})
            elif ptype == "tool_call":
                yield from self.tool_call(part, ts)
            else:
                unknown.saw(f"part:{ptype}")
        if str_or_none(message["error"]):
            yield ("meta", "provider", message["error"], {"ts": ts, "is_error": True})

    def tool_call(self, part: int, ts: float | None) -> Iterator[Draft]:
        if "message_part_tool_call" not in self.schema:
            return
        row = self.conn.execute(
            "SELECT provider_tool_use_id, tool_name, tool_input, tool_result, tool_error, tool_state "
            "FROM message_part_tool_call WHERE message_part_id = ?",
            (part,),
        ).fetchone()
        if row is None:
            return
        call_id, name, tool_input, result, error, state = row
        name = str_or_none(name)
        call_id = str_or_none(call_id)
        yield ("tool_call", "agent", tool_call_text(name, tool_input), {"ts": ts, "tool": name, "call_id": call_id})
        text = result if isinstance(result, str) else error if isinstance(error, str) else None
        if text is None and str_or_none(state) not in (None, "completed"):
            text = f"[{state}]"  # what the app recorded of a call that did not finish
        yield (
            "tool_result",
            "tool",
            text,
            {"ts": ts, "tool": name, "call_id": call_id, "is_error": isinstance(error, str) and bool(error)},
        )


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        parents: dict[Any, Any] = {}
        if "message_part_tool_call" in schema and "sub_agent_chat_id" in schema["message_part_tool_call"]:
            parents = dict(
                conn.execute(
                    "SELECT c.sub_agent_chat_id, m.parent_chat_id FROM message_part_tool_call c "
                    "JOIN message_parts p ON p.id = c.message_part_id JOIN messages m ON m.id = p.parent_chat_message_id "
                    "WHERE c.sub_agent_chat_id IS NOT NULL"
                ).fetchall()
            )
        changed = "updated_at" if "updated_at" in schema["messages"] else "created_at"
        sigs = {
            str(chat): [n, top, last, parents.get(chat)]
            for chat, n, top, last in conn.execute(
                f"SELECT parent_chat_id, count(*), max(id), max({changed}) FROM messages GROUP BY parent_chat_id"
            )
        }
        cols = schema["chats"]
        wanted = (
            "title",
            "created_at",
            "updated_at",
            "current_directory",
            "worktree_path",
            "branch_name",
            "project_id",
        )
        select = ", ".join(
            ["CAST(id AS TEXT) AS id", "id AS chat", *(c if c in cols else f"NULL AS {c}" for c in wanted)]
        )
        where = " WHERE COALESCE(is_deleted, 0) = 0" if "is_deleted" in cols else ""
        rows = conn.execute(f"SELECT {select} FROM chats{where} ORDER BY id").fetchall()
        projects: dict[Any, str | None] = {}
        if "projects" in schema and {"id", "directory"} <= schema["projects"]:
            projects = dict(conn.execute("SELECT id, directory FROM projects").fetchall())
        yield from changed_sessions(
            PROVIDER,
            rows,
            sigs,
            signatures,
            lambda row: _chat(conn, schema, row, parents, projects, unknown, source.path),
        )
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _chat(
    conn: sqlite3.Connection,
    schema: Mapping[str, frozenset[str]],
    row: Any,
    parents: Mapping[Any, Any],
    projects: Mapping[Any, str | None],
    unknown: UnknownRecords,
    path: str,
) -> Iterator[Item]:
    chat = _Chat(conn, schema, row["chat"])
    native = row["id"]
    sid = session_id(PROVIDER, native)
    spawner = parents.get(row["chat"])
    person: Origin = "provider" if spawner is not None else "human"
    cwd = (
        str_or_none(row["worktree_path"])
        or str_or_none(row["current_directory"])
        or str_or_none(projects.get(row["project_id"]))
    )
    drafts: list[Draft] = []
    model = None
    for message in chat.messages:
        model = str_or_none(message["model"]) or model
        drafts.extend(chat.drafts(message, person, unknown))
    stamps = [t for t in (parse_ts(m["created_at"]) for m in chat.messages) if t is not None]
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=str_or_none(row["title"]),
        cwd=cwd,
        git_branch=str_or_none(row["branch_name"]),
        model=model,
        started=parse_ts(row["created_at"]) or (min(stamps) if stamps else None),
        updated=parse_ts(row["updated_at"]) or (max(stamps) if stamps else None),
        parent=session_id(PROVIDER, str(spawner)) if spawner is not None and str(spawner) != native else None,
        resume=None,
        source=path,
    )
    yield from number(EventCounter(sid, 0), drafts)


class PiebaldAdapter:
    """Piebald's one SQLite database of chats."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return db_paths(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        named = bool(env.get("VOYAGER_PIEBALD_HOME"))
        for path in db_paths(env):
            yield from sqlite_source(PROVIDER, path, named=named)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = PiebaldAdapter()


def probe(path: str) -> str:
    """``chats+messages`` (the documented schema), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "chats+messages")
