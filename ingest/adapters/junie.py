"""The Junie CLI adapter: ``~/.junie/sessions/session-*/events.jsonl`` (documented, not yet observed).

Owns what Voyager knows about JetBrains Junie's CLI sessions. The evidence is a peer's
implementation guide written against real files (idea-de-espend-ml-llm's
``JUNIE_SESSION_ADAPTER.md``) and other peers' places (``~/.junie/sessions/**/events.jsonl``),
not a capture: Junie is not on the registries here and needs a JetBrains account.

* ``sessions/index.jsonl``: one line a session, ``{sessionId, createdAt, updatedAt (epoch ms),
  taskName (the title), status}``: read for titles (and part of each session's fingerprint);
* ``sessions/<sessionId>/events.jsonl``: appended (read from the Cursor's offset), lines
  ``{"kind": …}``: ``UserPromptEvent`` (``prompt``: what the person typed), ``SessionA2uxEvent``
  (``event.agentEvent`` of a kind: ``LlmResponseMetadataEvent`` with ``modelUsage[{model,
  inputTokens, outputTokens, …}]``, ``AgentTaskNameUpdatedEvent``, and UI updates —
  ``AgentCurrentStatusUpdatedEvent``, ``AgentStateUpdatedEvent``, ``TerminalBlockUpdatedEvent``,
  ``ToolBlockUpdatedEvent``, ``ViewFilesBlockUpdatedEvent``, ``FileChangesBlockUpdatedEvent``,
  ``ResultBlockUpdatedEvent``, ``AgentPatchCreatedEvent``), ``TaskState``, ``SendToAgentEvent``.

**Gap:** the block events' fields are not documented anywhere Voyager could read, and each
is re-sent as the block updates; they are counted as known and not indexed, so a Junie
session is searchable by what the person asked, its title and its model. Lines carry no
time: the session runs from the index's ``createdAt`` to ``updatedAt``. No resume command is
given: a peer's session browser lists ``junie --resume --session-id <id>``, but the files name
no working directory to run it in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    as_dict,
    cached_by_stat,
    epoch,
    int_or_none,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsonl import Record, read_records
from voyager_sessions.core.model import Session

PROVIDER = "junie"
LABEL = "Junie"
INDEX = "index.jsonl"
#: UI updates and bookkeeping: known, not indexed (see the module's gap).
_QUIET_AGENT_EVENTS = frozenset(
    {
        "AgentCurrentStatusUpdatedEvent",
        "AgentStateUpdatedEvent",
        "TerminalBlockUpdatedEvent",
        "ToolBlockUpdatedEvent",
        "ViewFilesBlockUpdatedEvent",
        "FileChangesBlockUpdatedEvent",
        "ResultBlockUpdatedEvent",
        "AgentPatchCreatedEvent",
    }
)
_QUIET_KINDS = frozenset({"TaskState", "SendToAgentEvent"})


def sessions_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_JUNIE_HOME`` or ``~/.junie``, with ``sessions/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "sessions"


def _load_index(path: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for record in read_records(path):  # one bad line costs itself; a byte-order mark is no harm
        entry = record.value if isinstance(record, Record) else None
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
            out[entry["sessionId"]] = entry
    return out


_NO_INDEX: dict[str, dict[str, Any]] = {}


def index_entry(root: Path, native_id: str) -> dict[str, Any]:
    """What ``sessions/index.jsonl`` says of a session (nothing when it is missing or unreadable)."""
    return cached_by_stat(str(root / INDEX), _load_index, _NO_INDEX).get(native_id, {})


class _JunieRead(JsonlSessionRead):
    """One pass over one session's events (or their appended tail when resuming from a Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        folder = Path(source.path).parent
        self.native = folder.name
        self.entry = index_entry(folder.parent, self.native)
        title = state.get("title")
        self.title: str | None = title if isinstance(title, str) else None

    def _session(self) -> Session:
        title = self.title or str_or_none(self.entry.get("taskName"))
        facts = self.facts
        facts.started = epoch(self.entry.get("createdAt")) or facts.started
        facts.updated = epoch(self.entry.get("updatedAt")) or facts.updated
        return facts.session(
            PROVIDER,
            title=title.strip() if title and title.strip() else None,
            title_source="agent",
            resume=None,
            source=self.path,
        )

    def _state(self) -> dict[str, Any]:
        return {**self.facts.to_state(), **({"title": self.title} if self.title else {})}

    def _record(self, record: Record) -> Iterator[Item]:
        if self.counter is None:
            # The session exists from its first event on: its title and times are in the index
            # even when no prompt could be read.
            yield self._begin(self.native)
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(f"a JSON {type(line).__name__}")
            return
        kind = line.get("kind")
        if kind == "UserPromptEvent":
            yield from self._numbered([("user", "human", line.get("prompt"), {})], self.native)
        elif kind == "SessionA2uxEvent":
            self._agent_event(as_dict(as_dict(line.get("event")).get("agentEvent")))
        elif kind not in _QUIET_KINDS:
            self.unknown.saw(kind if isinstance(kind, str) else "event without a kind")

    def _agent_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "LlmResponseMetadataEvent":
            facts = self.facts
            for usage in list_or_empty(event.get("modelUsage")):
                usage = as_dict(usage)
                facts.model = str_or_none(usage.get("model")) or facts.model
                facts.tokens_in = (facts.tokens_in or 0) + sum(
                    int_or_none(usage.get(k)) or 0 for k in ("inputTokens", "cacheInputTokens", "cacheCreateTokens")
                )
                facts.tokens_out = (facts.tokens_out or 0) + (int_or_none(usage.get("outputTokens")) or 0)
        elif kind == "AgentTaskNameUpdatedEvent":
            name = next(
                (v for k in ("taskName", "name", "title") if isinstance(v := event.get(k), str) and v.strip()), None
            )
            self.title = name.strip() if name else self.title
        elif kind not in _QUIET_AGENT_EVENTS:
            self.unknown.saw(f"agentEvent:{kind}")


class JunieAdapter:
    """Junie CLI's per-session event logs."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [sessions_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        root = sessions_dir(env)
        sides: dict = {}
        for item in walk_files(root, ".jsonl", PROVIDER, match=lambda name: name == "events.jsonl"):
            # A title set in the index alone must count as a change.
            yield with_side_file(item, os.path.join(root, INDEX), sides) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _JunieRead(source, cursor).run()


ADAPTER = JunieAdapter()
