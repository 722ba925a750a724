"""The Cortex Code adapter: Snowflake's CLI, ``~/.snowflake/cortex/conversations/<uuid>.json`` (documented).

Cortex Code CLI keeps one JSON document a conversation, rewritten whole, as agentsview's
``cortex.go`` reads it: ``{session_id, title, working_directory, git_root, git_branch,
created_at, last_updated, history: [messages]}``; when a conversation grows large the messages
move to a companion ``<uuid>.history.jsonl`` (one message a line) and ``history`` is left empty.
Backups ``<uuid>.back.<ts>.json`` are not sessions. A message is ``{role, id, content: [blocks],
user_sent_time}`` whose blocks nest their payload:

* ``{"type": "text", "text", "internalOnly"?}``: a ``user`` text block is a person's prompt, unless
  Cortex injected it (``internalOnly: true``, or a ``<system-reminder>``: the context it adds, most
  of the first user message), which is meta;
* ``{"type": "tool_use", "tool_use": {"tool_use_id", "name", "input"}}``: a tool call (its shell tool
  is ``bash``, Snowflake's ``snowflake_sql_execute`` runs ``query``);
* ``{"type": "tool_result", "tool_result": {"tool_use_id", "name", "content": [blocks], "status"}}``:
  the tool's answer (``status: "error"`` marks a failure; no exit code is kept).

A title ``Chat for session: <id>`` is Cortex's placeholder, not a title. Not run here: the CLI
needs a Snowflake connection; no resume command is documented.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
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
    document_items,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed
from voyager_sessions.ingest.jsonl import Record, read_records
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "cortex"
LABEL = "Cortex Code"
HISTORY = ".history.jsonl"
_BACKUP = re.compile(r"\.back\.[^/]*\.json\Z")
#: Cortex's shell tool, and its SQL tool (whose ``query`` is what a person searches for).
SHELL_TOOLS = frozenset({"bash", "snowflake_sql_execute"})
_PLACEHOLDER_TITLE = "Chat for session:"
#: The top-level keys of a conversation document besides its ``history`` (what its Session reads).
_DOC_KEYS = ("session_id", "title", "working_directory", "git_root", "git_branch", "created_at", "last_updated")


def conversations_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_CORTEX_HOME`` or ``~/.snowflake/cortex``, with ``conversations/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "conversations"


def is_conversation(name: str) -> bool:
    return name.endswith(".json") and not _BACKUP.search(name)


def history_path(path: str) -> str:
    return path[: -len(".json")] + HISTORY


def injected(block: dict[str, Any]) -> bool:
    """Text Cortex put in a user message itself: marked internal, or a system reminder."""
    text = block.get("text")
    return block.get("internalOnly") is True or (isinstance(text, str) and "<system-reminder>" in text)


def message_drafts(message: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    role = message.get("role")
    if role not in ("user", "assistant"):
        unknown.saw(f"role:{role}")
        return
    ts = parse_ts(message.get("user_sent_time"))
    for block in list_or_empty(message.get("content")):
        if not isinstance(block, dict):
            unknown.saw("block:not-object")
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if role == "assistant":
                yield ("assistant", "agent", text, {"ts": ts})
            elif injected(block):
                yield ("meta", "provider", text, {"ts": ts})
            else:
                yield ("user", "human", text, {"ts": ts})
        elif btype in ("thinking", "reasoning"):
            yield ("reasoning", "agent", block.get("thinking", block.get("text")), {"ts": ts})
        elif btype == "tool_use":
            use = as_dict(block.get("tool_use"))
            name = str_or_none(use.get("name"))
            args = use.get("input")
            if name == "snowflake_sql_execute" and isinstance(args, dict) and str_or_none(args.get("query")):
                args = args["query"]  # the statement, as written (its JSON would hide words behind escapes)
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, args, SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(use.get("tool_use_id"))},
            )
        elif btype == "tool_result":
            result = as_dict(block.get("tool_result"))
            yield (
                "tool_result",
                "tool",
                result_text(result.get("content")),
                {
                    "ts": ts,
                    "tool": str_or_none(result.get("name")),
                    "call_id": str_or_none(result.get("tool_use_id")),
                    "is_error": result.get("status") == "error",
                },
            )
        elif btype not in ("image", "document"):
            unknown.saw(f"block:{btype}")


class _ConversationRead:
    """One read of one conversation: its document, and its companion history when the messages moved there."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.notices: list[Notice] = []
        self.first: float | None = None
        self.last: float | None = None

    def _companion(self) -> Iterable[Any]:
        for item in read_records(history_path(self.path)):
            if isinstance(item, Record):
                yield item.value
                continue
            self.notices.append(item)  # a bad line costs only itself; a file that cannot be read, all of it
            if item.fatal:
                return

    def run(self) -> Iterator[Item]:
        doc = read_json_streamed(self.path, "history", _DOC_KEYS)
        if isinstance(doc, Notice):
            yield doc
            return
        if not isinstance(doc, dict) or not str_or_none(doc.get("session_id")):
            yield Notice(source=self.path, reason="no session_id: not a Cortex Code conversation; skipped", fatal=True)
            return
        native = doc["session_id"]
        sid = session_id(PROVIDER, native)
        history = doc.get("history")
        messages: Any
        if isinstance(history, StreamedArray) or (isinstance(history, list) and history):
            messages = history
        elif os.path.isfile(history_path(self.path)):
            messages = list(self._companion())  # one session's messages (a line each), held as any document's are
        else:
            return  # a conversation with nothing said yet
        yield from self.notices
        if any(n.fatal for n in self.notices):
            return
        title = str_or_none(doc.get("title"))
        if title and title.startswith(_PLACEHOLDER_TITLE):
            title = None
        cwd = str_or_none(doc.get("working_directory")) or str_or_none(doc.get("git_root"))

        def session() -> Session:
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=title,
                cwd=cwd,
                git_branch=str_or_none(doc.get("git_branch")),
                started=parse_ts(doc.get("created_at")) or self.first,
                updated=parse_ts(doc.get("last_updated")) or self.last,
                resume=None,
                source=self.path,
            )

        events = number(EventCounter(sid, 0), self._drafts(messages))
        yield from document_items(sid, session, events, messages, self.before, self.unknown, self.path)

    def _drafts(self, messages: Iterable[Any]) -> Iterator[Draft]:
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw("message:not-object")
                continue
            ts = parse_ts(message.get("user_sent_time"))
            if ts is not None:
                self.first = ts if self.first is None else min(self.first, ts)
                self.last = ts if self.last is None else max(self.last, ts)
            yield from message_drafts(message, self.unknown)


class CortexAdapter:
    """Cortex Code's conversation documents (and their companion histories)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [conversations_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        found = walk_files(conversations_dir(env), ".json", PROVIDER, append_only=False, match=is_conversation)
        for item in found:
            # The companion history grows while the document may not: it is part of the fingerprint.
            yield with_side_file(item, history_path(item.path)) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not a Cortex Code conversation; skipped", fatal=True)])
        return _ConversationRead(source, cursor).run()


ADAPTER = CortexAdapter()
