"""The Codebuff / Freebuff adapter: ``~/.config/manicode/projects/<project>/chats/<timestamp>/`` (documented).

Codebuff (and Freebuff, its free tier, which writes the same folders) keeps a session as one folder
named by the time it started (``2026-03-01T10-00-00.000Z``), as agentsview's ``codebuff.go`` reads it:

* ``chat-messages.json``: the chat as the terminal showed it, rewritten whole, a list of
  ``{variant: "user"|"ai"|"error", content, blocks, timestamp}``. A ``user`` message's ``content`` is
  what the person typed; an ``ai`` message's ``blocks`` are ``text`` (``textType: "reasoning"`` for
  reasoning), ``tool`` (``toolName``, ``toolCallId``, ``input`` and, once it ran, ``output``: a call
  and its result in one block), ``agent`` (a subagent the model started: ``agentType``, ``agentId``,
  ``initialPrompt``/``params``, and its answer in ``content``), ``plan`` and ``ask-user`` (the agent's
  plan and its questions, meta), ``mode-divider`` (a mode switch, meta) and ``image``; ``error`` is
  Codebuff's own message (meta). ``timestamp`` is ISO, or in older files only a time of day (then
  left out: the day is not written);
* ``run-state.json``: ``sessionState.fileContext.cwd`` (the working directory) and
  ``sessionState.mainAgentState.agentType`` (containing ``free`` for a Freebuff session);
* ``chat-meta.json``: ``messageCount``, ``firstPrompt``.

A session is ``codebuff:<project>/<timestamp>`` (a timestamp alone may repeat across projects). The
model is chosen by Codebuff's service and not stored. Not run here: the npm package downloads the
real binary at first start, and the model is the service's; no resume command is documented.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    compact_json,
    list_or_empty,
    parse_ts,
    document_items,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint, subdirs
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_object, read_json_streamed
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "codebuff"
LABEL = "Codebuff"
MESSAGES, RUN_STATE, CHAT_META = "chat-messages.json", "run-state.json", "chat-meta.json"
_FOLDER_TIME = re.compile(r"\A(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)(\.\d+)?Z\Z")


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_CODEBUFF_HOME`` or ``~/.config/manicode``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "projects"


def folder_time(name: str) -> float | None:
    """When a session started, from its folder's name (``2026-03-01T10-00-00.000Z``, UTC); None otherwise."""
    m = _FOLDER_TIME.match(name)
    if m is None:
        return None
    try:
        dt = datetime.fromisoformat(f"{m[1]}T{m[2]}:{m[3]}:{m[4]}{m[5] or ''}")
    except ValueError:
        return None
    return dt.replace(tzinfo=timezone.utc).timestamp()


def ai_drafts(blocks: list[Any], ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    for block in blocks:
        if not isinstance(block, dict):
            unknown.saw("block:not-object")
            continue
        btype = block.get("type")
        if btype == "text":
            if block.get("textType") == "reasoning":
                yield ("reasoning", "agent", block.get("content"), {"ts": ts})
            else:
                yield ("assistant", "agent", block.get("content"), {"ts": ts})
        elif btype == "tool":
            name = str_or_none(block.get("toolName"))
            call_id = str_or_none(block.get("toolCallId"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, block.get("input")),
                {"ts": ts, "tool": name, "call_id": call_id},
            )
            if "output" in block:
                yield (
                    "tool_result",
                    "tool",
                    result_text(block["output"]),
                    {"ts": ts, "tool": name, "call_id": call_id},
                )
        elif btype == "agent":
            name = str_or_none(block.get("agentType")) or str_or_none(block.get("agentName"))
            call_id = str_or_none(block.get("agentId"))
            task = str_or_none(block.get("initialPrompt")) or compact_json(block.get("params") or {})
            yield ("tool_call", "agent", tool_call_text(name, task), {"ts": ts, "tool": name, "call_id": call_id})
            # What the subagent answered is its report (docs/json.md, toolcall.SUBAGENT_REPORT): the model's words.
            yield ("tool_result", "agent", block.get("content"), {"ts": ts, "tool": name, "call_id": call_id})
        elif btype == "plan":
            yield ("meta", "agent", block.get("content"), {"ts": ts})
        elif btype == "ask-user":
            asked = [str_or_none(as_dict(q).get("question")) for q in list_or_empty(block.get("questions"))]
            yield ("meta", "agent", "\n".join(q for q in asked if q), {"ts": ts})
        elif btype == "mode-divider":
            mode = str_or_none(block.get("mode"))
            yield ("meta", "provider", f"mode: {mode}" if mode else None, {"ts": ts})
        elif btype != "image":
            unknown.saw(f"block:{btype}")


class _SessionRead:
    """One read of one session folder."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.folder = Path(source.path)
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.first: float | None = None
        self.last: float | None = None

    def run(self) -> Iterator[Item]:
        path = str(self.folder / MESSAGES)
        chat = read_json_streamed(path, "")  # a long chat is read a message at a time
        if isinstance(chat, Notice):
            yield chat
            return
        if not isinstance(chat, (list, StreamedArray)):
            yield Notice(
                source=path, reason=f"a JSON {type(chat).__name__}, not a list of messages; skipped", fatal=True
            )
            return
        state = read_json_object(self.folder / RUN_STATE, fatal=False)
        state = state if isinstance(state, dict) else {}
        session_state = as_dict(state.get("sessionState"))
        agent_type = str_or_none(as_dict(session_state.get("mainAgentState")).get("agentType")) or ""
        if "free" in agent_type.lower():
            self.unknown.label = "Freebuff"
        native = f"{self.folder.parent.parent.name}/{self.folder.name}"
        sid = session_id(PROVIDER, native)
        cwd = str_or_none(as_dict(session_state.get("fileContext")).get("cwd"))

        def session() -> Session:
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                cwd=cwd,
                started=folder_time(self.folder.name) or self.first,
                updated=self.last,
                resume=None,
                source=str(self.folder),
            )

        events = number(EventCounter(sid, 0), self._drafts(chat))
        yield from document_items(sid, session, events, chat, self.before, self.unknown, path)

    def _drafts(self, chat: Iterable[Any]) -> Iterator[Draft]:
        for message in chat:
            if not isinstance(message, dict):
                self.unknown.saw("message:not-object")
                continue
            ts = parse_ts(message.get("timestamp"))  # a time of day alone is no date: None
            if ts is not None:
                self.first = ts if self.first is None else min(self.first, ts)
                self.last = ts if self.last is None else max(self.last, ts)
            variant = message.get("variant")
            if variant == "user":
                yield ("user", "human", message.get("content"), {"ts": ts})
            elif variant == "ai":
                yield from ai_drafts(list_or_empty(message.get("blocks")), ts, self.unknown)
            elif variant == "error":
                yield ("meta", "provider", message.get("content"), {"ts": ts, "is_error": True})
            else:
                self.unknown.saw(f"variant:{variant}")


class CodebuffAdapter:
    """Codebuff's (and Freebuff's) session folders, under every project's ``chats/``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for project in subdirs(projects_dir(env)):
            if isinstance(project, Notice):
                yield project
                continue
            for folder in subdirs(project / "chats"):
                if isinstance(folder, Notice):
                    yield folder
                    continue
                if not os.path.isfile(folder / MESSAGES):
                    continue  # a session folder before its first message
                try:
                    fp = folder_fingerprint(folder, [folder / n for n in (MESSAGES, RUN_STATE, CHAT_META)])
                except OSError:
                    continue  # vanished since listed
                yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isdir(source.path):
            return iter([Notice(source=source.path, reason="not a Codebuff session folder; skipped", fatal=True)])
        return _SessionRead(source, cursor).run()


ADAPTER = CodebuffAdapter()
