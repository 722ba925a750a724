"""What a Grok Build session's records say: ``chat_history.jsonl`` items, or ``updates.jsonl`` ACP updates.

**chat_history.jsonl** (one conversation item a line). ``chat_format_version`` 1 tags items
with ``type``: ``system`` (the system prompt: not indexed), ``user`` (``content`` parts;
``synthetic_reason`` marks what Grok wrote itself: ``project_instructions`` and any other
reason are ``meta``, except ``interjection``, which is what the person typed mid-turn),
``reasoning`` (``summary``/``content`` text), ``backend_tool_call`` (a server-side tool such as
web search), ``assistant`` (``content``, ``tool_calls`` with JSON-string ``arguments``,
``model_id``) and ``tool_result`` (``tool_call_id``, ``content``). Version 0 is OpenAI-shaped:
``role`` + ``content``, ``reasoning_content``, ``tool_calls[].function``, role ``tool``. These
shapes are pinned by agentsview's fixtures, serialised through Grok Build's own Rust types.

**updates.jsonl** (the ACP stream, one update a line: ``{timestamp, method, params: {update:
{sessionUpdate, …}}}``, or the bare notification in older files). Chunks are merged into
messages: consecutive ``user_message_chunk``\\ s of one prompt (``_meta.promptIndex``), of
``agent_message_chunk`` and of ``agent_thought_chunk``; an interjection's text is its
``displayText`` (the chunk's text is the frame the model saw); a ``hostTurn`` user chunk is
the host's, not a person's: ``meta``; ``tool_call`` and a completed or
failed ``tool_call_update`` are the call and its result. An xAI ``rewind_marker``
(``target_prompt_index``) truncates the conversation to before that prompt, as Grok does:
what was rewound away is not indexed. Compaction checkpoints keep what came before (the
stream still has it), so nothing is lost to them here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from voyager_sessions.ingest.adapters._common import (
    UnknownRecords,
    as_dict,
    compact_json,
    epoch,
    int_or_none,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Kind, Origin

SHELL_TOOLS = frozenset(
    {"bash", "run_terminal_cmd", "run_terminal_command", "shell", "run_command", "terminal", "execute_command"}
)
XAI_METHOD = "_x.ai/session/update"
#: Update kinds that carry nothing to index (session state, usage, commands, modes, plans, subagent bookkeeping).
QUIET_UPDATES = frozenset(
    {
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "usage",
        "subagent_spawned",
        "subagent_finished",
        "turn_end",
        "diff_review",
        "memory_flush",
        "hook_execution",
    }
)


def content_text(content: Any) -> str:
    """Text of a message ``content``: a string, or the ``text`` of its parts (images and the rest left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content["text"] if isinstance(content.get("text"), str) else ""
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _reasoning(item: dict[str, Any]) -> str:
    texts = []
    for key in ("summary", "content"):
        value = item.get(key)
        if isinstance(value, list):
            texts += [p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]]
    if not texts and isinstance(item.get("content"), str):
        texts.append(item["content"])
    return "\n\n".join(texts)


class HistoryMapper:
    """Maps ``chat_history.jsonl`` items (version 1 or 0) to drafts; ``model`` is the last model named."""

    def __init__(self, unknown: UnknownRecords, *, subagent: bool) -> None:
        self.unknown = unknown
        self.person: Origin = "provider" if subagent else "human"
        self.model: str | None = None
        self.seen_backend: set[str] = set()

    def item(self, item: Any) -> Iterator[Draft]:
        if not isinstance(item, dict):
            self.unknown.saw(type(item).__name__)
            return
        if "type" in item:
            yield from self._v1(item)
        elif "role" in item:
            yield from self._v0(item)
        else:
            self.unknown.saw("item without type or role")

    def _v1(self, item: dict[str, Any]) -> Iterator[Draft]:
        kind = item.get("type")
        if kind == "system":
            return
        if kind == "user":
            reason = item.get("synthetic_reason")
            text = content_text(item.get("content"))
            if reason is None or reason == "interjection":
                yield ("user", self.person, text, {})
            else:
                yield ("meta", "provider", text, {})
        elif kind == "reasoning":
            yield ("reasoning", "agent", _reasoning(item), {})
        elif kind == "backend_tool_call":
            payload = inner if isinstance(inner := item.get("kind"), dict) else item
            yield from self._backend(payload)
        elif kind == "assistant":
            yield from self._assistant(item)
        elif kind == "tool_result":
            yield (
                "tool_result",
                "tool",
                content_text(item.get("content")),
                {"call_id": str_or_none(item.get("tool_call_id")), "is_error": item.get("is_error") is True},
            )
        else:
            self.unknown.saw(kind)

    def _backend(self, payload: dict[str, Any]) -> Iterator[Draft]:
        ptype = payload.get("type")  # a key only when a string: a list or an object would be no dict key at all
        name = str_or_none(payload.get("tool_type")) or (
            {
                "web_search_call": "web_search",
                "custom_tool_call": "x_search",
                "code_interpreter_call": "code_interpreter",
            }.get(ptype)
            if isinstance(ptype, str)
            else None
        )
        call_id = str_or_none(payload.get("id"))
        if call_id:
            self.seen_backend.add(call_id)
        action = payload.get("action")
        args = action if action is not None else payload.get("input", payload.get("code"))
        yield (
            "tool_call",
            "agent",
            tool_call_text(name, args),
            {"tool": name, "call_id": call_id},
        )

    def _assistant(self, item: dict[str, Any]) -> Iterator[Draft]:
        self.model = str_or_none(item.get("model_id")) or self.model
        reasoning = item.get("reasoning")
        inline = reasoning.get("text") if isinstance(reasoning, dict) else reasoning
        yield ("reasoning", "agent", inline if isinstance(inline, str) else item.get("reasoning_content"), {})
        for raw in list_or_empty(item.get("raw_output")):
            if (
                isinstance(raw, dict)
                and raw.get("type") in ("web_search_call", "custom_tool_call", "code_interpreter_call")
                and str_or_none(raw.get("id")) not in self.seen_backend
            ):
                yield from self._backend(raw)
        yield ("assistant", "agent", content_text(item.get("content")), {})
        yield from self._calls(item.get("tool_calls"))

    def _calls(self, calls: Any) -> Iterator[Draft]:
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, dict):
                continue
            fn = inner if isinstance(inner := call.get("function"), dict) else call
            name = str_or_none(fn.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, fn.get("arguments", fn.get("input")), SHELL_TOOLS),
                {"tool": name, "call_id": str_or_none(call.get("id"))},
            )

    def _v0(self, item: dict[str, Any]) -> Iterator[Draft]:
        role = item.get("role")
        if role == "system":
            return
        if role == "user":
            yield ("user", self.person, content_text(item.get("content")), {})
        elif role == "assistant":
            self.model = str_or_none(item.get("model_id")) or self.model
            yield ("reasoning", "agent", item.get("reasoning_content"), {})
            yield ("assistant", "agent", content_text(item.get("content")), {})
            yield from self._calls(item.get("tool_calls"))
        elif role == "tool":
            yield (
                "tool_result",
                "tool",
                content_text(item.get("content")),
                {"call_id": str_or_none(item.get("tool_call_id"))},
            )
        else:
            self.unknown.saw(f"role:{role}")


class _Run:
    """Chunks being merged into one message."""

    __slots__ = ("kind", "origin", "parts", "ts", "prompt")

    def __init__(self, kind: Kind, origin: Origin, ts: float | None, prompt: int | None) -> None:
        self.kind, self.origin, self.ts, self.prompt = kind, origin, ts, prompt
        self.parts: list[str] = []


class UpdatesReducer:
    """Folds ``updates.jsonl`` into the active branch's drafts (chunks merged, rewinds applied)."""

    def __init__(self, unknown: UnknownRecords, *, subagent: bool) -> None:
        self.unknown = unknown
        self.person: Origin = "provider" if subagent else "human"
        self.drafts: list[Draft] = []
        #: Index in ``drafts`` where each prompt of the active branch starts.
        self.prompt_starts: list[int] = []
        self.seen_prompt_index = False
        self.run: _Run | None = None
        self.results: set[str] = set()
        self.first_ts: float | None = None
        self.last_ts: float | None = None

    def line(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.unknown.saw(type(value).__name__)
            return
        params = given if isinstance(given := value.get("params"), dict) else value
        update = found if isinstance(found := params.get("update"), dict) else None
        if update is None:
            self.unknown.saw("line without update")
            return
        meta = as_dict(params.get("_meta"))
        ts = epoch(value.get("timestamp")) or epoch(meta.get("agentTimestampMs"))
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        self._update(update, ts, value.get("method") == XAI_METHOD)

    def _update(self, update: dict[str, Any], ts: float | None, xai: bool) -> None:
        tag = update.get("sessionUpdate")
        meta = as_dict(update.get("_meta"))
        if tag == "user_message_chunk" and meta.get("hostTurn") is True:
            # A turn the host started (not a person): Grok's own rebuild drops its text; it stays
            # searchable here as context, never as a prompt.
            self._chunk("meta", "provider", update, ts, boundary=True)
        elif tag == "user_message_chunk":
            self._user(update, meta, ts)
        elif tag == "agent_message_chunk":
            self._chunk("assistant", "agent", update, ts)
        elif tag == "agent_thought_chunk":
            self._chunk("reasoning", "agent", update, ts)
        elif tag == "tool_call":
            self._close()
            tool_meta = as_dict(meta.get("x.ai/tool"))
            name = (
                str_or_none(tool_meta.get("name"))
                or str_or_none(update.get("title"))
                or str_or_none(update.get("kind"))
            )
            raw = update.get("rawInput")
            text = tool_call_text(name, raw, SHELL_TOOLS) if raw is not None else str_or_none(update.get("title"))
            self.drafts.append(
                ("tool_call", "agent", text, {"ts": ts, "tool": name, "call_id": str_or_none(update.get("toolCallId"))})
            )
        elif tag == "tool_call_update":
            self._result(update, ts)
        elif tag == "rewind_marker" and xai:
            self._rewind(update)
        elif tag == "compaction_checkpoint":
            self._close()
            summary = update.get("summary")
            if isinstance(summary, str):
                self.drafts.append(("meta", "provider", summary, {"ts": ts}))
        elif not (isinstance(tag, str) and tag in QUIET_UPDATES):  # a list or dict tag is unhashable
            self.unknown.saw(tag if isinstance(tag, str) else "update without sessionUpdate")

    def _user(self, update: dict[str, Any], meta: dict[str, Any], ts: float | None) -> None:
        content = as_dict(update.get("content"))
        interjection = meta.get("interjection") is True
        text = (
            content.get("text")
            if content.get("type", "text") == "text" and isinstance(content.get("text"), str)
            else ""
        )
        if interjection:
            # The text keeps the frame the model saw; what the person typed is in displayText.
            cmeta = as_dict(content.get("_meta"))
            shown = meta.get("displayText", cmeta.get("displayText"))
            text = shown if isinstance(shown, str) else text
        index = int_or_none(meta.get("promptIndex"))
        run = self.run
        new = (
            run is None
            or run.kind != "user"
            or interjection
            or run.prompt == -1
            or (index is not None and run.prompt is not None and index != run.prompt)
        )
        if new:
            self._close()
            counted = not interjection and (index is not None or not self.seen_prompt_index)
            if counted:
                self.prompt_starts.append(len(self.drafts))
            self.run = _Run("user", self.person, ts, -1 if interjection else index)
        self.seen_prompt_index = self.seen_prompt_index or index is not None
        assert self.run is not None
        if text:
            self.run.parts.append(text)

    def _chunk(
        self, kind: Kind, origin: Origin, update: dict[str, Any], ts: float | None, boundary: bool = False
    ) -> None:
        if self.run is None or self.run.kind != kind or (boundary and self.run.prompt != -2):
            self._close()
            self.run = _Run(kind, origin, ts, -2 if boundary else None)
        text = content_text(update.get("content"))
        if text:
            self.run.parts.append(text)

    def _result(self, update: dict[str, Any], ts: float | None) -> None:
        status = update.get("status")
        call_id = str_or_none(update.get("toolCallId"))
        if status not in ("completed", "failed") or (call_id is not None and call_id in self.results):
            return
        self._close()
        if call_id is not None:
            self.results.add(call_id)
        texts = []
        for block in list_or_empty(update.get("content")):
            inner = (
                block.get("content") if isinstance(block, dict) and isinstance(block.get("content"), dict) else block
            )
            if isinstance(inner, dict) and inner.get("type", "text") == "text" and isinstance(inner.get("text"), str):
                texts.append(inner["text"])
        text = "".join(texts)
        raw = update.get("rawOutput")
        if not text and raw is not None:
            text = raw if isinstance(raw, str) else compact_json(raw)
        self.drafts.append(
            ("tool_result", "tool", text, {"ts": ts, "call_id": call_id, "is_error": status == "failed"})
        )

    def _rewind(self, update: dict[str, Any]) -> None:
        target = int_or_none(update.get("target_prompt_index", update.get("targetPromptIndex")))
        self._close()
        if target is None or target < 0:
            self.unknown.saw("rewind_marker without target_prompt_index")
            return
        if target < len(self.prompt_starts):
            del self.drafts[self.prompt_starts[target] :]
            del self.prompt_starts[target:]

    def _close(self) -> None:
        run = self.run
        if run is not None:
            self.drafts.append((run.kind, run.origin, "".join(run.parts), {"ts": run.ts}))
            self.run = None

    def finish(self) -> list[Draft]:
        self._close()
        return self.drafts
