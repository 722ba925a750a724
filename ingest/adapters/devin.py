"""The Devin CLI adapter: ``<data dir>/devin/cli/sessions.db`` (documented, not yet observed), read-only.

Owns what Voyager knows about Cognition's Devin CLI store. The evidence is peers' readers
and their test databases (not a real install: the CLI needs a Devin login):

* ``sessions(id, working_directory, model, last_activity_at (epoch s), title, main_chain_id,
  hidden)``: one row a session; ``main_chain_id`` names the leaf node of the conversation
  the person sees (an edited turn leaves the older branch behind);
* ``message_nodes(session_id, node_id, parent_node_id, chat_message)``: a tree of messages;
  ``chat_message`` is JSON in the OpenAI chat shape, ``{role, content, tool_calls[{id,
  name, arguments}], tool_call_id, metadata{is_user_input, created_at, request_id}}``.

The conversation is the chain from ``main_chain_id`` up to the root (the newest node when
no leaf is named). ``system`` is meta; a ``user`` message is a person's prompt unless its
``metadata.is_user_input`` is ``false`` (text the CLI threads back in, meta); ``tool``
messages are results, whose text ends ``Exit code: N`` for the shell tool (``exec``): that
N is the exit code. Times are ``metadata.created_at`` (ISO).

One database holds every session, so the Cursor keeps a signature per session (its row and
the count, newest rowid and total size of its nodes): an untouched session comes back
``Unchanged``, a changed one is read again whole. Resume: ``devin -r <id>`` in the session's
directory, as one peer documents it (*verify*).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar


from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    changed_sessions,
    epoch,
    EventCounter,
    join_text,
    json_column,
    openai_tool_calls,
    opt,
    read_database,
    resume_in,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.sqlite import SessionSignatures, probe_store, sqlite_source
from voyager_sessions.core.model import Session, session_id

PROVIDER = "devin"
LABEL = "Devin CLI"
_REQUIRED = {
    "sessions": frozenset({"id"}),
    "message_nodes": frozenset({"session_id", "node_id", "parent_node_id", "chat_message"}),
}
SHELL_TOOLS = frozenset({"exec", "bash", "shell", "run_command"})
_EXIT = re.compile(r"(?im)^exit code:[ \t]*(-?\d{1,10})[ \t]*$")
#: A chain longer than this is a loop in corrupt parent links, not a conversation.
_MAX_CHAIN = 1_000_000


def db_paths(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_DEVIN_HOME``, ``$XDG_DATA_HOME/devin`` or ``~/.local/share/devin`` (and macOS's
    ``~/Library/Application Support/devin``), each with ``cli/sessions.db`` below it."""
    found: dict[str, Path] = {}
    for home in (PROVIDER, "devin.mac"):
        base = manifest.agent_home(home, env)
        if base is not None:
            found.setdefault(str(base), base / "cli" / "sessions.db")
    return list(found.values())


def resume_command(cwd: str | None, native: str) -> str | None:
    return resume_in(cwd, "devin", opt("-r", native))


def exit_of(text: str) -> int | None:
    """The N of the last ``Exit code: N`` line of a shell result, or None."""
    found = _EXIT.findall(text)
    return int(found[-1]) if found else None


def chain(nodes: dict[Any, tuple[Any, Any]], leaf: Any) -> list[Any]:
    """The node ids from the root down to ``leaf`` (the newest node when ``leaf`` is not one of them)."""
    if leaf not in nodes:
        leaf = max(nodes, key=lambda n: (isinstance(n, int), n if isinstance(n, int) else 0), default=None)
    out: list[Any] = []
    seen: set[Any] = set()
    while leaf in nodes and leaf not in seen and len(out) < _MAX_CHAIN:
        seen.add(leaf)
        out.append(leaf)
        parent = nodes[leaf][0]
        if parent is not None and parent not in nodes:
            # A node unreadable or missing (or a parent id that is not one): go on from the newest node
            # before it (nodes are numbered in the order they were written), so one bad row costs only itself.
            bound = parent if isinstance(parent, int) else leaf if isinstance(leaf, int) else None
            parent = (
                max((n for n in nodes if isinstance(n, int) and n < bound and n not in seen), default=None)
                if bound is not None
                else None
            )
        leaf = parent
    out.reverse()
    return out


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        yield from _sessions(conn, schema, signatures, unknown, source.path)
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _sessions(
    conn: sqlite3.Connection,
    schema: Mapping[str, frozenset[str]],
    signatures: SessionSignatures,
    unknown: UnknownRecords,
    path: str,
) -> Iterator[Item]:
    sigs = {
        sid: [n, top, size]
        for sid, n, top, size in conn.execute(
            "SELECT session_id, count(*), max(rowid), total(length(chat_message)) FROM message_nodes GROUP BY session_id"
        )
    }
    rows = conn.execute("SELECT * FROM sessions ORDER BY rowid").fetchall()
    yield from changed_sessions(PROVIDER, rows, sigs, signatures, lambda row: _session(conn, row, unknown, path))


def _session(conn: sqlite3.Connection, row: sqlite3.Row, unknown: UnknownRecords, path: str) -> Iterator[Item]:
    keys = row.keys()
    native = row["id"]
    sid = session_id(PROVIDER, native)
    nodes = {
        nid: (parent, data)
        for nid, parent, data in conn.execute(
            "SELECT node_id, parent_node_id, chat_message FROM message_nodes WHERE session_id = ? ORDER BY rowid",
            (native,),
        )
    }
    drafts: list[Draft] = []
    started: float | None = None
    for nid in chain(nodes, row["main_chain_id"] if "main_chain_id" in keys else None):
        message = json_column(nodes[nid][1])
        if not isinstance(message, dict):
            unknown.saw("message:not-json")
            continue
        ts = epoch(as_dict(message.get("metadata")).get("created_at"))
        if started is None:
            started = ts
        drafts.extend(_message(message, ts, unknown))
    cwd = str_or_none(row["working_directory"]) if "working_directory" in keys else None
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=str_or_none(row["title"]) if "title" in keys else None,
        cwd=cwd,
        model=str_or_none(row["model"]) if "model" in keys else None,
        started=started,
        updated=epoch(row["last_activity_at"]) if "last_activity_at" in keys else None,
        resume=resume_command(cwd, native),
        source=path,
    )
    yield from number(EventCounter(sid, 0), drafts)


def _message(message: dict[str, Any], ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    role = message.get("role")
    content = message.get("content")
    text = join_text(content) if isinstance(content, (str, list)) else ""
    if role == "system":
        yield ("meta", "provider", text, {"ts": ts})
    elif role == "user":
        typed = as_dict(message.get("metadata")).get("is_user_input") is not False
        yield ("user", "human", text, {"ts": ts}) if typed else ("meta", "provider", text, {"ts": ts})
    elif role == "assistant":
        thinking = message.get("reasoning_content") or message.get("thinking")
        yield ("reasoning", "agent", thinking if isinstance(thinking, str) else None, {"ts": ts})
        yield ("assistant", "agent", text, {"ts": ts})
        for call in openai_tool_calls(message.get("tool_calls"), unknown):
            yield (
                "tool_call",
                "agent",
                tool_call_text(call.name, call.arguments, SHELL_TOOLS),
                {"ts": ts, "tool": call.name, "call_id": call.id},
            )
    elif role == "tool":
        code = exit_of(text)
        yield (
            "tool_result",
            "tool",
            text,
            {
                "ts": ts,
                "call_id": str_or_none(message.get("tool_call_id")),
                "exit_code": code,
                "is_error": code is not None and code != 0,
            },
        )
    else:
        unknown.saw(f"role:{role}")


class DevinAdapter:
    """Devin CLI's one SQLite database of sessions."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return db_paths(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        named = bool(env.get("VOYAGER_DEVIN_HOME"))
        for path in db_paths(env):
            yield from sqlite_source(PROVIDER, path, named=named)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = DevinAdapter()


def probe(path: str) -> str:
    """``sessions+message_nodes`` (the documented schema), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "sessions+message_nodes")
