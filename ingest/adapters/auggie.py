"""The Augment Auggie adapter: ``~/.augment/sessions/<conversationId>.json`` (package code 0.36.0, not run).

Auggie, Augment Code's CLI, keeps one JSON document a session, rewritten whole after each
exchange; backups ``<id>-backup<N>.json`` beside it are copies, not sessions. Read from the npm
package's bundle (``@augmentcode/auggie`` 0.36.0, its session store), not from a run: every model
call goes through Augment's service, which needs a login. A session::

    {"sessionId", "created", "modified", "title", "customTitle", "workspaceId", "rootTaskUuid",
     "agentState": {"modelId", …}, "parentConversationId"?,
     "chatHistory": [{"exchange": {"request_message", "response_text", "request_id",
                                   "request_nodes": […], "response_nodes": […]},
                      "completed", "sequenceId", "finishedAt", "changedFiles": […]}, …]}

What an exchange says is in its nodes (Augment's chat protocol), the two strings being copies:

* request nodes: ``type 0`` ``text_node.content`` (what the person typed: its prompt, taken from
  ``request_message`` when there is no such node), ``type 1`` ``tool_result_node`` (``tool_use_id``,
  ``content``, ``is_error``), ``type 10`` a summary of earlier history Auggie puts in front (meta);
* response nodes: ``type 0`` ``content`` (the reply, streamed in pieces: joined), ``type 5``
  ``tool_use`` (``tool_use_id``, ``tool_name``, ``input_json``), ``type 8`` ``thinking.content``;
  other types are the protocol's bookkeeping (suggested questions, sources, billing) and carry no
  conversation.

``customTitle`` is a title the person set, ``title`` the one generated. The file names no working
directory (only ``workspaceId``). Resume: ``auggie --resume <id>`` (a prefix is enough), which
looks the id up in this same folder wherever it runs. ``subAgents`` and ``summarizations`` (the
state of delegated runs and compacted history) are not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    doc_with_list,
    document_items,
    epoch,
    int_or_none,
    list_or_empty,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "auggie"
LABEL = "Auggie"
_BACKUP = re.compile(r"-backup\d+\.json\Z")
#: Request node types: the person's text, a tool's result, the summary of earlier history.
REQUEST_TEXT, REQUEST_TOOL_RESULT, REQUEST_SUMMARY = 0, 1, 10
#: Response node types: the reply's text, a tool call, reasoning.
RESPONSE_TEXT, RESPONSE_TOOL_USE, RESPONSE_THINKING = 0, 5, 8
_DOC_KEYS = ("sessionId", "created", "modified", "title", "customTitle", "agentState", "parentConversationId")


def sessions_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_AUGGIE_HOME`` or ``~/.augment``, with ``sessions/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "sessions"


def is_session(name: str) -> bool:
    return name.endswith(".json") and not _BACKUP.search(name)


def resume_command(native_id: str) -> str | None:
    return resume_in(None, "auggie", opt("--resume", native_id))


def exchange_drafts(entry: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    """The drafts of one ``chatHistory`` entry: the prompt and tool results sent, then what came back."""
    exchange = as_dict(entry.get("exchange"))
    ts = epoch(entry.get("finishedAt"))
    prompts: list[str] = []
    for node in list_or_empty(exchange.get("request_nodes")):
        node = as_dict(node)
        ntype = int_or_none(node.get("type"))
        if ntype == REQUEST_TEXT:
            text = as_dict(node.get("text_node")).get("content")
            if isinstance(text, str) and text.strip():
                prompts.append(text)
        elif ntype == REQUEST_TOOL_RESULT:
            result = as_dict(node.get("tool_result_node"))
            yield (
                "tool_result",
                "tool",
                result_text(result.get("content")),
                {
                    "ts": ts,
                    "call_id": str_or_none(result.get("tool_use_id")),
                    "is_error": result.get("is_error") is True,
                },
            )
        elif ntype == REQUEST_SUMMARY:
            yield ("meta", "provider", as_dict(node.get("text_node")).get("content"), {"ts": ts})
        elif ntype is None:
            unknown.saw("request node without a type")
    if not prompts and str_or_none(exchange.get("request_message")):
        prompts.append(exchange["request_message"])
    for prompt in prompts:
        yield ("user", "human", prompt, {"ts": ts})
    replies: list[str] = []
    nodes = list_or_empty(exchange.get("response_nodes"))
    for node in nodes:
        node = as_dict(node)
        ntype = int_or_none(node.get("type"))
        if ntype == RESPONSE_TEXT:
            if isinstance(node.get("content"), str):
                replies.append(node["content"])
            continue
        if replies:  # the reply's text up to here is one message
            yield ("assistant", "agent", "".join(replies), {"ts": ts})
            replies = []
        if ntype == RESPONSE_TOOL_USE:
            use = as_dict(node.get("tool_use"))
            name = str_or_none(use.get("tool_name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, use.get("input_json")),
                {"ts": ts, "tool": name, "call_id": str_or_none(use.get("tool_use_id"))},
            )
        elif ntype == RESPONSE_THINKING:
            thinking = as_dict(node.get("thinking")).get("content", node.get("content"))
            yield ("reasoning", "agent", thinking, {"ts": ts})
        elif ntype is None:
            unknown.saw("response node without a type")
    if replies:
        yield ("assistant", "agent", "".join(replies), {"ts": ts})
    elif not nodes and str_or_none(exchange.get("response_text")):
        yield ("assistant", "agent", exchange["response_text"], {"ts": ts})


class _SessionRead:
    """One read of one session document."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.last: float | None = None

    def run(self) -> Iterator[Item]:
        read = doc_with_list(self.path, "chatHistory", "an Auggie session file", _DOC_KEYS)
        if isinstance(read, Notice):
            yield read
            return
        doc, history = read
        native = str_or_none(doc.get("sessionId")) or Path(self.path).stem
        sid = session_id(PROVIDER, native)
        custom, generated = str_or_none(doc.get("customTitle")), str_or_none(doc.get("title"))
        parent = str_or_none(doc.get("parentConversationId"))

        def session() -> Session:
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=(custom or generated or "").strip() or None,
                title_source="user" if custom else "agent" if generated else None,
                model=str_or_none(as_dict(doc.get("agentState")).get("modelId")),
                started=epoch(doc.get("created")),
                updated=epoch(doc.get("modified")) or self.last,
                parent=session_id(PROVIDER, parent) if parent and parent != native else None,
                resume=resume_command(native),
                source=self.path,
            )

        def drafts() -> Iterator[Draft]:
            for entry in history:
                if not isinstance(entry, dict):
                    self.unknown.saw("exchange:not-object")
                    continue
                self.last = epoch(entry.get("finishedAt")) or self.last
                yield from exchange_drafts(entry, self.unknown)

        events = number(EventCounter(sid, 0), drafts())
        yield from document_items(sid, session, events, history, self.before, self.unknown, self.path)


class AuggieAdapter:
    """Auggie's session documents (backups left out)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [sessions_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return walk_files(
            sessions_dir(env), ".json", PROVIDER, append_only=False, match=is_session, skip_dir=lambda name: True
        )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not an Auggie session file; skipped", fatal=True)])
        return _SessionRead(source, cursor).run()


ADAPTER = AuggieAdapter()
