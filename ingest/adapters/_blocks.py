"""Anthropic-style content blocks to event drafts: the message shape many agents keep, whoever wrote it.

A message is ``{role, content}`` with ``content`` a string or a list of blocks: ``text``,
``thinking`` (``thinking`` or ``text``), ``tool_use`` / ``server_tool_use`` (``id``, ``name``,
``input``), ``tool_result`` (``tool_use_id``, ``content`` as a string, blocks or an object,
``is_error``), and media (``image``, ``document``) with nothing to search. DeepSeek TUI, Cortex
Code, QwenPaw and others store exactly this; each adapter decides what a message *means* where
it stands (a person's prompt, injected context, a subagent's task) and passes that as
``person``/``meta``. A tool result is the tool's (``tool_result``/``tool``) wherever it sits,
so a ``user`` message holding only results is never a prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from voyager_sessions.ingest.adapters._common import UnknownRecords, compact_json, str_or_none
from voyager_sessions.ingest.adapters._drafts import Draft
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Origin

#: Blocks with nothing to search (media, redacted reasoning): skipped by name.
SILENT = frozenset({"image", "document", "redacted_thinking", "file", "audio", "input_image"})
#: The keys an object-shaped tool result keeps its text under, in the order they are looked for.
RESULT_KEYS = ("output", "text", "content", "result", "stdout")


def result_text(value: Any, depth: int = 0) -> str:
    """A tool result's searchable text: a string as is, text blocks joined, an object's output (or its JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if depth > 8:
        return compact_json(value)
    if isinstance(value, list):
        parts = [
            v["text"] if isinstance(v, dict) and isinstance(v.get("text"), str) else result_text(v, depth + 1)
            for v in value
        ]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        for key in RESULT_KEYS:
            if isinstance(value.get(key), (str, list)):
                return result_text(value[key], depth + 1)
        return compact_json(value)
    return compact_json(value)


def blocks(
    role: Any,
    content: Any,
    ts: float | None,
    unknown: UnknownRecords,
    *,
    person: Origin = "human",
    meta: bool = False,
    shell_tools: frozenset[str] = frozenset(),
) -> Iterator[Draft]:
    """The drafts of one message: ``role`` ``user`` (a prompt by ``person``, or context when ``meta``) or
    ``assistant`` (text, reasoning, tool calls); tool results in either are the tool's."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            unknown.saw("block:not-object")
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if role == "assistant":
                yield ("assistant", "agent", text, {"ts": ts})
            elif meta:
                yield ("meta", "provider", text, {"ts": ts})
            else:
                yield ("user", person, text, {"ts": ts})
        elif btype in ("thinking", "reasoning"):
            thought = block.get("thinking", block.get("text"))
            yield ("reasoning", "agent", thought, {"ts": ts})
        elif btype in ("tool_use", "server_tool_use"):
            name = str_or_none(block.get("name")) or str_or_none(block.get("tool_name"))
            args = block["input"] if "input" in block else block.get("parameters")
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, args, shell_tools),
                {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
            )
        elif btype in ("tool_result", "tool_search_tool_result", "code_execution_tool_result"):
            call_id = str_or_none(block.get("tool_use_id")) or str_or_none(block.get("toolUseID"))
            value = next((block[k] for k in ("content", "result", "output") if k in block), None)
            yield (
                "tool_result",
                "tool",
                result_text(value),
                {"ts": ts, "call_id": call_id, "is_error": block.get("is_error") is True},
            )
        elif not (isinstance(btype, str) and btype in SILENT):
            unknown.saw(f"block:{btype}" if isinstance(btype, str) else "block:untyped")
