"""The CodeBuddy Code adapter: ``~/.codebuddy/projects/<cwd>/<id>.jsonl`` (documented, not yet observed).

Owns what Voyager knows about Tencent CodeBuddy Code's (the ``codebuddy`` CLI's) transcripts.
The evidence is peers' readers (a Python history parser that documents every record type,
usage trackers, a hook integration naming ``$CODEBUDDY_CONFIG_DIR``), not a capture: the CLI
is not served by the npm registry here. Peers disagree on the records (one says Claude Code's,
one documents the shape below); this adapter reads the documented one and names any other
record type in a notice, so a Claude-shaped file is reported, never silently empty.

One JSONL file a session, appended (read from the Cursor's offset); ``agent-*.jsonl`` beside
them are subagents. Records ``{id, timestamp, type, role, content, sessionId, cwd, parentId,
providerData.model}``:

* ``message``: ``role`` ``user`` / ``assistant``, ``content`` a string or blocks
  ``input_text`` / ``output_text`` / ``text``;
* ``function_call`` (``callId``, ``name``, ``arguments`` as JSON text) and
  ``function_call_result`` (``callId``, ``name``, ``output`` text or ``{text}``, ``status``);
* ``reasoning`` (``rawContent[]`` of ``reasoning_text``), ``topic`` (the title);
* ``file-history-snapshot``: bookkeeping.

A user message starting ``<command-name>``, ``<command-message>``, ``<local-command-stdout>``,
``<system-reminder>``, ``Caveat:`` or ``Warmup`` is CodeBuddy's own text (meta); a subagent's
prompts come from its parent. No resume command is known.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    as_dict,
    compact_json,
    join_text,
    list_or_empty,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.core.model import Session

PROVIDER = "codebuddy"
LABEL = "CodeBuddy Code"
SHELL_TOOLS = frozenset({"bash", "shell", "execute_command", "run_terminal_cmd"})
_TEXT_BLOCKS = ("input_text", "output_text", "text")
_INJECTED = ("<command-name>", "<command-message>", "<local-command-stdout>", "<system-reminder>", "Caveat:", "Warmup")


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_CODEBUDDY_HOME``, ``$CODEBUDDY_CONFIG_DIR`` or ``~/.codebuddy``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "projects"


class _CodeBuddyRead(JsonlSessionRead):
    """One pass over one transcript (or its appended tail when resuming from a Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        p = Path(source.path)
        self.stem = p.stem
        self.subagent = p.name.startswith("agent-")
        title = state.get("title")
        self.title: str | None = title if isinstance(title, str) else None

    def _session(self) -> Session:
        return self.facts.session(PROVIDER, title=self.title, title_source="agent", resume=None, source=self.path)

    def _state(self) -> dict[str, Any]:
        return {**self.facts.to_state(), **({"title": self.title} if self.title else {})}

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(f"a JSON {type(line).__name__}")
            return
        kind = line.get("type")
        ts = parse_ts(line.get("timestamp"))
        self.facts.observe_ts(ts)
        self.facts.observe_place(line.get("cwd"), None)
        if kind == "topic":
            topic = str_or_none(line.get("topic"))
            if topic and topic.strip():
                self.title = topic.strip()
            return
        if kind == "message":
            drafts = self._message(line, ts)
        elif kind == "function_call":
            name = str_or_none(line.get("name"))
            drafts = iter(
                [
                    (
                        "tool_call",
                        "agent",
                        tool_call_text(name, line.get("arguments"), SHELL_TOOLS),
                        {"ts": ts, "tool": name, "call_id": str_or_none(line.get("callId"))},
                    )
                ]
            )
        elif kind == "function_call_result":
            output = line.get("output")
            text = (
                output
                if isinstance(output, str)
                else (
                    as_dict(output).get("text")
                    if isinstance(as_dict(output).get("text"), str)
                    else ("" if output is None else compact_json(output))
                )
            )
            drafts = iter(
                [
                    (
                        "tool_result",
                        "tool",
                        text,
                        {
                            "ts": ts,
                            "tool": str_or_none(line.get("name")),
                            "call_id": str_or_none(line.get("callId")),
                            "is_error": line.get("status") in ("failed", "error"),
                        },
                    )
                ]
            )
        elif kind == "reasoning":
            parts = [as_dict(p).get("text") for p in list_or_empty(line.get("rawContent"))]
            drafts = iter([("reasoning", "agent", "\n".join(t for t in parts if isinstance(t, str) and t), {"ts": ts})])
        else:
            if kind != "file-history-snapshot":
                self.unknown.saw(kind if isinstance(kind, str) else "record without a type")
            return
        yield from self._numbered(drafts, str_or_none(line.get("sessionId")) or self.stem)

    def _message(self, line: dict[str, Any], ts: float | None) -> Iterator[Any]:
        role = line.get("role")
        model = str_or_none(as_dict(line.get("providerData")).get("model"))
        if model:
            self.facts.model = model
        text = join_text(line.get("content"), _TEXT_BLOCKS)
        if role == "user":
            if text.lstrip().startswith(_INJECTED):
                yield ("meta", "provider", text, {"ts": ts})
            else:
                yield ("user", "provider" if self.subagent else "human", text, {"ts": ts})
        elif role == "assistant":
            yield ("assistant", "agent", text, {"ts": ts})
        else:
            self.unknown.saw(f"role:{role}")


class CodeBuddyAdapter:
    """CodeBuddy Code's per-project JSONL transcripts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return walk_files(projects_dir(env), ".jsonl", PROVIDER)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _CodeBuddyRead(source, cursor).run()


ADAPTER = CodeBuddyAdapter()
