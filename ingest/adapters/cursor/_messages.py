"""Cursor's message vocabulary, shared by its CLI store and its agent transcripts.

Both wrap what a person typed in ``<user_query>…</user_query>`` and put context Cursor
gathers around it (``<user_info>``, ``<attached_files>``, rules …): the query is the
prompt, the rest is ``meta``. The CLI store keeps messages in the AI SDK's shape
(``text``/``reasoning``/``tool-call`` blocks, ``tool`` messages with ``tool-result``);
transcripts keep Anthropic's (``text``/``thinking``/``tool_use``, ``tool_result`` in a user
message). Both map here to Voyager's kinds, so the two surfaces index a turn alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from voyager_sessions.ingest.adapters._common import EventCounter, UnknownRecords, compact_json, str_or_none
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Origin

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
#: A message made only of tagged blocks (``<user_info>…</user_info>`` …) is context Cursor wrote.
_TAGGED_ONLY = re.compile(r"(?:\s*<([A-Za-z_][\w-]*)(?:\s[^>]*)?>.*?</\1>)+\s*", re.S)

#: Tool names whose input is a shell command: the command is what a person searches for.
SHELL_TOOLS = frozenset(
    {"shell", "run_terminal_cmd", "run_terminal_command", "run_terminal_command_v2", "bash", "terminal", "run_command"}
)


def split_user_text(text: str) -> tuple[str | None, str | None]:
    """``(prompt, context)`` of a user message: the ``<user_query>`` text, and what Cursor wrapped around it.

    Without a ``<user_query>``, a message made only of tagged blocks is context; anything
    else is what the person typed.
    """
    queries = [q for q in _QUERY.findall(text) if q.strip()]
    if queries:
        rest = _QUERY.sub("", text).strip()
        return "\n\n".join(queries), rest or None
    if _TAGGED_ONLY.fullmatch(text):
        return None, text.strip() or None
    return text, None


def render_tool_input(name: str | None, args: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, args, SHELL_TOOLS)


def result_text(value: Any) -> str:
    """A tool result as text: a string as is, ``[{type: text, text}]`` blocks joined, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        if parts:
            return "\n".join(parts)
    if value is None:
        return ""
    return compact_json(value)


def user_events(counter: EventCounter, text: Any, *, person: Origin, ts: float | None) -> Iterator[Event]:
    """Events for the text of a user message: the prompt (``person`` wrote it) and Cursor's context (``meta``)."""
    if not isinstance(text, str):
        return
    prompt, context = split_user_text(text)
    if context and (ev := counter.make("meta", "provider", context, ts=ts)) is not None:
        yield ev
    if prompt and (ev := counter.make("user", person, prompt, ts=ts)) is not None:
        yield ev


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def sdk_message_events(
    counter: EventCounter, msg: dict[str, Any], *, person: Origin, ts: float | None, unknown: UnknownRecords
) -> Iterator[Event]:
    """One CLI-store message (AI SDK shape: roles system/user/assistant/tool) as Events."""
    role = msg.get("role")
    if role == "system":
        return  # the same system prompt in every chat; Cursor's instructions, not the conversation
    for block in _blocks(msg.get("content")):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        ev: Event | None = None
        if btype == "text":
            if role == "user":
                yield from user_events(counter, block.get("text"), person=person, ts=ts)
                continue
            if role == "assistant":
                ev = counter.make("assistant", "agent", str_or_none(block.get("text")), ts=ts)
            else:
                unknown.saw(f"{role} text")
        elif btype == "reasoning":
            ev = counter.make("reasoning", "agent", str_or_none(block.get("text")), ts=ts)
        elif btype == "redacted-reasoning":
            continue  # encrypted: nothing to read
        elif btype == "tool-call":
            name = str_or_none(block.get("toolName"))
            args = block.get("args", block.get("input"))
            ev = counter.make(
                "tool_call",
                "agent",
                render_tool_input(name, args),
                ts=ts,
                tool=name,
                call_id=str_or_none(block.get("toolCallId")),
            )
        elif btype == "tool-result":
            name = str_or_none(block.get("toolName"))
            ev = counter.make(
                "tool_result",
                "tool",
                result_text(block.get("result", block.get("output"))),
                ts=ts,
                tool=name,
                call_id=str_or_none(block.get("toolCallId")),
                is_error=block.get("isError") is True,
            )
        elif btype in ("image", "file"):
            continue
        else:
            unknown.saw(f"{role} block {btype!r}")
        if ev is not None:
            yield ev


def anthropic_message_events(
    counter: EventCounter, role: Any, content: Any, *, person: Origin, ts: float | None, unknown: UnknownRecords
) -> Iterator[Event]:
    """One transcript message (Anthropic shape: ``text``/``thinking``/``tool_use`` blocks, ``tool_result`` in
    user messages) as Events."""
    for block in _blocks(content):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        ev: Event | None = None
        if btype == "text":
            if role == "user":
                yield from user_events(counter, block.get("text"), person=person, ts=ts)
                continue
            ev = counter.make("assistant", "agent", str_or_none(block.get("text")), ts=ts)
        elif btype == "thinking":
            ev = counter.make(
                "reasoning", "agent", str_or_none(block.get("thinking")) or str_or_none(block.get("text")), ts=ts
            )
        elif btype == "redacted_thinking":
            continue
        elif btype == "tool_use":
            name = str_or_none(block.get("name"))
            ev = counter.make(
                "tool_call",
                "agent",
                render_tool_input(name, block.get("input")),
                ts=ts,
                tool=name,
                call_id=str_or_none(block.get("id")),
            )
        elif btype == "tool_result":
            ev = counter.make(
                "tool_result",
                "tool",
                result_text(block.get("content")),
                ts=ts,
                call_id=str_or_none(block.get("tool_use_id")),
                is_error=block.get("is_error") is True,
            )
        elif btype in ("image", "document"):
            continue
        else:
            unknown.saw(f"{role} block {btype!r}")
        if ev is not None:
            yield ev
