"""Gemini API content parts to events: the one shape Gemini CLI and Qwen Code (its fork) both store.

Both agents keep a turn as the Gemini API's ``Content``, a list of ``parts``: ``{"text"}``
(``"thought": true`` marks reasoning), ``{"functionCall": {"id", "name", "args"}}``,
``{"functionResponse": {"id", "name", "response"}}``, and media (``inlineData``,
``fileData``) with nothing in it to search. This module reads those parts and renders a
tool call and a tool's answer the same way for both agents. What a part *means* where it
stands (a person's prompt, injected context, a copy to drop) is each adapter's business.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from voyager_sessions.ingest.adapters._common import EventCounter, compact_json, str_or_none
from voyager_sessions.ingest.toolcall import report_pair, tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin

#: Tools whose call is a shell command: the command is what a person searches for.
SHELL_TOOLS = frozenset({"run_shell_command"})


def as_parts(content: Any) -> list[dict[str, Any]]:
    """The parts of a stored ``Content`` whatever shape it was kept in.

    Gemini CLI writes ``PartListUnion``: a string, one part, or a list of strings and
    parts; Qwen Code writes ``{"role", "parts"}``. Anything else has no parts.
    """
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        if isinstance(content.get("parts"), list):
            return as_parts(content["parts"])
        return [content]
    if isinstance(content, list):
        out: list[dict[str, Any]] = []
        for part in content:
            if isinstance(part, dict):
                out.append(part)
            elif isinstance(part, str):
                out.append({"text": part})
        return out
    return []


def text_of(part: dict[str, Any]) -> str | None:
    """A part's text, if it is a text part."""
    text = part.get("text")
    return text if isinstance(text, str) else None


def is_thought(part: dict[str, Any]) -> bool:
    return part.get("thought") is True


def function_call(part: dict[str, Any]) -> dict[str, Any] | None:
    call = part.get("functionCall")
    return call if isinstance(call, dict) else None


def function_response(part: dict[str, Any]) -> dict[str, Any] | None:
    response = part.get("functionResponse")
    return response if isinstance(response, dict) else None


def call_text(name: str | None, args: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, args, SHELL_TOOLS)


def response_text(response: dict[str, Any]) -> tuple[str, bool]:
    """The text of a ``functionResponse`` and whether it reports an error.

    The tools answer ``{"output": …}`` or ``{"error": …}``; any other answer is kept as
    compact JSON, so nothing the tool said is lost.
    """
    body = response.get("response")
    if isinstance(body, str):
        return body, False
    if isinstance(body, dict):
        output, error = body.get("output"), body.get("error")
        texts = [t for t in (output, error) if isinstance(t, str) and t]
        if texts:
            return "\n".join(texts), isinstance(error, str) and bool(error)
        return (compact_json(body) if body else ""), False
    return ("" if body is None else compact_json(body)), False


def tool_call_event(counter: EventCounter, call: dict[str, Any], ts: float | None) -> Event | None:
    name = str_or_none(call.get("name"))
    return counter.make(
        "tool_call", "agent", call_text(name, call.get("args")), ts=ts, tool=name, call_id=str_or_none(call.get("id"))
    )


def tool_result_event(
    counter: EventCounter,
    response: dict[str, Any],
    ts: float | None,
    *,
    exit_code: int | None = None,
    is_error: bool = False,
    background: bool = False,
) -> Event | None:
    """A ``functionResponse`` as a tool result; ``exit_code`` only when the agent recorded one beside it. What a
    subagent tool (``invoke_agent``, ``agent``) answered is the subagent's report (``toolcall.report_pair``),
    unless ``background`` says it only acknowledges a background launch."""
    text, failed = response_text(response)
    call_id = str_or_none(response.get("id"))
    if background:
        counter.launched(call_id)  # only the launch: the report comes later as a notification
    kind, origin = report_pair(str_or_none(response.get("name")), background=background)
    return counter.make(
        kind,
        origin,
        text,
        ts=ts,
        call_id=call_id,
        exit_code=exit_code,
        is_error=is_error or failed,
    )


def model_events(
    counter: EventCounter,
    parts: list[dict[str, Any]],
    ts: float | None,
    *,
    text_kind: Kind = "assistant",
    text_origin: Origin = "agent",
    thoughts: bool = True,
    skip_calls: Collection[str] = (),
) -> Iterator[Event]:
    """The events of a model turn's parts, in order: thought parts as reasoning (unless ``thoughts``
    is False: the agent kept them elsewhere too), text as ``text_kind``, function calls as tool
    calls (but those in ``skip_calls``, recorded elsewhere with their result)."""
    for part in parts:
        text = text_of(part)
        if text is not None:
            if is_thought(part):
                ev = counter.make("reasoning", "agent", text, ts=ts) if thoughts else None
            else:
                ev = counter.make(text_kind, text_origin, text, ts=ts)
        elif (call := function_call(part)) is not None:
            if call.get("id") in skip_calls:
                continue
            ev = tool_call_event(counter, call, ts)
        else:
            continue  # media and function responses have no place in a model turn
        if ev is not None:
            yield ev
