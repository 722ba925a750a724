"""Cursor's editor: chats in its ``state.vscdb`` key-value databases (``globalStorage`` and each workspace's).

Variants, all read (peers disagree on which a given install has; ``probe`` names them):

``composer-bubbles``  ``cursorDiskKV`` ``composerData:<id>`` holds the conversation header
                      (``name``, ``createdAt``, ``lastUpdatedAt``, ``fullConversationHeadersOnly``:
                      the ordered bubble ids); each message is a ``bubbleId:<id>:<bubble>`` row
                      (``type`` 1 = user, 2 = assistant; ``text``, ``thinking``, ``toolFormerData``).
                      Cursor 0.40 and later (FAD, DJ, VY).
``composer-inline``   ``composerData:<id>`` with the bubbles inline: ``conversation`` (older
                      composers), ``tabs[].bubbles`` or ``conversationMap`` (FAD's v0.2x/v0.3x).
``aichat-legacy``     ``ItemTable`` ``workbench.panel.aichat.view.aichat.chatdata`` (the chat panel
                      before Composer; see ``_aichat``).

These databases are large and shared with the editor: only the chat keys are read, by key
range through the primary-key index. A re-read after the database changed (it changes
whenever the editor runs) costs one pass over the composer headers and one over the bubble
keys to compute each composer's signature (a digest of its header and of its bubbles' keys,
row ids and byte sizes, never their text: bubbles carry no timestamp in every version),
then reads only the composers whose signature changed; the others are ``Unchanged``. (The
byte size needs SQLite 3.43+; with an older library a bubble rewritten in place by an
``UPDATE``, its header unchanged, waits for its composer's next change.) A null composer (an internal
marker), one with no bubble, and drafts never sent yield nothing; a composer that is not
JSON is named in a Notice. Bubbles the header no longer lists (reverted turns) are not
indexed. The session's cwd comes from the bubbles (``workspaceProjectDir``,
``workspaceUris``), else from the workspace whose ``composer.composerData`` lists the
composer (its ``workspace.json``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters import _aichat
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    compact_json,
    epoch,
    int_or_none,
    str_or_none,
)
from voyager_sessions.ingest.adapters._vscode import (
    as_text,
    chat_items,
    has_prefix,
    item,
    items,
    table_exists,
    uri_path,
    workspace_dirs,
    workspace_folder,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.cursor._messages import SHELL_TOOLS, render_tool_input, split_user_text
from voyager_sessions.ingest.jsonl import BadLine, decode_line
from voyager_sessions.ingest.sqlite import connect_readonly, open_store, unreadable
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "cursor"
KV = "cursorDiskKV"
COMPOSER = "composerData:"
BUBBLE = "bubbleId:"
#: A workspace database's list of the composers opened in it (headers only): cwd for the global ones.
WORKSPACE_COMPOSERS = "composer.composerData"


def _decode(text: str | None) -> Any:
    if text is None:
        return None
    return decode_line(text.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------
# Bubbles -> events
# ---------------------------------------------------------------------------


def _json_field(value: Any) -> Any:
    """``rawArgs``/``params``/``result`` are JSON *strings* inside the bubble; decoded, or the string as is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return decode_line(value.encode("utf-8", "surrogatepass"))
        except BadLine:  # malformed or absurdly nested: keep the text as written
            return value
    return value


def _tool_events(counter: EventCounter, tfd: dict[str, Any], ts: float | None) -> Iterator[Event]:
    """A ``toolFormerData`` as a call and, once it finished, its result (with the exit code when Cursor kept it)."""
    name = str_or_none(tfd.get("name")) or (f"tool {tfd['tool']}" if int_or_none(tfd.get("tool")) is not None else None)
    call_id = str_or_none(tfd.get("toolCallId"))
    args = _json_field(tfd.get("rawArgs"))
    if args in (None, ""):
        args = _json_field(tfd.get("params"))
    ev = counter.make("tool_call", "agent", render_tool_input(name, args), ts=ts, tool=name, call_id=call_id)
    if ev is not None:
        yield ev
    status = tfd.get("status")
    result = _json_field(tfd.get("result"))
    if result in (None, "") and status != "error":
        return  # still running, cancelled, or no result kept: no result to invent
    exit_code = None
    if isinstance(result, dict) and (name or "").lower() in SHELL_TOOLS:
        exit_code = int_or_none(result.get("exitCodeV2"))
        if exit_code is None:
            exit_code = int_or_none(result.get("exitCode"))
        output = result.get("output")
        text = output if isinstance(output, str) else compact_json(result)
    elif isinstance(result, str):
        text = result
    elif result is None:
        text = str_or_none(tfd.get("error")) or "error"
    else:
        text = compact_json(result)
    ev = counter.make(
        "tool_result", "tool", text, ts=ts, tool=name, call_id=call_id, exit_code=exit_code, is_error=status == "error"
    )
    if ev is not None:
        yield ev


def _thinking(bubble: dict[str, Any]) -> str | None:
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and str_or_none(thinking.get("text")):
        return thinking["text"]
    blocks = bubble.get("allThinkingBlocks")
    if isinstance(blocks, list):
        parts = [b.get("thinking") or b.get("text") for b in blocks if isinstance(b, dict)]
        text = "\n".join(p for p in parts if isinstance(p, str) and p.strip())
        return text or None
    return None


class _Composer:
    """What one composer's bubbles add up to: its events, and facts the bubbles tell about the session."""

    def __init__(self, sid: str, unknown: UnknownRecords) -> None:
        self.counter = EventCounter(sid, 0)
        self.unknown = unknown
        self.events: list[Event] = []
        self.times: list[float] = []
        self.cwd: str | None = None
        self.model: str | None = None
        self.tokens_in = 0
        self.tokens_out = 0

    def add(self, bubble: dict[str, Any]) -> None:
        ts = epoch(bubble.get("createdAt")) or epoch(bubble.get("timestamp"))
        if ts is not None:
            self.times.append(ts)
        if self.cwd is None:
            self.cwd = str_or_none(bubble.get("workspaceProjectDir"))
            uris = bubble.get("workspaceUris")
            if self.cwd is None and isinstance(uris, list) and uris:
                self.cwd = uri_path(uris[0])
        info = bubble.get("modelInfo")
        if isinstance(info, dict) and str_or_none(info.get("modelName")):
            self.model = info["modelName"]
        tokens = bubble.get("tokenCount")
        if isinstance(tokens, dict):
            self.tokens_in += int_or_none(tokens.get("inputTokens")) or 0
            self.tokens_out += int_or_none(tokens.get("outputTokens")) or 0
        role = _aichat.role_of(bubble)
        counter = self.counter
        text = _aichat.bubble_text(bubble)
        if role == "user":
            # Newer bubbles may carry the query in Cursor's wrapper too; what is around it is context.
            prompt, context = split_user_text(text) if text else (None, None)
            for ev in (counter.make("meta", "provider", context, ts=ts), counter.make("user", "human", prompt, ts=ts)):
                if ev is not None:
                    self.events.append(ev)
            return
        if role != "ai":
            if text is not None or bubble.get("toolFormerData"):
                self.unknown.saw(f"bubble type {bubble.get('type')!r}")
            return
        for ev in (
            counter.make("reasoning", "agent", _thinking(bubble), ts=ts),
            counter.make("assistant", "agent", text, ts=ts),
        ):
            if ev is not None:
                self.events.append(ev)
        tfd = bubble.get("toolFormerData")
        if isinstance(tfd, dict):
            self.events.extend(_tool_events(counter, tfd, ts))


# ---------------------------------------------------------------------------
# Which composers a workspace opened (cwd of global composers)
# ---------------------------------------------------------------------------

_ws_cache: dict[str, tuple[tuple[int, ...], list[str]]] = {}


def _stat_key(db: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(db)
    except OSError:
        return None
    try:
        wst = os.stat(f"{db}-wal")
        wal = (wst.st_size, wst.st_mtime_ns)
    except OSError:
        wal = (0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino, *wal)


def workspace_composer_ids(db: Path) -> list[str]:
    """The composer ids a workspace database lists in ``composer.composerData`` (read once per change)."""
    key = _stat_key(db)
    if key is None:
        return []
    hit = _ws_cache.get(str(db))
    if hit is not None and hit[0] == key:
        return hit[1]
    ids: list[str] = []
    try:
        conn = connect_readonly(db, lenient_text=True)
        try:
            if table_exists(conn, "ItemTable"):
                doc = _decode(item(conn, "ItemTable", WORKSPACE_COMPOSERS))
                entries = doc.get("allComposers") if isinstance(doc, dict) else None
                for entry in entries if isinstance(entries, list) else ():
                    if isinstance(entry, dict) and str_or_none(entry.get("composerId")):
                        ids.append(entry["composerId"])
        finally:
            conn.close()
    except (sqlite3.Error, BadLine, OSError):
        ids = []
    _ws_cache[str(db)] = (key, ids)
    return ids


class _WorkspaceMap:
    """composer id -> the folder of the workspace that opened it, built on first need."""

    def __init__(self, user_dir: Path) -> None:
        self.user_dir = user_dir
        self._map: dict[str, str] | None = None

    def get(self, composer: str) -> str | None:
        if self._map is None:
            self._map = {}
            for ws in workspace_dirs(self.user_dir):
                folder = None
                for cid in workspace_composer_ids(ws / "state.vscdb"):
                    folder = folder or workspace_folder(ws)
                    if folder:
                        self._map.setdefault(cid, folder)
        return self._map.get(composer)


# ---------------------------------------------------------------------------
# Reading one database
# ---------------------------------------------------------------------------


def _layout(db: Path) -> tuple[str | None, Path | None]:
    """(cwd of a workspace database, user dir of the global one)."""
    if db.parent.parent.name == "workspaceStorage":
        return workspace_folder(db.parent), None
    if db.parent.name == "globalStorage":
        return None, db.parent.parent
    return None, None


#: A value's size in bytes, read from the record header without loading the value (SQLite 3.43+);
#: older libraries have no such function, and ``length()`` of text would read every bubble.
_BYTE_SIZE = "octet_length(value)" if sqlite3.sqlite_version_info >= (3, 43, 0) else "NULL"


def _row_identity(conn: sqlite3.Connection) -> str:
    """What identifies a row's version in the bubble pass: its rowid (a write replaces the row, the
    table being ``UNIQUE ON CONFLICT REPLACE``, so a rewritten bubble gets a new one) and its size."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (KV,)).fetchone()
    without_rowid = row is not None and isinstance(row[0], str) and "WITHOUT ROWID" in row[0].upper()
    return f"key, {'NULL' if without_rowid else 'rowid'}, {_BYTE_SIZE}"


def _signatures(conn: sqlite3.Connection) -> dict[str, Any]:
    """composer id -> a running digest of its header and of its bubbles' keys, row ids and sizes.

    Bubbles carry no timestamp in every version, so their rows are identified instead; the
    pass reads only the key index and record headers, never a bubble's text.
    """
    sigs: dict[str, Any] = {}
    for key, value in items(conn, KV, COMPOSER):
        text = as_text(value)
        h = hashlib.blake2b(digest_size=12)
        h.update(b"null" if text is None else text.encode("utf-8", "surrogatepass"))
        sigs[key[len(COMPOSER) :]] = h
    for key, rowid, size in items(conn, KV, BUBBLE, _row_identity(conn)):
        cid, _, bubble = key[len(BUBBLE) :].partition(":")
        sig = sigs.get(cid)
        if sig is not None:
            sig.update(f"\x00{bubble}\x00{rowid}\x00{size}".encode("utf-8", "surrogatepass"))
    return sigs


def _bubble_rows(conn: sqlite3.Connection, cid: str) -> dict[str, str]:
    prefix = f"{BUBBLE}{cid}:"
    out: dict[str, str] = {}
    for key, value in items(conn, KV, prefix):
        text = as_text(value)
        if text is not None:
            out[key[len(prefix) :]] = text
    return out


def _ordered_bubbles(
    conn: sqlite3.Connection, cid: str, doc: dict[str, Any], source: str, notices: list[Notice]
) -> Iterator[dict[str, Any]]:
    """The composer's bubbles in conversation order, whichever variant holds them."""
    headers = doc.get("fullConversationHeadersOnly")
    if isinstance(headers, list):
        rows = _bubble_rows(conn, cid)
        order = [b for h in headers if isinstance(h, dict) and isinstance(b := h.get("bubbleId"), str)]
        if rows and not any(b in rows for b in order):
            # A header without its list, or one whose list names none of the bubbles there (a header
            # damaged in its ids): every bubble, in key order, rather than none.
            order = sorted(rows)
        for bubble_id in order:
            raw = rows.get(bubble_id)
            if raw is None:
                continue  # listed but not (yet) written
            try:
                bubble = _decode(raw)
            except BadLine as exc:
                notices.append(
                    Notice(source=source, where=f"{BUBBLE}{cid}:{bubble_id}", reason=f"{exc}; bubble skipped")
                )
                continue
            if isinstance(bubble, dict):
                yield bubble
        return
    inline = doc.get("conversation")
    if isinstance(inline, list):
        yield from (b for b in inline if isinstance(b, dict))
        return
    for tab in _aichat.tabs(doc):
        bubbles = tab.get("bubbles")
        yield from (b for b in bubbles if isinstance(b, dict)) if isinstance(bubbles, list) else ()
    cmap = doc.get("conversationMap")
    if isinstance(cmap, dict):
        for conv in cmap.values():
            bubbles = conv.get("bubbles") if isinstance(conv, dict) else None
            yield from (b for b in bubbles if isinstance(b, dict)) if isinstance(bubbles, list) else ()


def _composer_items(
    conn: sqlite3.Connection,
    cid: str,
    doc: dict[str, Any],
    *,
    source: str,
    cwd: str | None,
    workspaces: _WorkspaceMap | None,
    unknown: UnknownRecords,
    notices: list[Notice],
) -> list[Session | Event]:
    sid = session_id(PROVIDER, cid)
    acc = _Composer(sid, unknown)
    for bubble in _ordered_bubbles(conn, cid, doc, source, notices):
        acc.add(bubble)
    if not acc.events:
        return []
    config = doc.get("modelConfig")
    model = acc.model or (str_or_none(config.get("modelName")) if isinstance(config, dict) else None)
    where = acc.cwd or cwd or (workspaces.get(cid) if workspaces is not None else None)
    started = epoch(doc.get("createdAt"))
    updated = epoch(doc.get("lastUpdatedAt"))
    if acc.times:
        started = min(acc.times + ([started] if started is not None else []))
        updated = max(acc.times + ([updated] if updated is not None else []))
    session = Session(
        id=sid,
        provider=PROVIDER,
        native_id=cid,
        title=str_or_none(doc.get("name")),
        cwd=where,
        model=model,
        started=started,
        updated=updated,
        resume=None,
        source=source,
        tokens_in=acc.tokens_in or None,
        tokens_out=acc.tokens_out or None,
    )
    return [session, *acc.events]


def read_state_db(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    """Every chat in one ``state.vscdb``; sessions whose signature matches ``cursor``'s are ``Unchanged``."""
    path = source.path
    state = cursor.state if cursor is not None else {}
    known_composers = as_dict(state.get("composers"))
    known_tabs = as_dict(state.get("tabs"))
    opened = open_store(path, "Cursor", {}, lenient_text=True)  # one snapshot: headers and bubbles as of one instant
    if isinstance(opened, Notice):
        yield opened
        return
    conn, schema = opened
    unknown = UnknownRecords("Cursor")
    composers_out: dict[str, Any] = {}
    tabs_out: dict[str, Any] = {}
    try:
        cwd, user_dir = _layout(Path(path))
        workspaces = _WorkspaceMap(user_dir) if user_dir is not None else None
        if KV in schema:
            for cid, digest in sorted(_signatures(conn).items()):
                yield from chat_items(
                    PROVIDER,
                    cid,
                    digest.hexdigest(),
                    known_composers,
                    composers_out,
                    lambda: _one_composer(conn, cid, path, cwd, workspaces, unknown),  # noqa: B023 - called at once
                )
        if "ItemTable" in schema:
            yield from _aichat.read_tabs(
                conn,
                _aichat.CHAT_KEYS[:1],
                PROVIDER,
                path,
                cwd=cwd,
                fallback=Path(path).parent.name,
                known=known_tabs,
                out=tabs_out,
                unknown=unknown,
            )
    except sqlite3.DatabaseError as exc:
        yield unreadable(path, exc)
        return
    finally:
        conn.close()
    if (notice := unknown.notice(path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=0, tail_hash="", state={"composers": composers_out, "tabs": tabs_out})


def _one_composer(
    conn: sqlite3.Connection,
    cid: str,
    path: str,
    cwd: str | None,
    workspaces: _WorkspaceMap | None,
    unknown: UnknownRecords,
) -> list[Item]:
    """One composer's items: what had to be skipped in it first, then its Session and Events."""
    text = item(conn, KV, f"{COMPOSER}{cid}")
    if text is None:
        return []  # a NULL composer: an internal marker with no chat
    notices: list[Notice] = []
    try:
        doc = _decode(text)
    except BadLine as exc:
        doc = exc
    if not isinstance(doc, dict):
        # The header is broken, its bubbles are not: they are read without it (in key order, untitled).
        why = doc if isinstance(doc, BadLine) else f"a JSON {type(doc).__name__}, not a composer"
        notices.append(
            Notice(
                source=path, where=f"{COMPOSER}{cid}", reason=f"{why}; header skipped, its bubbles read in key order"
            )
        )
        doc = {"fullConversationHeadersOnly": []}
    produced = _composer_items(
        conn, cid, doc, source=path, cwd=cwd, workspaces=workspaces, unknown=unknown, notices=notices
    )
    return [*notices, *produced]


def probe_state_db(path: str) -> str:
    """Which of the variants a ``state.vscdb`` holds: ``+``-joined names, ``no-chat``, or ``unreadable``."""
    try:
        conn = connect_readonly(path, lenient_text=True)
    except sqlite3.Error:
        return "unreadable"
    try:
        found = []
        if table_exists(conn, KV):
            if has_prefix(conn, KV, BUBBLE):
                found.append("composer-bubbles")
            elif has_prefix(conn, KV, COMPOSER):
                found.append("composer-inline")
        if table_exists(conn, "ItemTable") and item(conn, "ItemTable", _aichat.CHAT_KEYS[0]) is not None:
            found.append("aichat-legacy")
        return "+".join(found) or "no-chat"
    except sqlite3.DatabaseError:
        return "unreadable"
    finally:
        conn.close()
