"""The legacy "AI chat" panel that Cursor and Windsurf both shipped: one ``ItemTable`` key of a workspace's
``state.vscdb`` holding every chat tab of that workspace.

Shape (Cursor before its Composer, Windsurf before Cascade; FAD, AV)::

    {"tabs": [{"tabId": "…", "chatTitle": "…", "lastSendTime": 1700000000000,
               "bubbles": [{"type": "user" | "ai" | 1 | 2, "text" | "rawText" | "initText": "…"}, …]}, …]}

Each tab is one session. A tab without a ``tabId`` (seen in peers' samples) gets one from
its workspace and position, stable as long as the tab list only grows. ``signature`` is
what a re-read compares to say a tab did not change.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import EventCounter, UnknownRecords, epoch, str_or_none
from voyager_sessions.ingest.adapters._vscode import chat_items, item
from voyager_sessions.ingest.adapters.base import Item, Notice
from voyager_sessions.ingest.jsonl import BadLine, decode_line
from voyager_sessions.core.model import Event, Session, session_id

#: The ``ItemTable`` keys that hold the legacy chat (Cursor uses the first; Windsurf either).
CHAT_KEYS: tuple[str, ...] = ("workbench.panel.aichat.view.aichat.chatdata", "aiChat.chatdata")

_USER = frozenset({"user", "human", "1"})
_AI = frozenset({"ai", "assistant", "bot", "2"})

_encode = msgspec.json.Encoder(order="deterministic").encode


def tabs(doc: Any) -> list[dict[str, Any]]:
    """The tab objects of a chat-data document (anything else yields no tab)."""
    found = doc.get("tabs") if isinstance(doc, dict) else None
    return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []


def tab_native_id(tab: dict[str, Any], fallback: str, index: int) -> str:
    """The tab's native id: ``aichat-<tabId>``, else ``aichat-<fallback>-<index>``."""
    tab_id = str_or_none(tab.get("tabId"))
    return f"aichat-{tab_id}" if tab_id else f"aichat-{fallback}-{index}"


def signature(tab: dict[str, Any]) -> str:
    """A digest of the whole tab: any change to it (a new bubble, an edit, a rename) changes it."""
    try:
        data = _encode(tab)
    except (TypeError, msgspec.EncodeError):
        data = repr(tab).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def bubble_text(bubble: dict[str, Any]) -> str | None:
    for field in ("text", "rawText", "initText"):
        value = bubble.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return None


def role_of(bubble: dict[str, Any]) -> str | None:
    """``user``, ``ai`` or None (unknown) from a bubble's ``type`` (text or number)."""
    kind = bubble.get("type")
    key = str(kind).strip().lower() if isinstance(kind, (str, int)) and not isinstance(kind, bool) else ""
    if key in _USER:
        return "user"
    if key in _AI:
        return "ai"
    return None


def tab_items(
    provider: str, native: str, tab: dict[str, Any], *, cwd: str | None, source: str, unknown: UnknownRecords
) -> Iterator[Session | Event]:
    """The Session and Events of one tab; nothing when no bubble holds text."""
    bubbles = (
        [b for b in tab.get("bubbles") or () if isinstance(b, dict)] if isinstance(tab.get("bubbles"), list) else []
    )
    sid = session_id(provider, native)
    counter = EventCounter(sid, 0)
    events: list[Event] = []
    times: list[float] = []
    model = None
    for bubble in bubbles:
        role = role_of(bubble)
        ts = epoch(bubble.get("timestamp")) or epoch(bubble.get("createdAt"))
        if ts is not None:
            times.append(ts)
        text = bubble_text(bubble)
        if role is None:
            if text is not None:
                unknown.saw(f"bubble type {bubble.get('type')!r}")
            continue
        if role == "ai":
            model = str_or_none(bubble.get("modelType")) or str_or_none(bubble.get("model")) or model
        ev = counter.make(
            "user" if role == "user" else "assistant", "human" if role == "user" else "agent", text, ts=ts
        )
        if ev is not None:
            events.append(ev)
    if not events:
        return
    last = epoch(tab.get("lastSendTime"))
    yield Session(
        id=sid,
        provider=provider,
        native_id=native,
        title=str_or_none(tab.get("chatTitle")),
        cwd=cwd,
        model=model,
        started=min(times) if times else None,
        updated=max([*times, last] if last is not None else times) if (times or last) else None,
        resume=None,
        source=source,
    )
    yield from events


def read_tabs(
    conn: sqlite3.Connection,
    keys: Iterable[str],
    provider: str,
    path: str,
    *,
    cwd: str | None,
    fallback: str,
    known: dict[str, Any],
    out: dict[str, Any],
    unknown: UnknownRecords,
) -> Iterator[Item]:
    """Every tab under ``keys`` of ``ItemTable``; a tab whose signature is in ``known`` is ``Unchanged``
    (``out`` receives this read's: see ``_vscode.chat_items``). A tab id seen under an earlier key
    is not read again (one session, one source of its events).
    """
    for key in keys:
        text = item(conn, "ItemTable", key)
        if text is None:
            continue
        try:
            doc = decode_line(text.encode("utf-8", "surrogatepass"))
        except BadLine as exc:
            yield Notice(source=path, where=key, reason=f"{exc}; legacy chat skipped")
            continue
        for index, tab in enumerate(tabs(doc)):
            native = tab_native_id(tab, fallback, index)
            if native in out:
                continue
            yield from chat_items(
                provider,
                native,
                signature(tab),
                known,
                out,
                lambda: list(tab_items(provider, native, tab, cwd=cwd, source=path, unknown=unknown)),  # noqa: B023 - called at once
            )
