"""The Command Code adapter: ``~/.commandcode/projects/<project>/<id>.jsonl`` (documented, not yet observed).

Owns what Voyager knows about Command Code's transcripts. The evidence is agentsview's
Command Code parser and its test fixtures, not a real install (the CLI crashed at import
here and needs a Command Code login):

* one JSONL transcript a session, one message a line: ``{sessionId, role: user|assistant|tool,
  content, timestamp (ISO), gitBranch, metadata{cwd | projectPath | context.cwd}}``;
  ``content`` is a string or AI-SDK-style blocks: ``text``, ``reasoning``/``thinking``,
  ``tool-call`` (``toolCallId``, ``toolName``, ``input``; Anthropic's ``tool_use`` also read),
  ``tool-result`` (``toolCallId``, ``output{type, value}`` or ``content``; ``tool_result``);
* ``<id>.meta.json`` beside it: ``{title, userRenamed, projectPath, cwd}`` (a renamed title is
  the person's own); ``<id>.checkpoints.jsonl`` and ``<id>.prompts.jsonl`` are not transcripts.

A ``user`` line's text is a person's prompt; its tool results are results. The file is
read whole when it changes (``reread_delta`` keeps an appended turn at the cost of what it
adds); the side file is part of the fingerprint, so a rename alone is seen. No resume
command is known.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    SessionFacts,
    UnknownRecords,
    as_dict,
    compact_json,
    list_or_empty,
    parse_ts,
    reread_delta,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import Record, read_records
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "commandcode"
LABEL = "Command Code"
SHELL_TOOLS = frozenset({"bash", "shell", "run_command", "execute_command", "run_terminal_cmd"})
_NOT_TRANSCRIPTS = (".checkpoints.jsonl", ".prompts.jsonl")


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_COMMANDCODE_HOME`` or ``~/.commandcode``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "projects"


def meta_path(transcript: str) -> Path:
    return Path(transcript[: -len(".jsonl")] + ".meta.json")


def _cwd(record: dict[str, Any]) -> str | None:
    meta = as_dict(record.get("metadata"))
    return (
        str_or_none(meta.get("cwd"))
        or str_or_none(meta.get("projectPath"))
        or str_or_none(as_dict(meta.get("context")).get("cwd"))
        or str_or_none(record.get("cwd"))
    )


def result_text(block: dict[str, Any]) -> str:
    """A tool result's text: ``output.value`` when it is text, else the output or content as text or JSON."""
    output = block["output"] if "output" in block else block.get("content")
    if isinstance(output, dict) and isinstance(output.get("value"), str):
        return output["value"]
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [b["text"] for b in output if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else compact_json(output)
    if output is not None:
        return compact_json(output)
    for key in ("text", "error", "value"):
        if isinstance(block.get(key), str):
            return block[key]
    return ""


class _TranscriptRead:
    """One read of one transcript (and its side file)."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.facts = SessionFacts()

    def run(self) -> Iterator[Item]:
        drafts: list[Draft] = []
        notices: list[Notice] = []
        for item in read_records(self.path):
            if isinstance(item, Notice):
                if item.fatal:
                    yield item
                    return
                notices.append(item)
                continue
            drafts.extend(self._record(item))
        meta = read_json_object(meta_path(self.path), fatal=False)
        meta = meta if isinstance(meta, dict) else {}
        native = self.facts.native_id or os.path.basename(self.path)[: -len(".jsonl")]
        if not drafts and self.facts.native_id is None:
            yield from notices
            return  # an empty transcript: nothing to find
        sid = session_id(PROVIDER, native)
        self.facts.native_id = native
        if self.facts.cwd is None:
            self.facts.cwd = str_or_none(meta.get("cwd")) or str_or_none(meta.get("projectPath"))
        title = str_or_none(meta.get("title"))
        title = title.strip() if title and title.strip() else None
        session: Session = self.facts.session(
            PROVIDER,
            title=title,
            resume=None,
            source=self.path,
            title_source="user" if meta.get("userRenamed") is True else "agent",
        )
        yield session
        events: list[Event] = list(number(EventCounter(sid, 0), drafts))
        items, now = reread_delta(sid, events, self.before)
        yield from items
        yield from notices
        if (notice := self.unknown.notice(self.path)) is not None:
            yield notice
        yield Cursor(offset=0, next_seq=0, tail_hash="", session=sid, state={"delta": now})

    def _record(self, record: Record) -> Iterator[Draft]:
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(type(line).__name__)
            return
        if self.facts.native_id is None:
            self.facts.native_id = str_or_none(line.get("sessionId"))
        self.facts.observe_place(_cwd(line), line.get("gitBranch"))
        ts = parse_ts(line.get("timestamp"))
        self.facts.observe_ts(ts)
        role = line.get("role")
        content = line.get("content")
        if role not in ("user", "assistant", "tool"):
            self.unknown.saw(f"role:{role}")
            return
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
        for block in blocks:
            if not isinstance(block, dict):
                self.unknown.saw("block:not-object")
                continue
            yield from self._block(role, block, ts)

    def _block(self, role: str, block: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        btype = block.get("type")
        if btype == "text":
            if role == "user":
                yield ("user", "human", block.get("text"), {"ts": ts})
            elif role == "assistant":
                yield ("assistant", "agent", block.get("text"), {"ts": ts})
            else:
                yield ("tool_result", "tool", block.get("text"), {"ts": ts})
        elif btype in ("reasoning", "thinking"):
            text = block.get("text") if isinstance(block.get("text"), str) and block["text"] else block.get("thinking")
            yield ("reasoning", "agent", text, {"ts": ts})
        elif btype in ("tool-call", "tool_use"):
            name = str_or_none(block.get("toolName")) or str_or_none(block.get("name"))
            args = block.get("input") if "input" in block else block.get("args")
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, args, SHELL_TOOLS),
                {
                    "ts": ts,
                    "tool": name,
                    "call_id": str_or_none(block.get("toolCallId")) or str_or_none(block.get("id")),
                },
            )
        elif btype in ("tool-result", "tool_result"):
            output = as_dict(block.get("output"))
            yield (
                "tool_result",
                "tool",
                result_text(block),
                {
                    "ts": ts,
                    "tool": str_or_none(block.get("toolName")),
                    "call_id": str_or_none(block.get("toolCallId")) or str_or_none(block.get("tool_use_id")),
                    "is_error": block.get("is_error") is True or str(output.get("type", "")).startswith("error"),
                },
            )
        elif btype not in ("image", "file"):
            self.unknown.saw(f"block:{btype}")


class CommandCodeAdapter:
    """Command Code's per-project JSONL transcripts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for item in walk_files(
            projects_dir(env),
            ".jsonl",
            PROVIDER,
            append_only=False,
            match=lambda name: name.endswith(".jsonl") and not name.endswith(_NOT_TRANSCRIPTS),
        ):
            # The title lives in the side file: a rename alone must count as a change.
            yield with_side_file(item, meta_path(item.path)) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _TranscriptRead(source, cursor).run()


ADAPTER = CommandCodeAdapter()
