"""Kimi Code's wire records (``agents/<agent>/wire.jsonl``, protocol 1.x) to events, for the Kimi adapter.

Documented, not observed: built from Kimi Code's own wire manifest and session store
(MoonshotAI/kimi-code, ``packages/agent-core-v2``) and its session guide; no capture of
a real session exists yet. A journal opens with ``{"type": "metadata",
"protocol_version", "created_at"}``; every other line is ``{"type", …payload, "time"}``.
The conversation is in three record types:

* ``context.append_message``: a message entering the model's context. A ``user``
  message with origin ``user`` (or none) is what a person typed; origin ``shell_command``
  is a ``!command`` they ran (``<bash-input>``/``<bash-stdout>`` wrapped); any other origin
  (injections, reminders, compaction summaries, task notices, hook output) is meta.
* ``context.append_loop_event``: the agent's step, streamed: ``content.part`` (``text`` or
  ``think``), ``tool.call`` (``args`` as an object) and ``tool.result`` (``isError``; no
  exit code).
* ``context.apply_compaction``: the summary that replaced the compacted messages.

``turn.prompt``/``turn.steer`` repeat the prompt that ``context.append_message`` records, so
they are skipped, as is the bookkeeping (profiles, tools, tokens, permissions, plans,
goals' state, cron, MCP discovery). An agent forked from another starts with a copy of
its messages, appended before its first turn: skipped (*verify* against a real fork).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters._common import (
    SessionFacts,
    UnknownRecords,
    as_dict,
    cached_by_stat,
    epoch,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.core.model import TitleSource

#: Record types with nothing to search (the agent's configuration and bookkeeping).
SKIPPED = frozenset(
    {
        "config.update",
        "profile.bind",
        "turn.prompt",
        "turn.steer",
        "turn.cancel",
        "turn.ended",
        "prompt.accepted",
        "context.clear",
        "context.undo",
        "llm.request",
        "llm.tools_snapshot",
        "mcp.tools_discovered",
        "usage.record",
        "permission.record_approval_result",
        "permission.set_mode",
        "plan_mode.cancel",
        "plan_mode.enter",
        "plan_mode.exit",
        "plan.revision",
        "plugin.session_start",
        "runtime.set_binding",
        "staleGuard.cleared",
        "staleGuard.recorded",
        "swarm_mode.enter",
        "swarm_mode.exit",
        "task.started",
        "task.terminated",
        "task.waitDelivered",
        "token_counting.measured",
        "token_counting.rebased",
        "token_counting.truncated",
        "token_counting.turn_recorded",
        "tools.register_user_tool",
        "tools.reset_active_tools",
        "tools.set_active_tools",
        "tools.unregister_user_tool",
        "tools.update_store",
        "tower_mode.enter",
        "tower_mode.exit",
        "cron.add",
        "cron.cursor",
        "cron.delete",
        "forked",
        "full_compaction.begin",
        "full_compaction.cancel",
        "full_compaction.complete",
        "goal.clear",
        "goal.update",
        "interaction.request",
        "interaction.resolved",
        "interruptionReminder.recorded",
    }
)
_SHELL_TOOLS = frozenset({"Bash", "Shell", "bash", "shell"})
_TITLE_KINDS: dict[str, TitleSource] = {"custom": "user", "generated": "agent", "replaceable": "prompt"}
_BASH_TAG = re.compile(r"</?bash-(?:input|stdout|stderr)>")

_json = decode_json


class CodeState(msgspec.Struct):
    """What reading one agent's journal carries across lines (and across reads, in the Cursor)."""

    #: The agent starts with a copy of another agent's messages (``forkedFrom``).
    forked: bool = False
    #: A turn has begun: from here on, every message is the agent's own.
    prompted: bool = False

    @classmethod
    def from_cursor(cls, state: dict[str, Any]) -> CodeState:
        saved = state.get("code")
        try:
            return msgspec.convert(saved, cls) if isinstance(saved, dict) else cls()
        except msgspec.ValidationError:
            return cls()

    def to_cursor(self) -> dict[str, Any]:
        return {"code": msgspec.structs.asdict(self)}


def _origin_kind(origin: Any) -> str | None:
    """A message's origin kind: written as a string or as ``{"kind": …}``."""
    if isinstance(origin, dict):
        return str_or_none(origin.get("kind"))
    return str_or_none(origin)


def _text(content: Any, types: tuple[str, ...] = ("text",)) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in types:
            value = part.get("text") if part.get("type") == "text" else part.get("think")
            if isinstance(value, str) and value:
                out.append(value)
    return "\n".join(out)


def render_call(name: str | None, args: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md). Kimi CLI's and Kimi Code's tools take the same arguments, so both layouts render them here."""
    return tool_call_text(name, args, _SHELL_TOOLS)


def record(
    rec: dict[str, Any], state: CodeState, facts: SessionFacts, unknown: UnknownRecords, subagent: bool
) -> Iterator[Draft]:
    """The drafts one journal line yields."""
    kind = rec.get("type")
    if kind == "metadata":
        version = str_or_none(rec.get("protocol_version"))
        if version:
            unknown.version = f"(wire protocol {version})"
        return
    ts = epoch(rec.get("time"))
    facts.observe_ts(ts)
    if kind in ("turn.prompt", "turn.steer"):
        state.prompted = True
        return
    if state.forked and not state.prompted and kind in ("context.append_message", "context.append_loop_event"):
        return  # the copy a fork starts with
    if kind == "context.append_message":
        message = rec.get("message")
        if isinstance(message, dict):
            yield from _message(message, ts, subagent)
    elif kind == "context.append_loop_event":
        event = rec.get("event")
        if isinstance(event, dict):
            yield from _loop_event(event, ts, unknown)
    elif kind == "context.apply_compaction":
        summary = rec.get("summary")
        text = _text(summary.get("content")) if isinstance(summary, dict) else summary
        yield ("meta", "provider", text or rec.get("contextSummary"), {"ts": ts})
    elif kind == "goal.create":
        objective = str_or_none(rec.get("objective"))
        yield ("meta", "provider", f"goal: {objective}" if objective else None, {"ts": ts})
    elif kind in ("config.update", "profile.bind", "llm.request"):
        model = str_or_none(rec.get("modelAlias")) or str_or_none(rec.get("model"))
        if model:
            facts.model = model
    elif not (isinstance(kind, str) and kind in SKIPPED):  # a list or dict type is unhashable
        unknown.saw(kind)


def _message(message: dict[str, Any], ts: float | None, subagent: bool) -> Iterator[Draft]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        origin = _origin_kind(message.get("origin"))
        text = _text(content)
        if origin in (None, "user"):
            yield ("user", "provider" if subagent else "human", text, {"ts": ts})
        elif origin == "shell_command":
            phase = message.get("origin", {}).get("phase") if isinstance(message.get("origin"), dict) else None
            plain = _BASH_TAG.sub("", text).strip("\n")
            if phase == "input":
                yield ("tool_call", "human", tool_call_text("bash", plain), {"ts": ts, "tool": "bash"})
            else:
                failed = isinstance(message.get("origin"), dict) and message["origin"].get("isError") is True
                yield ("tool_result", "tool", plain, {"ts": ts, "tool": "bash", "is_error": failed})
        else:
            yield ("meta", "provider", text, {"ts": ts})
    elif role == "assistant":
        yield ("reasoning", "agent", _text(content, ("think",)), {"ts": ts})
        yield ("assistant", "agent", _text(content), {"ts": ts})
        for call in list_or_empty(message.get("toolCalls")):
            if isinstance(call, dict):
                name = str_or_none(call.get("name"))
                yield (
                    "tool_call",
                    "agent",
                    render_call(name, call.get("arguments")),
                    {"ts": ts, "tool": name, "call_id": str_or_none(call.get("id"))},
                )
    elif role == "tool":
        yield (
            "tool_result",
            "tool",
            _text(content),
            {"ts": ts, "call_id": str_or_none(message.get("toolCallId")), "is_error": message.get("isError") is True},
        )
    elif role == "system":
        yield ("meta", "provider", _text(content), {"ts": ts})


def _loop_event(event: dict[str, Any], ts: float | None, unknown: UnknownRecords) -> Iterator[Draft]:
    etype = event.get("type")
    if etype == "content.part":
        part = event.get("part")
        if isinstance(part, dict):
            if part.get("type") == "text":
                yield ("assistant", "agent", part.get("text"), {"ts": ts})
            elif part.get("type") == "think":
                yield ("reasoning", "agent", part.get("think"), {"ts": ts})
    elif etype == "tool.call":
        name = str_or_none(event.get("name"))
        yield (
            "tool_call",
            "agent",
            render_call(name, event.get("args")),
            {"ts": ts, "tool": name, "call_id": str_or_none(event.get("toolCallId"))},
        )
    elif etype == "tool.result":
        result = as_dict(event.get("result"))
        yield (
            "tool_result",
            "tool",
            _text(result.get("output")),
            {"ts": ts, "call_id": str_or_none(event.get("toolCallId")), "is_error": result.get("isError") is True},
        )
    elif etype not in ("step.begin", "step.end"):
        unknown.saw(f"loop:{etype}")


def title(state: dict[str, Any]) -> tuple[str | None, TitleSource | None]:
    """A session's title and who gave it, from ``state.json`` (``titleKind``, or the older ``isCustomTitle``)."""
    text = str_or_none(state.get("title"))
    if not text:
        return None, None
    kind = state.get("titleKind")
    if isinstance(kind, str) and kind in _TITLE_KINDS:
        return text, _TITLE_KINDS[kind]
    if state.get("isCustomTitle") is True:
        return text, "user"
    return text, None


def imported(state: dict[str, Any]) -> bool:
    """True for Kimi Code's copy of a session imported from Kimi CLI (whose original Voyager reads)."""
    custom = state.get("custom")
    return isinstance(custom, dict) and custom.get("imported_from_kimi_cli") is True


def forked_agent(state: dict[str, Any], agent: str) -> bool:
    """True when ``agent`` of this session (or, for ``main``, the session itself) was forked from another."""
    agents = state.get("agents")
    entry = agents.get(agent) if isinstance(agents, dict) else None
    if isinstance(entry, dict) and str_or_none(entry.get("forkedFrom")):
        return True
    return agent == "main" and bool(str_or_none(state.get("forkedFrom")))


def _load_index(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with open_regular(path) as fh:
        for line in fh:
            try:
                entry = _json(line)
            except msgspec.DecodeError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
                if entry.get("deleted") is True:
                    out.pop(entry["sessionId"], None)
                elif isinstance(entry.get("workDir"), str):
                    out[entry["sessionId"]] = entry["workDir"]
    return out


def work_dir(home: Path, session: str) -> str | None:
    """The working directory ``session_index.jsonl`` records for a session, if any."""
    dirs: dict[str, str] = cached_by_stat(str(home / "session_index.jsonl"), _load_index, {})
    return dirs.get(session)
