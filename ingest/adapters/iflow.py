"""The iFlow CLI adapter: ``~/.iflow/projects/<cwd, / → ->/session-<uuid>.jsonl`` (documented, not yet observed).

Owns what Voyager knows about iFlow CLI's transcripts. The evidence is peers' parsers and a
peer's format reference written against real files (agentsview, Engram), not a capture:
the CLI is not served by the npm registry here, and its service closed in 2026 (users
were moved to Qoder), so existing transcripts are what is left to search.

iFlow is a Gemini CLI fork that writes Claude Code's record shape, appended line by line
(read from the Cursor's offset: a new turn costs what it adds):
``{uuid, parentUuid, sessionId: "session-<uuid>", timestamp, type: user|assistant,
isSidechain, isMeta?, isCompactSummary?, cwd, gitBranch, version, message}``; ``message``
is ``{role, content}`` (a string or Anthropic blocks ``text``, ``thinking``, ``tool_use``,
``tool_result``) and, for the assistant, ``model`` and ``usage{input_tokens, output_tokens}``.
A ``tool_result``'s content keeps Gemini's shape (``{callId, responseParts:
{functionResponse{response{output}}}, resultDisplay}``, or a bare ``functionResponse``).

Traps peers found: assistant records are streamed as snapshots, so one ``tool_use`` id recurs
in neighbouring records (each call is indexed once: the ids seen travel in the Cursor);
``isMeta`` / ``isCompactSummary`` user records and text iFlow injects (continuation summaries,
``[Request interrupted``, ``<task-notification>``, ``<local-command-``, hook feedback, AGENTS.md
instructions) are meta, never a person's prompt; a sidechain's prompts come from its parent
agent. Resume: ``iflow --resume <sessionId>`` in the session's directory.
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
    int_or_none,
    list_or_empty,
    parse_ts,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.core.model import Session

PROVIDER = "iflow"
LABEL = "iFlow CLI"
SHELL_TOOLS = frozenset({"run_shell_command", "bash", "shell"})
#: Text iFlow puts in a ``user`` record that nobody typed.
_INJECTED = (
    "This session is being continued",
    "[Request interrupted",
    "<task-notification>",
    "<local-command-",
    "Stop hook feedback:",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<command-name>",
    "<system-reminder>",
)
#: How many tool-call ids the Cursor keeps to skip a streamed snapshot's repeats (they are neighbours).
_SEEN_CALLS = 256


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_IFLOW_HOME`` or ``~/.iflow``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "projects"


def resume_command(cwd: str | None, native_id: str) -> str | None:
    return resume_in(cwd, "iflow", opt("--resume", native_id))


def result_text(content: Any) -> str:
    """A ``tool_result``'s text from any of its shapes: a string, text blocks, Gemini's function response."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for c in content if (t := result_text(c)))
    if not isinstance(content, dict):
        return "" if content is None else compact_json(content)
    if "functionResponse" in content:
        response = as_dict(as_dict(content["functionResponse"]).get("response"))
        output = response.get("output", response.get("error"))
        return output if isinstance(output, str) else ("" if output is None else compact_json(output))
    if "responseParts" in content:
        text = result_text(content["responseParts"])
        display = content.get("resultDisplay")
        return text or (display if isinstance(display, str) else "")
    if isinstance(content.get("text"), str):
        return content["text"]
    return compact_json(content)


class _IflowRead(JsonlSessionRead):
    """One pass over one transcript (or its appended tail when resuming from a Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        self.stem = Path(source.path).stem
        seen = state.get("calls")
        self.calls: list[str] = [c for c in seen if isinstance(c, str)] if isinstance(seen, list) else []

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        return self.facts.session(PROVIDER, title=None, resume=resume_command(self.facts.cwd, native), source=self.path)

    def _state(self) -> dict[str, Any]:
        return {**self.facts.to_state(), "calls": self.calls[-_SEEN_CALLS:]}

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(f"a JSON {type(line).__name__}")  # type: ignore[union-attr]
            return
        kind = line.get("type")
        if kind not in ("user", "assistant"):
            if not isinstance(kind, str):
                self.unknown.saw("record without a type")  # type: ignore[union-attr]
            elif kind not in ("system", "summary"):
                self.unknown.saw(kind)  # type: ignore[union-attr]
            return
        if isinstance(line.get("version"), str):
            self.unknown.version = line["version"]  # type: ignore[union-attr]
        ts = parse_ts(line.get("timestamp"))
        self.facts.observe_ts(ts)
        self.facts.observe_place(line.get("cwd"), line.get("gitBranch"))
        message = as_dict(line.get("message"))
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
        drafts = self._user(line, blocks, ts) if kind == "user" else self._assistant(message, blocks, ts)
        yield from self._numbered(drafts, str_or_none(line.get("sessionId")) or self.stem)

    def _user(self, line: dict[str, Any], blocks: list[Any], ts: float | None) -> Iterator[Any]:
        injected = line.get("isMeta") is True or line.get("isCompactSummary") is True
        origin = "provider" if line.get("isSidechain") is True else "human"
        for block in blocks:
            if not isinstance(block, dict):
                self.unknown.saw("block:not-object")  # type: ignore[union-attr]
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                head = text.lstrip("\ufeff \t\r\n") if isinstance(text, str) else ""
                if injected or head.startswith(_INJECTED):
                    yield ("meta", "provider", text, {"ts": ts})
                else:
                    yield ("user", origin, text, {"ts": ts})
            elif btype == "tool_result":
                yield (
                    "tool_result",
                    "tool",
                    result_text(block.get("content")),
                    {
                        "ts": ts,
                        "call_id": str_or_none(block.get("tool_use_id")),
                        "is_error": block.get("is_error") is True,
                    },
                )
            elif btype not in ("image", "document"):
                self.unknown.saw(f"block:{btype}")  # type: ignore[union-attr]

    def _assistant(self, message: dict[str, Any], blocks: list[Any], ts: float | None) -> Iterator[Any]:
        facts = self.facts
        facts.model = str_or_none(message.get("model")) or facts.model
        usage = as_dict(message.get("usage"))
        if usage:
            facts.tokens_in = (facts.tokens_in or 0) + (int_or_none(usage.get("input_tokens")) or 0)
            facts.tokens_out = (facts.tokens_out or 0) + (int_or_none(usage.get("output_tokens")) or 0)
        for block in blocks:
            if not isinstance(block, dict):
                self.unknown.saw("block:not-object")  # type: ignore[union-attr]
                continue
            btype = block.get("type")
            if btype == "text":
                yield ("assistant", "agent", block.get("text"), {"ts": ts})
            elif btype == "thinking":
                yield ("reasoning", "agent", block.get("thinking"), {"ts": ts})
            elif btype == "tool_use":
                call_id = str_or_none(block.get("id"))
                if call_id is not None:
                    if call_id in self.calls:
                        continue  # a streamed snapshot repeating a call already indexed
                    self.calls.append(call_id)
                name = str_or_none(block.get("name"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, block.get("input"), SHELL_TOOLS),
                    {"ts": ts, "tool": name, "call_id": call_id},
                )
            elif btype != "redacted_thinking":
                self.unknown.saw(f"block:{btype}")  # type: ignore[union-attr]


class IflowAdapter:
    """iFlow CLI's per-project JSONL transcripts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return walk_files(projects_dir(env), ".jsonl", PROVIDER, name_prefix="session-")

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _IflowRead(source, cursor).run()


ADAPTER = IflowAdapter()
