"""The QwenPaw adapter (ex-CoPaw): ``~/.qwenpaw/workspaces/<ws>/sessions/**/<stem>.json`` (documented, package code).

QwenPaw, Alibaba's personal assistant on AgentScope (CoPaw before its rename), saves one JSON file a
conversation under each workspace's ``sessions/`` (a folder per chat channel below it; a dotted name,
like ``.synced.json`` or the ``.weixin-legacy`` archive, is not a session). Its working dir is
``$QWENPAW_WORKING_DIR``, else ``~/.copaw`` when that exists (an install from before the rename),
else ``~/.qwenpaw``: both are read. Two generations of the file, as the package's own loader reads
them (``qwenpaw`` 2.2.2.post1, ``agents/context/scroll/sync.py``; agentsview's ``qwenpaw.go`` reads the
first):

* 1.x: ``{"agent": {"memory": {"content": [[message, marks], …]}}}``;
* 2.x: ``{"agent": {"state": {"session_id", "context": [message, …]}}}``.

A message is AgentScope's ``Msg``: ``{"id", "name", "role": "user"|"assistant"|"system", "content": str
| [blocks], "timestamp": "2026-01-01 10:00:00.123"}`` (local time), its blocks ``text``, ``thinking``,
``tool_use`` (``id``, ``name``, ``input``/``raw_input``) and ``tool_result`` (``id``, ``name``,
``output``). Tool results come back in ``system`` messages; a ``system`` message's text is the
assistant's own context (meta). ``chats.json`` beside ``sessions/`` (the chat registry, with names)
is not read. The assistant answers on chat channels, so no command resumes a conversation.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    list_or_empty,
    parse_ts,
    reread_end,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import subdirs, walk_files
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "qwenpaw"
LABEL = "QwenPaw"
#: QwenPaw's shell tool: its call is the command line it ran.
SHELL_TOOLS = frozenset({"execute_shell_command"})


def working_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_QWENPAW_HOME`` or ``$QWENPAW_WORKING_DIR`` (authoritative), else ``~/.qwenpaw`` and ``~/.copaw``."""
    return manifest.agent_homes((PROVIDER, "qwenpaw.copaw"), env)


def messages_of(doc: dict[str, Any]) -> list[Any] | None:
    """The messages of a session file of either generation; None when it is neither."""
    agent = as_dict(doc.get("agent")) or doc
    state = agent.get("state")
    if isinstance(state, dict):
        return list_or_empty(state.get("context"))
    memory = agent.get("memory")
    if isinstance(memory, dict):
        return [item[0] if isinstance(item, list) and item else item for item in list_or_empty(memory.get("content"))]
    return None


def message_drafts(message: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    role = message.get("role")
    ts = parse_ts(message.get("timestamp"), naive="local")
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
    if role not in ("user", "assistant", "system"):
        unknown.saw(f"role:{role}")
        return
    for block in blocks:
        block = as_dict(block)
        btype = block.get("type")
        if btype == "text":
            if role == "user":
                yield ("user", "human", block.get("text"), {"ts": ts})
            elif role == "assistant":
                yield ("assistant", "agent", block.get("text"), {"ts": ts})
            else:
                yield ("meta", "provider", block.get("text"), {"ts": ts})
        elif btype == "thinking":
            yield ("reasoning", "agent", block.get("thinking"), {"ts": ts})
        elif btype == "tool_use":
            name = str_or_none(block.get("name"))
            args = block.get("raw_input") if str_or_none(block.get("raw_input")) else block.get("input")
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, args, SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
            )
        elif btype == "tool_result":
            yield (
                "tool_result",
                "tool",
                result_text(block.get("output")),
                {"ts": ts, "tool": str_or_none(block.get("name")), "call_id": str_or_none(block.get("id"))},
            )
        elif btype not in ("image", "audio", "video", "file"):
            unknown.saw(f"block:{btype}")


class _SessionRead:
    """One read of one session file."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)

    def run(self) -> Iterator[Item]:
        doc = read_json_object(self.path)
        if isinstance(doc, Notice):
            yield doc
            return
        messages = messages_of(doc)
        if messages is None:
            yield Notice(
                source=self.path, reason="no agent memory or state: not a QwenPaw session file; skipped", fatal=True
            )
            return
        p = Path(self.path)
        sessions_dir = next(a for a in p.parents if a.name == "sessions")
        workspace = sessions_dir.parent.name
        native = f"{workspace}/{p.relative_to(sessions_dir).with_suffix('').as_posix()}"
        sid = session_id(PROVIDER, native)
        drafts: list[Draft] = []
        stamps: list[float] = []
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw("message:not-object")
                continue
            ts = parse_ts(message.get("timestamp"), naive="local")
            if ts is not None:
                stamps.append(ts)
            drafts.extend(message_drafts(message, self.unknown))
        events = list(number(EventCounter(sid, 0), drafts))
        yield Session(
            id=sid,
            provider=PROVIDER,
            native_id=native,
            started=min(stamps) if stamps else None,
            updated=max(stamps) if stamps else None,
            resume=None,
            source=self.path,
        )
        yield from reread_end(sid, events, self.before, self.unknown, self.path)


class QwenPawAdapter:
    """QwenPaw's (and CoPaw's) session files, under every workspace's ``sessions/``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [d / "workspaces" for d in working_dirs(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in self.roots(env):
            for workspace in subdirs(root):
                if isinstance(workspace, Notice):
                    yield workspace
                    continue
                yield from walk_files(
                    workspace / "sessions",
                    ".json",
                    PROVIDER,
                    append_only=False,
                    match=lambda name: name.endswith(".json") and not name.startswith("."),
                    skip_dir=lambda name: name.startswith("."),
                )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path) or "sessions" not in Path(source.path).parts:
            return iter([Notice(source=source.path, reason="not a QwenPaw session file; skipped", fatal=True)])
        return _SessionRead(source, cursor).run()


ADAPTER = QwenPawAdapter()
