"""The Cursor CLI's chats: ``<cursor home>/chats/<md5(cwd) | pct-encoded cwd>/<chat id>/store.db``, one chat each.

A small SQLite key-value store with two tables, in two variants (``probe`` names them):

``cli-tree``   ``meta`` holds one row whose value is hex-encoded JSON (``agentId``, ``name``,
               ``createdAt``, ``latestRootBlobId``, ``lastUsedModel``); ``blobs(id, data)`` is
               content-addressed (``id`` = sha256 of ``data``). Message blobs are JSON in the
               AI SDK's shape; the root blob is protobuf whose field 1 repeats the 32-byte ids
               of its children in conversation order (agent-sessions' committed fixture; public
               format notes). Walking from the *latest* root gives the conversation as it
               stands: messages of rewound turns stay in the table but are not reachable.
``cli-flat``   no root to walk (fast-resume's sample: ``meta``/``blobs`` with ``key``/``value``
               columns and plain JSON): every JSON blob in row order.

A store holding no message (a chat created and never used) yields nothing. Non-JSON blobs
outside the tree (tree nodes of earlier turns) are skipped silently; a tree node that is
neither protobuf nor JSON is named. Messages carry no time: the chat's ``createdAt`` and
the store's last write (its mtime) bound the session. The cwd is the workspace URI the
root may carry, else the directory name when it is a percent-encoded path (an md5 cannot
be reversed).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from voyager_sessions.ingest.adapters._common import EventCounter, UnknownRecords, epoch, opt, resume_in, str_or_none
from voyager_sessions.ingest.adapters._vscode import uri_path
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.cursor._messages import sdk_message_events
from voyager_sessions.ingest.jsonl import BadLine, decode_line
from voyager_sessions.ingest.sqlite import connect_readonly, open_store, unreadable
from voyager_sessions.ingest.sqlite import tables as schema_of
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "cursor"
#: A tree deeper than this, or with more nodes, is corrupt (or hostile): stop walking.
MAX_DEPTH = 64
MAX_NODES = 1_000_000


def resume_command(cwd: str | None, chat_id: str) -> str | None:
    """``cursor-agent --resume <chat id>`` (Cursor's CLI docs), in the chat's directory: chats are kept per cwd."""
    return resume_in(cwd, "cursor-agent", opt("--resume", chat_id))


def _columns(schema: dict[str, frozenset[str]], table: str) -> tuple[str, str] | None:
    cols = schema.get(table, frozenset())
    if {"key", "value"} <= cols:
        return "key", "value"
    if {"id", "data"} <= cols:
        return "id", "data"
    return None


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return b""


def _json(data: bytes) -> Any:
    """A JSON value from a cell: JSON text, or hex-encoded JSON text (the CLI's ``meta``); None if neither."""
    text = data.strip()
    if text[:1] not in (b"{", b"["):
        try:
            text = bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return None
        if text[:1] not in (b"{", b"["):
            return None
    try:
        return decode_line(text)
    except BadLine:
        return None


def read_meta(conn: sqlite3.Connection, schema: dict[str, frozenset[str]]) -> dict[str, Any]:
    """The chat's metadata: every JSON object in ``meta`` merged, and plain ``key = value`` rows."""
    cols = _columns(schema, "meta")
    meta: dict[str, Any] = {}
    if cols is None:
        return meta
    for key, value in conn.execute(f"SELECT {cols[0]}, {cols[1]} FROM meta ORDER BY rowid"):
        doc = _json(_as_bytes(value))
        if isinstance(doc, dict):
            for k, v in doc.items():
                meta.setdefault(k, v)
        elif isinstance(key, str) and isinstance(value, (str, int, float)):
            meta.setdefault(key, value)
    return meta


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def tree_node(data: bytes) -> tuple[list[str], list[bytes], str | None]:
    """A protobuf tree node: (child blob ids, embedded JSON messages, workspace URI). ValueError if not protobuf."""
    children: list[str] = []
    embedded: list[bytes] = []
    workspace: str | None = None
    i = 0
    while i < len(data):
        if data[i] == 0x7B:  # '{': JSON appended after the references (public format notes)
            embedded.append(data[i:])
            break
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(data, i)
            if i + n > len(data):
                raise ValueError("field runs past the end")
            payload = data[i : i + n]
            i += n
            if field == 1 and n == 32:
                children.append(payload.hex())
            elif payload[:1] == b"{":
                embedded.append(payload)
            elif payload.startswith(b"file://") and workspace is None:
                workspace = payload.decode("utf-8", "replace")
        else:
            raise ValueError(f"wire type {wire}")
        if i > len(data):
            raise ValueError("field runs past the end")
    return children, embedded, workspace


class _Walk:
    """The messages reachable from the latest root, in order (a message blob may recur: same text, same id)."""

    def __init__(self, conn: sqlite3.Connection, cols: tuple[str, str], source: str) -> None:
        self.conn = conn
        self.sql = f"SELECT {cols[1]} FROM blobs WHERE {cols[0]} = ?"
        self.source = source
        self.workspace: str | None = None
        self.notices: list[Notice] = []
        self.nodes = 0

    def blob(self, blob_id: str) -> bytes | None:
        row = self.conn.execute(self.sql, (blob_id,)).fetchone()
        if row is None:
            row = self.conn.execute(self.sql, (blob_id.upper(),)).fetchone()
        return _as_bytes(row[0]) if row is not None else None

    def messages(self, root: str) -> Iterator[dict[str, Any]]:
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            blob_id, depth = stack.pop()
            self.nodes += 1
            if self.nodes > MAX_NODES or depth > MAX_DEPTH:
                self.notices.append(
                    Notice(
                        source=self.source,
                        where=blob_id,
                        reason="message tree too large or too deep; the rest is not read",
                    )
                )
                return
            data = self.blob(blob_id)
            if data is None:
                continue  # referenced but not stored (yet)
            if data[:1] == b"{":
                doc = _json(data)
                if isinstance(doc, dict):
                    yield doc
                continue
            try:
                children, embedded, workspace = tree_node(data)
            except ValueError as exc:
                self.notices.append(
                    Notice(
                        source=self.source,
                        where=f"blob {blob_id[:16]}",
                        reason=f"neither a message nor a tree node ({exc}); skipped",
                    )
                )
                continue
            self.workspace = self.workspace or workspace
            for raw in embedded:
                doc = _json(raw)
                if isinstance(doc, dict):
                    yield doc
            stack.extend((child, depth + 1) for child in reversed(children))


def _flat_messages(conn: sqlite3.Connection, cols: tuple[str, str]) -> Iterator[dict[str, Any]]:
    for (value,) in conn.execute(f"SELECT {cols[1]} FROM blobs ORDER BY rowid"):
        doc = _json(_as_bytes(value))
        if isinstance(doc, dict):
            yield doc


def _dir_cwd(store: Path) -> str | None:
    """The cwd a chat's directory name spells, when it is a percent-encoded absolute path (not an md5)."""
    name = store.parent.parent.name
    if "%" not in name:
        return None
    decoded = unquote(name)
    return decoded if decoded.startswith("/") else None


def _mtime(path: str) -> float | None:
    newest = None
    for p in (path, f"{path}-wal"):
        try:
            t = os.stat(p).st_mtime
        except OSError:
            continue
        newest = t if newest is None or t > newest else newest
    return newest


def read_store(source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
    """The one chat of a ``store.db``: a Session and its Events (nothing when it holds no message)."""
    path = source.path
    store = Path(path)
    opened = open_store(path, "Cursor CLI", {}, lenient_text=True)
    if isinstance(opened, Notice):
        yield opened
        return
    conn, schema = opened
    unknown = UnknownRecords("Cursor CLI")
    try:
        cols = _columns(schema, "blobs")
        if cols is None:
            tables = ", ".join(sorted(schema)) or "no tables"
            yield Notice(source=path, reason=f"unknown-schema: no Cursor chat blobs ({tables})", fatal=True)
            return
        meta = read_meta(conn, schema)
        chat_id = store.parent.name
        sid = session_id(PROVIDER, chat_id)
        counter = EventCounter(sid, 0)
        root = str_or_none(meta.get("latestRootBlobId"))
        walk = _Walk(conn, cols, path) if root else None
        if walk is not None and root and walk.blob(root) is None:
            walk = None  # a root named but not stored: read what is there, in row order
        messages = walk.messages(root) if walk is not None and root else _flat_messages(conn, cols)
        events: list[Event] = []
        for msg in messages:
            role = msg.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                unknown.saw(f"role {role!r}")
                continue
            events.extend(sdk_message_events(counter, msg, person="human", ts=None, unknown=unknown))
        if walk is not None:
            yield from walk.notices
    except sqlite3.DatabaseError as exc:
        yield unreadable(path, exc)
        return
    finally:
        conn.close()
    if events:
        cwd = (
            (uri_path(walk.workspace) if walk is not None else None)
            or str_or_none(meta.get("cwd"))
            or str_or_none(meta.get("workspace"))
            or _dir_cwd(store)
        )
        yield Session(
            id=sid,
            provider=PROVIDER,
            native_id=chat_id,
            title=str_or_none(meta.get("name")),
            cwd=cwd,
            model=str_or_none(meta.get("lastUsedModel")),
            started=epoch(meta.get("createdAt")),
            updated=_mtime(path),
            resume=resume_command(cwd, chat_id),
            source=path,
        )
        yield from events
    if (notice := unknown.notice(path)) is not None:
        yield notice


def has_messages(store: Path) -> bool:
    """True when a chat store holds any blob (a chat that got past its first message); never raises."""
    try:
        conn = connect_readonly(store, lenient_text=True)
    except sqlite3.Error:
        return False
    try:
        cols = _columns(schema_of(conn), "blobs")
        return cols is not None and conn.execute("SELECT 1 FROM blobs LIMIT 1").fetchone() is not None
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def probe_store(path: str) -> str:
    """``cli-tree`` (a root to walk), ``cli-flat`` (JSON blobs, no root), ``cli-empty``, or ``unreadable``."""
    try:
        conn = connect_readonly(path, lenient_text=True)
    except sqlite3.Error:
        return "unreadable"
    try:
        schema = schema_of(conn)
        cols = _columns(schema, "blobs")
        if cols is None:
            return "unknown-schema"
        if conn.execute("SELECT 1 FROM blobs LIMIT 1").fetchone() is None:
            return "cli-empty"
        return "cli-tree" if str_or_none(read_meta(conn, schema).get("latestRootBlobId")) else "cli-flat"
    except sqlite3.DatabaseError:
        return "unreadable"
    finally:
        conn.close()
