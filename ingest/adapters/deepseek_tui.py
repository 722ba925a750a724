"""The DeepSeek TUI / CodeWhale adapter: ``~/.codewhale/sessions/<id>.json`` (documented, not yet observed).

DeepSeek TUI, renamed CodeWhale, keeps one JSON document a session, rewritten whole as it goes on,
in ``~/.codewhale/sessions/`` (the name before the rename: ``~/.deepseek/sessions/``; both are read).
As agentsview's ``deepseek_tui.go`` reads it::

    {"metadata": {"id", "title", "created_at", "updated_at", "model", "workspace", …},
     "messages": [{"role": "user"|"assistant", "content": str | [blocks], "timestamp", "model"}, …]}

with Anthropic-style blocks (``text``, ``thinking``, ``tool_use``/``server_tool_use``,
``tool_result`` and the server tools' results), read by :mod:`._blocks`: a ``user`` message's text
is a person's prompt, a tool result in it is the tool's. ``latest.json`` (a pointer to the newest
session) and ``offline_queue.json`` (prompts waiting for the network) are not sessions. The npm
package ``deepseek-tui`` is only a stub naming ``codewhale`` (not on this machine's registry), so
nothing was run here; no resume command is documented.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import blocks
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    doc_with_list,
    document_items,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.core.model import Session, session_id

PROVIDER = "deepseek-tui"
LABEL = "DeepSeek TUI"
#: Files in the sessions dir that are not sessions.
NOT_SESSIONS = frozenset({"latest.json", "offline_queue.json"})


def sessions_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_DEEPSEEK_TUI_HOME/sessions`` when set (authoritative), else CodeWhale's and the older name's."""
    return [home / "sessions" for home in manifest.agent_homes(("deepseek-tui", "deepseek-tui.legacy"), env)]


class _SessionRead:
    """One read of one session document."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.model: str | None = None
        self.first: float | None = None
        self.last: float | None = None

    def run(self) -> Iterator[Item]:
        read = doc_with_list(self.path, "messages", "a DeepSeek TUI session file", ("metadata",))
        if isinstance(read, Notice):
            yield read
            return
        doc, messages = read
        meta = as_dict(doc.get("metadata"))
        native = str_or_none(meta.get("id")) or Path(self.path).stem
        sid = session_id(PROVIDER, native)
        self.model = str_or_none(meta.get("model"))

        def session() -> Session:
            title = str_or_none(meta.get("title"))
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=title.strip() if title and title.strip() else None,
                cwd=str_or_none(meta.get("workspace")),
                model=self.model,
                started=parse_ts(meta.get("created_at")) or self.first,
                updated=parse_ts(meta.get("updated_at")) or self.last,
                resume=None,
                source=self.path,
            )

        events = number(EventCounter(sid, 0), self._drafts(messages))
        yield from document_items(sid, session, events, messages, self.before, self.unknown, self.path)

    def _drafts(self, messages: Any) -> Iterator[Draft]:
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw("message:not-object")
                continue
            role = message.get("role")
            ts = parse_ts(message.get("timestamp"))
            if ts is not None:
                self.first = ts if self.first is None else min(self.first, ts)
                self.last = ts if self.last is None else max(self.last, ts)
            if role == "system":
                continue  # the system prompt: the agent's, the same in every session
            if role not in ("user", "assistant"):
                self.unknown.saw(f"role:{role}")
                continue
            if role == "assistant":
                self.model = str_or_none(message.get("model")) or self.model
            yield from blocks(role, message.get("content"), ts, self.unknown)


class DeepSeekTUIAdapter:
    """DeepSeek TUI's (CodeWhale's) session documents."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return sessions_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in sessions_dirs(env):
            yield from walk_files(
                root,
                ".json",
                PROVIDER,
                append_only=False,
                match=lambda name: name.endswith(".json") and name not in NOT_SESSIONS,
                skip_dir=lambda name: True,  # flat: nothing below the sessions dir is a session
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not a DeepSeek TUI session file; skipped", fatal=True)])
        return _SessionRead(source, cursor).run()


ADAPTER = DeepSeekTUIAdapter()
