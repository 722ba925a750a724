"""The Zencoder adapter: ``~/.zencoder/sessions/<id>.jsonl`` (documented, not yet observed).

Owns what Voyager knows about Zencoder's CLI transcripts. The evidence is agentsview's
Zencoder parser and its test data, not a real install (Zencoder needs an account).

One JSONL file a session, appended (read from the Cursor's offset). The first line is a
header ``{id, parentId, creationReason, createdAt, updatedAt}``; every later line is one
message ``{role, content, createdAt}``:

* ``system``: a string (the environment banner, whose ``Working directory: <path>`` is the cwd): meta;
* ``user``: blocks ``{type: text, text, tag}``: a person's prompt when ``tag`` is empty or
  ``user-input``, else text Zencoder injected (``instructions``, ``system-reminder``,
  ``todo-reminder``: meta); ``skill`` blocks (a skill's body) are meta;
* ``assistant``: ``text``, ``reasoning``, ``tool-call`` (``toolCallId``, ``toolName``, ``input``);
* ``tool``: ``tool-result`` (``toolCallId``, ``content[]`` of text-bearing blocks; a tagged one
  is injected text, meta); a subagent's result names its session ``<session-id>…</session-id>``;
* ``finish``, ``permission``: bookkeeping, skipped.

A session continued from another (``creationReason`` ``directContinuation``,
``summarizedContinuation``, ``summarizationRequest``) has that one as its parent. No resume
command is known.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    compact_json,
    list_or_empty,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.core.model import Session, session_id

PROVIDER = "zencoder"
LABEL = "Zencoder"
SHELL_TOOLS = frozenset({"bash", "shell", "execute_shell_command", "run_terminal_command", "execute_command"})
_CWD = re.compile(r"Working directory:[ \t]*(\S[^\r\n]*)")
_CONTINUATIONS = frozenset({"directContinuation", "summarizedContinuation", "summarizationRequest"})
_PROMPT_TAGS = frozenset({"", "user-input"})


def sessions_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_ZENCODER_HOME`` or ``~/.zencoder``, with ``sessions/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "sessions"


class _ZencoderRead(JsonlSessionRead):
    """One pass over one transcript (or its appended tail when resuming from a Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self._start(source.path, cursor, LABEL)
        self.stem = Path(source.path).stem

    def _session(self) -> Session:
        return self.facts.session(PROVIDER, title=None, resume=None, source=self.path)

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(f"a JSON {type(line).__name__}")
            return
        role = line.get("role")
        if role is None and record.lineno == 1:
            self._header(line)
            return
        ts = parse_ts(line.get("createdAt"))
        self.facts.observe_ts(ts)
        content = line.get("content")
        if role == "system":
            text = content if isinstance(content, str) else ""
            if (m := _CWD.search(text)) is not None:
                self.facts.observe_place(m.group(1).strip(), None)
            drafts: Iterator[Any] = iter([("meta", "provider", text, {"ts": ts})])
        elif role == "user":
            drafts = self._user(content, ts)
        elif role == "assistant":
            drafts = self._assistant(content, ts)
        elif role == "tool":
            drafts = self._tool(content, ts)
        else:
            if role not in ("finish", "permission"):
                self.unknown.saw(f"role:{role}")
            return
        yield from self._numbered(drafts, self.facts.native_id or self.stem)

    def _header(self, line: dict[str, Any]) -> None:
        """The first line: the session's id, times and the session it continues."""
        native = str_or_none(line.get("id"))
        if native is not None and self.counter is None:
            self.facts.native_id = native  # the session begins (is yielded) at its first event
        self.facts.observe_ts(parse_ts(line.get("createdAt")))
        self.facts.observe_ts(parse_ts(line.get("updatedAt")))
        parent = str_or_none(line.get("parentId"))
        if parent and line.get("creationReason") in _CONTINUATIONS:
            self.facts.parent = session_id(PROVIDER, parent)

    def _blocks(self, content: Any) -> Iterator[tuple[dict[str, Any], Any]]:
        """A message's content blocks with their types (a plain string is one text block); one that is
        not an object is counted as unknown and skipped. The user's and the assistant's are read alike."""
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
        for block in blocks:
            if not isinstance(block, dict):
                self.unknown.saw("block:not-object")
                continue
            yield block, block.get("type")

    def _user(self, content: Any, ts: float | None) -> Iterator[Any]:
        for block, btype in self._blocks(content):
            if btype == "text":
                tag = block.get("tag") or ""
                typed = isinstance(tag, str) and tag in _PROMPT_TAGS
                yield (
                    ("user", "human", block.get("text"), {"ts": ts})
                    if typed
                    else ("meta", "provider", block.get("text"), {"ts": ts})
                )
            elif btype == "skill":
                yield ("meta", "provider", block.get("content"), {"ts": ts})
            elif btype not in ("image", "file"):
                self.unknown.saw(f"block:{btype}")

    def _assistant(self, content: Any, ts: float | None) -> Iterator[Any]:
        for block, btype in self._blocks(content):
            if btype == "text":
                yield ("assistant", "agent", block.get("text"), {"ts": ts})
            elif btype == "reasoning":
                yield ("reasoning", "agent", block.get("text"), {"ts": ts})
            elif btype == "tool-call":
                name = str_or_none(block.get("toolName"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, block.get("input"), SHELL_TOOLS),
                    {"ts": ts, "tool": name, "call_id": str_or_none(block.get("toolCallId"))},
                )
            else:
                self.unknown.saw(f"block:{btype}")

    def _tool(self, content: Any, ts: float | None) -> Iterator[Any]:
        for block in list_or_empty(content):
            if not isinstance(block, dict) or block.get("type") != "tool-result":
                self.unknown.saw("tool:not-a-result")
                continue
            texts: list[str] = []
            injected: list[str] = []
            for part in list_or_empty(block.get("content")):
                part = part if isinstance(part, dict) else {}
                text = part.get("text")
                if not isinstance(text, str) or not text:
                    continue
                (injected if part.get("tag") else texts).append(text)
            if (
                not texts
                and not injected
                and block.get("content") is not None
                and not isinstance(block.get("content"), list)
            ):
                texts.append(compact_json(block.get("content")))
            call_id = str_or_none(block.get("toolCallId"))
            yield (
                "tool_result",
                "tool",
                "\n".join(texts),
                {"ts": ts, "call_id": call_id, "is_error": block.get("isError") is True},
            )
            yield ("meta", "provider", "\n".join(injected), {"ts": ts})


class ZencoderAdapter:
    """Zencoder's JSONL sessions."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [sessions_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return walk_files(sessions_dir(env), ".jsonl", PROVIDER)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _ZencoderRead(source, cursor).run()


ADAPTER = ZencoderAdapter()
