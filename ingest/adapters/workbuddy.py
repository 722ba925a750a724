"""The WorkBuddy adapter: Tencent's agent, ``~/.workbuddy/projects/<project>/<session>.jsonl`` (documented).

WorkBuddy appends one item a line to a session's log, in the OpenAI Agents SDK's item shapes, as
agentsview's ``workbuddy.go`` reads them (read from the Cursor's offset: a new turn costs what it adds):

* ``{"type": "message", "role": "user"|"assistant", "content": str | [{"type": "input_text"|"output_text", "text"}]}``;
* ``{"type": "function_call", "callId", "name", "arguments"}`` (arguments as JSON text or an object);
* ``{"type": "function_call_result", "callId", "output"}`` (text, or an object with ``text``);

each with ``timestamp`` (epoch ms), ``cwd`` on some, and on the assistant's items ``providerData``
(``model``, ``usage``/``rawUsage``, whose input total already counts cached tokens). A subagent keeps
its own log in ``<project>/<session>/subagents/<agent>.jsonl``: a session of its own whose parent is
``<session>`` and whose prompts its parent wrote. A newer ``workbuddy.db`` holds only aggregates (not
read). Not run here (a Tencent login); no resume command is documented.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    as_dict,
    epoch,
    int_or_none,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "workbuddy"
LABEL = "WorkBuddy"
#: Items that carry nothing to search (the SDK's bookkeeping).
_SILENT = frozenset({"reasoning_summary", "handoff_call", "handoff_output"})


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_WORKBUDDY_HOME`` or ``~/.workbuddy``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "projects"


def content_text(content: Any) -> str:
    """A message's text: a string, or its parts' ``text`` (``input_text``/``output_text``/``text``) joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts)


class _WorkBuddyRead(JsonlSessionRead):
    """One pass over one session log (or what was appended to it since the Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self._start(source.path, cursor, LABEL)
        path = Path(source.path)
        self.subagent = path.parent.name == "subagents"
        if self.subagent:
            # <project>/<session>/subagents/<agent>.jsonl: a session of its own below its parent's.
            parent = path.parent.parent.name
            self.name_id = f"{parent}/{path.stem}"
            self.facts.parent = session_id(PROVIDER, parent)
        else:
            self.name_id = path.stem
        if self.counter is None:
            self._identify(self.name_id)

    def _session(self) -> Session:
        return self.facts.session(PROVIDER, title=None, resume=None, source=self.path)

    def _record(self, record: Record) -> Iterator[Item]:
        item = record.value
        if not isinstance(item, dict):
            self.unknown.saw(f"a JSON {type(item).__name__}")  # type: ignore[union-attr]
            return
        yield from self._numbered(self._item(item), self.name_id)

    def _item(self, item: dict[str, Any]) -> Iterator[Any]:
        kind = item.get("type")
        ts = epoch(item.get("timestamp"))
        facts = self.facts
        facts.observe_ts(ts)
        facts.observe_place(item.get("cwd"), None)
        self._provider_data(item)
        if kind == "message":
            role = item.get("role")
            text = content_text(item.get("content"))
            if role == "user":
                yield ("user", "provider" if self.subagent else "human", text, {"ts": ts})
            elif role == "assistant":
                yield ("assistant", "agent", text, {"ts": ts})
            elif role in ("system", "developer"):
                yield ("meta", "provider", text, {"ts": ts})
            else:
                self.unknown.saw(f"message:{role}")  # type: ignore[union-attr]
        elif kind == "function_call":
            name = str_or_none(item.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, item.get("arguments")),
                {"ts": ts, "tool": name, "call_id": str_or_none(item.get("callId"))},
            )
        elif kind == "function_call_result":
            output = item.get("output")
            failed = as_dict(output).get("type") == "error" or item.get("status") == "failed"
            yield (
                "tool_result",
                "tool",
                result_text(output),
                {"ts": ts, "call_id": str_or_none(item.get("callId")), "is_error": failed},
            )
        elif kind == "reasoning":
            yield (
                "reasoning",
                "agent",
                content_text(item.get("content")) or content_text(item.get("summary")),
                {"ts": ts},
            )
        elif not (isinstance(kind, str) and kind in _SILENT):
            self.unknown.saw(kind if isinstance(kind, str) else "item without a type")  # type: ignore[union-attr]

    def _provider_data(self, item: dict[str, Any]) -> None:
        data = as_dict(item.get("providerData"))
        if not data:
            return
        facts = self.facts
        facts.model = str_or_none(data.get("model")) or facts.model
        usage = as_dict(data.get("usage")) or as_dict(data.get("rawUsage"))
        given_in = next((usage[k] for k in ("inputTokens", "input_tokens", "prompt_tokens") if k in usage), None)
        given_out = next((usage[k] for k in ("outputTokens", "output_tokens", "completion_tokens") if k in usage), None)
        if int_or_none(given_in) is not None:
            facts.tokens_in = (facts.tokens_in or 0) + int_or_none(given_in)  # type: ignore[operator]
        if int_or_none(given_out) is not None:
            facts.tokens_out = (facts.tokens_out or 0) + int_or_none(given_out)  # type: ignore[operator]


class WorkBuddyAdapter:
    """WorkBuddy's per-project session logs (and their subagents')."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return walk_files(projects_dir(env), ".jsonl", PROVIDER)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not a WorkBuddy session log; skipped", fatal=True)])
        return _WorkBuddyRead(source, cursor).run()


ADAPTER = WorkBuddyAdapter()
