"""The Kiro IDE's sessions: workspace-session JSON documents and the older ``.chat`` files.

Under the IDE's ``<User>/globalStorage/kiro.kiroagent/``:

``ide-workspace-json``   ``workspace-sessions/<base64url(cwd)>/<uuid>.json`` (``sessionId``, ``title``,
                         ``workspaceDirectory``, ``history[].message`` with ``role`` and a string
                         or ``[{type: text}]`` content) beside the folder's ``sessions.json`` index
                         (titles and creation dates); described by VY and AV.
``app-support-workspace-json``  the same documents where cli-continues looks for them:
                         ``<Kiro>/workspace-sessions/<name>/`` directly under the app dir (its
                         ``workspacePath`` names the cwd). Which of the two a release writes is
                         disputed, so both are read.
``ide-chat``             ``<sha256(cwd)[:32]>/<hash>.chat``: ``{executionId, chat: [{role: human|bot|tool,
                         content}], metadata: {modelId, startTime, endTime}}`` (AV, "old").

Each document is rewritten in place, so it is read whole (past ``jsondoc.STREAM_JSON_BYTES`` its
list of messages is streamed, a message at a time: ``read_json_streamed``). What the IDE injects is not a
person's prompt: system prompts and steering rules sent as ``human`` turns, and the
``# Conversation Summary`` a compacted session starts from, are ``meta``. The assistant's
actions live in execution logs beside these files, which no peer sample shows: not read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    cached_by_stat,
    epoch,
    join_text,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, absolute_path, epoch_text, number
from voyager_sessions.ingest.adapters._kiro_cli import PROVIDER
from voyager_sessions.ingest.adapters.base import Item, Notice, Source
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json, read_json_streamed, stream_end
from voyager_sessions.core.model import Session, session_id

#: How the IDE's injected turns begin (system prompt, identity, steering rules, workspace notes).
_INJECTED_PREFIXES = (
    "# System Prompt",
    "# Identity",
    "<identity>",
    "## Included Rules",
    "You are operating in a workspace",
)
#: The first user turn of a session continued after compaction (the summary it resumes from).
_SUMMARY = re.compile(r"^\s*(#\s*Conversation\s*Summary|##\s*TASK\s*\d+\b)", re.IGNORECASE)
_WRAPPER = re.compile(r"^\s*<kiro-ide-message>(.*?)(</kiro-ide-message>\s*)?$", re.DOTALL)


def decode_workspace(name: str) -> str | None:
    """The working directory a ``workspace-sessions/<name>`` folder stands for: base64url of the path
    (padding dropped, sometimes written as ``_``); ``None`` when the name does not decode to an absolute path."""
    stripped = name.rstrip("_=")
    try:
        raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
        path = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return absolute_path(path)


def prompt_kind(text: str) -> Literal["user", "meta"]:
    """``user`` for what a person typed, ``meta`` for what the IDE injected as a human turn."""
    stripped = text.lstrip()
    if stripped.startswith(_INJECTED_PREFIXES) or _SUMMARY.match(stripped):
        return "meta"
    return "user"


def unwrap(text: str) -> str:
    """A prompt without the ``<kiro-ide-message>`` wrapper the IDE puts around some of them."""
    m = _WRAPPER.match(text)
    return m.group(1).strip() if m else text


def _prompt(text: str) -> Draft:
    """A human turn of either document: unwrapped, and a prompt or what the IDE injected."""
    text = unwrap(text)
    kind = prompt_kind(text)
    return (kind, "human" if kind == "user" else "provider", text, {})


def _events(
    source: Source,
    sid: str,
    messages: Any,
    name: str,
    drafts: Callable[[Iterable[Any], UnknownRecords], Iterator[Draft]],
) -> Iterator[Item]:
    """The events of a document's ``name`` list of messages, numbered, then a notice of what was not known."""
    if not isinstance(messages, (list, StreamedArray)):
        yield Notice(source=source.path, reason=f"no {name} list in it; nothing to index")
        return
    unknown = UnknownRecords("Kiro IDE")
    yield from number(EventCounter(sid, 0), drafts(messages, unknown))
    ended = list(stream_end(messages, source.path))
    yield from ended
    if any(n.fatal for n in ended):
        return
    if (notice := unknown.notice(source.path)) is not None:
        yield notice


#: What a workspace-session document's Session reads besides its ``history``.
_WORKSPACE_KEYS = (
    "sessionId",
    "workspaceDirectory",
    "workspacePath",
    "title",
    "selectedModel",
    "modelId",
    "dateCreated",
)


def _document(path: str, array: str, keys: tuple[str, ...], notices: list[Notice]) -> dict[str, Any] | Notice:
    """The session object at ``path``, its list ``array`` streamed when the file is large (``keys`` the rest it needs)."""
    doc = read_json_streamed(path, array, keys, notices=notices)
    if isinstance(doc, Notice) or isinstance(doc, dict):
        return doc
    return Notice(source=path, reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)


def _index(path: Path) -> dict[str, dict[str, Any]]:
    """sessionId -> its entry in a workspace folder's ``sessions.json`` (a list), read once per change."""

    def load(p: str) -> dict[str, dict[str, Any]]:
        doc = read_json(p, fatal=False)
        entries = doc if isinstance(doc, list) else []
        return {e["sessionId"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("sessionId"), str)}

    return cached_by_stat(str(path), load, {})


def read_workspace_json(source: Source) -> Iterator[Item]:
    """One workspace-session document: its Session, then one event per history message."""
    skipped: list[Notice] = []
    doc = _document(source.path, "history", _WORKSPACE_KEYS, skipped)
    if isinstance(doc, Notice):
        yield doc
        return
    yield from skipped
    path = Path(source.path)
    native = str_or_none(doc.get("sessionId")) or path.stem
    entry = _index(path.parent / "sessions.json").get(native, {})
    cwd = (
        str_or_none(doc.get("workspaceDirectory"))
        or str_or_none(doc.get("workspacePath"))
        or str_or_none(entry.get("workspaceDirectory"))
        or decode_workspace(path.parent.name)
    )
    title = str_or_none(doc.get("title")) or str_or_none(entry.get("title"))
    try:
        mtime: float | None = os.stat(path).st_mtime
    except OSError:
        mtime = None
    sid = session_id(PROVIDER, native)
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=title,
        cwd=cwd,
        model=str_or_none(doc.get("selectedModel")) or str_or_none(doc.get("modelId")),
        started=epoch(epoch_text(entry.get("dateCreated"))) or epoch(epoch_text(doc.get("dateCreated"))),
        updated=mtime,
        source=source.path,
    )
    yield from _events(source, sid, doc.get("history"), "history", _history)


def _history(history: Iterable[Any], unknown: UnknownRecords) -> Iterator[Draft]:
    for item in history:
        if not isinstance(item, dict):
            unknown.saw(type(item).__name__)
            continue
        message = inner if isinstance(inner := item.get("message"), dict) else item
        role = message.get("role")
        text = _text(message.get("content"), unknown)
        if role == "user":
            yield _prompt(text)
        elif role == "assistant":
            if not text.strip():
                # The model's words may be only in the prompt logs when the message is a stub.
                logs = item.get("promptLogs")
                text = (
                    "\n\n".join(
                        c
                        for log in logs
                        if isinstance(log, dict) and isinstance(c := log.get("completion"), str) and c.strip()
                    )
                    if isinstance(logs, list)
                    else ""
                )
            yield ("assistant", "agent", text, {})
        elif role == "tool":
            yield ("tool_result", "tool", text, {"call_id": str_or_none(message.get("tool_call_id"))})
        elif role == "system":
            yield ("meta", "provider", text, {})
        else:
            unknown.saw(f"role:{role}")


def _text(content: Any, unknown: UnknownRecords) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") not in ("text", "image"):
                unknown.saw(f"content:{block.get('type')}")
        return join_text(content)
    return ""


# -- the older .chat files --------------------------------------------------------------


def _workspace_hashes(agent_dir: Path) -> dict[str, str]:
    """sha256(cwd)[:32] -> cwd, from the names of ``workspace-sessions/`` folders (no file is read)."""
    folder = agent_dir / "workspace-sessions"
    try:
        key = os.stat(folder).st_mtime_ns
    except OSError:
        return {}
    cached = _HASHES.get(str(folder))
    if cached is not None and cached[0] == key:
        return cached[1]
    found: dict[str, str] = {}
    try:
        with os.scandir(folder) as it:
            for entry in it:
                cwd = decode_workspace(entry.name)
                if cwd:
                    found[hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:32]] = cwd
    except OSError:
        return {}
    _HASHES[str(folder)] = (key, found)
    return found


_HASHES: dict[str, tuple[int, dict[str, str]]] = {}


def read_chat(source: Source) -> Iterator[Item]:
    """One ``.chat`` file: human/bot/tool turns, with the model and times from its metadata."""
    skipped: list[Notice] = []
    doc = _document(source.path, "chat", ("metadata",), skipped)
    if isinstance(doc, Notice):
        yield doc
        return
    yield from skipped
    path = Path(source.path)
    meta = as_dict(doc.get("metadata"))
    native = path.stem
    sid = session_id(PROVIDER, native)
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        cwd=_workspace_hashes(path.parent.parent).get(path.parent.name),
        model=str_or_none(meta.get("modelId")),
        started=epoch(meta.get("startTime")),
        updated=epoch(meta.get("endTime")) or epoch(meta.get("startTime")),
        source=source.path,
    )
    yield from _events(source, sid, doc.get("chat"), "chat", _chat)


def _chat(chat: Iterable[Any], unknown: UnknownRecords) -> Iterator[Draft]:
    for message in chat:
        if not isinstance(message, dict):
            unknown.saw(type(message).__name__)
            continue
        role = message.get("role")
        text = _text(message.get("content"), unknown)
        if role == "human":
            yield _prompt(text)
        elif role == "bot":
            yield ("assistant", "agent", text, {})
        elif role == "tool":
            yield ("tool_result", "tool", text, {})
        else:
            unknown.saw(f"role:{role}")


def probe_json(path: Path) -> str:
    """Which documented place a workspace-session document sits in (see the module doc)."""
    return "ide-workspace-json" if path.parent.parent.parent.name == "kiro.kiroagent" else "app-support-workspace-json"
