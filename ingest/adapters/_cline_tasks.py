"""The task folders Cline's VS Code extension and its fork Roo Code keep: one reader for both.

Both extensions keep a task as ``<extension storage>/tasks/<taskId>/`` holding two views
of the same conversation, each one JSON document rewritten whole as the task goes on
(documented by peers, not yet observed here):

``ui_messages.json``
    what the chat panel shows: ``[{ts, type: "say"|"ask", say|ask, text, partial?, …}]``.
    The first ``say: "text"`` is the task as the person typed it, ``user_feedback`` every
    later message of theirs; commands, their output, tool requests (JSON), reasoning,
    replies and errors each have their own ``say``/``ask`` kind. ``api_req_started``
    carries a copy of the whole request (never indexed; its token counts are summed).
``api_conversation_history.json``
    what was sent to the model: Anthropic-style ``{role, content}`` messages in which the
    person's words are wrapped (``<task>``, ``<feedback>``, ``<answer>``, ``<user_message>``)
    beside tool results (``[tool] Result:``) and injected ``<environment_details>``.

Only one view is read per task, or every turn would be counted twice: ``ui_messages.json``
when the folder has it (it tells a person's words from tool output without guessing, and
carries commands, their output and reasoning), else ``api_conversation_history.json`` (peers'
samples hold tasks with only one or the other). Streaming leaves ``partial`` messages
behind; a partial message followed by one of the same kind that extends it (or has the same
``ts``) is the same message still being written, and only the last one counts.

What differs between the two extensions (the metadata file beside the conversation, where
titles, cwd and parents live) is given by the thin adapter as a :class:`TaskFacts`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    compact_json,
    epoch,
    int_or_none,
    join_text,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Item, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed, stream_end
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin, Session, session_id

UI_MESSAGES = "ui_messages.json"
API_HISTORY = "api_conversation_history.json"

_decode = decode_json


class TaskFacts(msgspec.Struct, kw_only=True):
    """What a task's metadata (beside or above its folder) says about it; any field may be unknown."""

    title: str | None = None
    cwd: str | None = None
    model: str | None = None
    #: The native id of the task that spawned this one (Roo's subtasks).
    parent: str | None = None
    #: When the task was last active, as its history entry says (a fallback for messages without ``ts``).
    updated: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None


def task_title(task: Any) -> str | None:
    """A title made of a task's text (what both extensions' histories store): its first line, cut."""
    text = str_or_none(task)
    if text is None or not text.strip():
        return None
    line = text.strip().splitlines()[0].strip()
    return line if len(line) <= 120 else line[:119] + "…"


# -- discovery ---------------------------------------------------------------------------------


def discover_tasks(
    storage: Path, provider: str, label: str, meta_files: tuple[str, ...], index: str | None = None
) -> Iterator[Source | Notice]:
    """A Source for every ``<storage>/tasks/<id>/`` with a conversation file; a Notice for a task without one.

    The source is the folder; its fingerprint covers the conversation file read and the
    ``meta_files`` beside it, so a change to any of them means "read the task again".
    ``index``: a file (relative to ``storage``) that lists tasks; when it lists some but no
    task folder is there, that is named (never silently empty).
    """
    tasks = storage / "tasks"
    try:
        with os.scandir(tasks) as it:
            folders = sorted(e.path for e in it if is_dir(e))
    except FileNotFoundError:
        folders = []
    except OSError as exc:
        yield Notice(source=str(tasks), reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)
        return
    if not folders:
        try:
            listed = index is not None and os.stat(storage / index).st_size > len("[]")
        except OSError:
            listed = False
        if listed and index is not None:
            yield Notice(
                source=str(storage / index), reason=f"{label} lists tasks here but keeps no task folder in {tasks}"
            )
        return
    found = 0
    for name in folders:
        folder = Path(name)
        conversation = next((folder / f for f in (UI_MESSAGES, API_HISTORY) if os.path.isfile(folder / f)), None)
        if conversation is None:
            yield Notice(
                source=str(folder), reason=f"{label} task folder without {UI_MESSAGES} or {API_HISTORY}; skipped"
            )
            continue
        files = [conversation, *(folder / m for m in meta_files if os.path.isfile(folder / m))]
        try:
            fp = folder_fingerprint(folder, files)
        except OSError:
            continue  # vanished since listed
        found += 1
        yield Source(provider=provider, path=str(folder), fingerprint=fp, append_only=False)
    if folders and not found:
        yield Notice(
            source=str(tasks),
            reason=f"{label} keeps {len(folders)} task folder(s) here, none with a conversation file Voyager can read",
        )


def is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def task_shape(folder: str) -> str:
    """Which view a task folder is read from (for ``voyager doctor``)."""
    if os.path.isfile(os.path.join(folder, UI_MESSAGES)):
        return "ui_messages"
    if os.path.isfile(os.path.join(folder, API_HISTORY)):
        return "api_conversation_history"
    return "unreadable"


# -- reading -------------------------------------------------------------------------------------

#: ``say`` kinds that carry no conversation (bookkeeping, copies): skipped without a word.
_SAY_SKIPPED = frozenset(
    {
        "api_req_started",
        "api_req_finished",
        "api_req_retried",
        "api_req_retry_delayed",
        "api_req_deleted",
        "deleted_api_reqs",
        "checkpoint_created",
        "checkpoint_saved",
        "mcp_server_request_started",
        "load_mcp_documentation",
        "hook",
        "hook_output",
        "hook_status",
        "api_req_rate_limit_wait",
    }
)
#: ``ask`` kinds that only wait for a button (their text, if any, repeats what came before).
_ASK_SKIPPED = frozenset({"resume_task", "resume_completed_task", "auto_approval_max_req_reached"})

#: (type, say|ask) -> (kind, origin, tool name) for the messages that carry conversation.
_UI_KINDS: dict[tuple[str, str], tuple[Kind, Origin, str | None]] = {
    ("say", "task"): ("user", "human", None),
    ("say", "user_feedback"): ("user", "human", None),
    ("say", "text"): ("assistant", "agent", None),
    ("say", "completion_result"): ("assistant", "agent", None),
    ("ask", "completion_result"): ("assistant", "agent", None),
    ("ask", "followup"): ("assistant", "agent", None),
    ("ask", "plan_mode_respond"): ("assistant", "agent", None),
    ("say", "reasoning"): ("reasoning", "agent", None),
    ("say", "command"): ("tool_call", "agent", "execute_command"),
    ("ask", "command"): ("tool_call", "agent", "execute_command"),
    ("say", "command_output"): ("tool_result", "tool", "execute_command"),
    ("ask", "command_output"): ("tool_result", "tool", "execute_command"),
    ("say", "tool"): ("tool_call", "agent", None),
    ("ask", "tool"): ("tool_call", "agent", None),
    ("ask", "use_mcp_server"): ("tool_call", "agent", "use_mcp_server"),
    ("say", "use_mcp_server"): ("tool_call", "agent", "use_mcp_server"),
    ("say", "mcp_server_response"): ("tool_result", "tool", "use_mcp_server"),
    ("ask", "browser_action_launch"): ("tool_call", "agent", "browser_action"),
    ("say", "browser_action_launch"): ("tool_call", "agent", "browser_action"),
    ("say", "browser_action"): ("tool_call", "agent", "browser_action"),
    ("say", "browser_action_result"): ("tool_result", "tool", "browser_action"),
    ("ask", "new_task"): ("tool_call", "agent", "new_task"),
    ("say", "codebase_search_result"): ("tool_result", "tool", "codebase_search"),
    ("say", "user_feedback_diff"): ("meta", "provider", None),
    ("say", "error"): ("meta", "provider", None),
    ("say", "diff_error"): ("meta", "provider", None),
    ("say", "clineignore_error"): ("meta", "provider", None),
    ("say", "rooignore_error"): ("meta", "provider", None),
    ("say", "shell_integration_warning"): ("meta", "provider", None),
    ("say", "info"): ("meta", "provider", None),
    ("say", "task_progress"): ("meta", "provider", None),
    ("say", "condense_context"): ("meta", "provider", None),
    ("say", "condense_context_error"): ("meta", "provider", None),
    ("ask", "condense"): ("meta", "provider", None),
    ("ask", "api_req_failed"): ("meta", "provider", None),
    ("ask", "mistake_limit_reached"): ("meta", "provider", None),
    ("ask", "report_bug"): ("meta", "provider", None),
    # A subtask's result handed back to its parent (Roo): the subagent's words, kept as context.
    ("say", "subtask_result"): ("meta", "agent", None),
}

#: Suffixes the extensions append to a message's text as flags for the UI.
_FLAG_SUFFIXES = ("REQ_APP", "HAS_CHANGES")


def json_object(text: str) -> dict[str, Any] | None:
    """``text`` decoded when it is a JSON object (what the extensions write into a message's text), else None."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        value = _decode(stripped)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _ui_text(message: dict[str, Any], key: tuple[str, str], tool: str | None) -> tuple[str, str | None]:
    """The searchable text of one UI message, and its tool name (from the JSON when it names one)."""
    text = said if isinstance(said := message.get("text"), str) else ""
    if key == ("say", "condense_context") and isinstance(message.get("contextCondense"), dict):
        text = str_or_none(message["contextCondense"].get("summary")) or text
    for flag in _FLAG_SUFFIXES:
        if text.endswith(flag):
            text = text[: -len(flag)].rstrip()
    doc = json_object(text)
    if doc is None:
        return text, tool
    kind = key[1]
    if kind == "followup":
        parts = [str_or_none(doc.get("question")), *(o for o in doc.get("options") or [] if isinstance(o, str))]
        parts += [
            s.get("answer")
            for s in doc.get("suggest") or []
            if isinstance(s, dict) and isinstance(s.get("answer"), str)
        ]
        return "\n".join(p for p in parts if p) or text, tool
    if kind == "plan_mode_respond":
        return str_or_none(doc.get("response")) or text, tool
    if kind in ("tool", "use_mcp_server"):
        named = str_or_none(doc.get("tool")) or str_or_none(doc.get("toolName"))
        return compact_json(doc), named or tool
    if kind == "browser_action_result":
        doc.pop("screenshot", None)  # a base64 image: nothing to search
        return compact_json(doc), tool
    return text, tool


class TaskRead:
    """One read of one task folder: its Session, then its events from the one view it is read from."""

    def __init__(self, source: Source, provider: str, label: str, facts: TaskFacts) -> None:
        self.folder = Path(source.path)
        self.provider = provider
        self.facts = facts
        self.native_id = self.folder.name
        self.sid = session_id(provider, self.native_id)
        self.counter = EventCounter(self.sid, 0)
        self.unknown = UnknownRecords(label)
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.tokens_in = 0
        self.tokens_out = 0
        self.counted_tokens = False

    def session(self) -> Session:
        f = self.facts
        return Session(
            id=self.sid,
            provider=self.provider,
            native_id=self.native_id,
            title=f.title,
            title_source="prompt" if f.title else None,
            cwd=f.cwd,
            model=f.model,
            started=self.first_ts,
            updated=max((t for t in (self.last_ts, f.updated) if t is not None), default=None),
            # Neither extension can be resumed outside the IDE (it reopens tasks itself).
            parent=session_id(self.provider, f.parent) if f.parent else None,
            resume=None,
            source=str(self.folder),
            tokens_in=f.tokens_in if f.tokens_in is not None else (self.tokens_in if self.counted_tokens else None),
            tokens_out=f.tokens_out if f.tokens_out is not None else (self.tokens_out if self.counted_tokens else None),
        )

    def run(self) -> Iterator[Item]:
        ui = self.folder / UI_MESSAGES
        path = ui if os.path.isfile(ui) else self.folder / API_HISTORY
        skipped: list[Notice] = []
        doc = read_json_streamed(path, "", notices=skipped)  # a history of hundreds of MB: a message at a time
        if isinstance(doc, Notice):
            yield doc
            return
        yield from skipped
        if not isinstance(doc, (list, StreamedArray)):
            yield Notice(
                source=str(path), reason=f"a JSON {type(doc).__name__}, not a list of messages; skipped", fatal=True
            )
            return
        yield self.session()
        read = self._ui if path == ui else self._api
        yield from read(doc)
        ended = list(stream_end(doc, str(path)))
        yield from ended
        if any(n.fatal for n in ended):
            return
        if (notice := self.unknown.notice(str(path))) is not None:
            yield notice
        yield self.session()

    def _ts(self, message: dict[str, Any]) -> float | None:
        ts = epoch(message.get("ts"))
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        return ts

    # -- ui_messages.json ----------------------------------------------------------------------

    def _ui(self, messages: Iterable[Any]) -> Iterator[Event]:
        pending: tuple[dict[str, Any], tuple[str, str]] | None = None
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw(type(message).__name__)
                continue
            mtype = message.get("type")
            what = message.get(mtype) if mtype in ("say", "ask") else None
            if not isinstance(what, str) or not isinstance(mtype, str):  # (what is a string only for say or ask)
                self.unknown.saw(
                    f"type:{mtype}" if not isinstance(mtype, str) or mtype not in ("say", "ask") else mtype
                )
                continue
            key = (mtype, what)
            if key == ("say", "api_req_started"):
                self._request_usage(message)
            if pending is not None and _continues(pending, message, key):
                pending = (message, key)  # the same streaming message, further along
                continue
            if pending is not None:
                yield from self._ui_event(*pending)
                pending = None
            if (mtype == "say" and what in _SAY_SKIPPED) or (mtype == "ask" and what in _ASK_SKIPPED):
                self._ts(message)
                continue
            if key not in _UI_KINDS:
                self.unknown.saw(f"{mtype}:{what}")
                continue
            pending = (message, key)
        if pending is not None:
            yield from self._ui_event(*pending)

    def _ui_event(self, message: dict[str, Any], key: tuple[str, str]) -> Iterator[Event]:
        kind, origin, tool = _UI_KINDS[key]
        ts = self._ts(message)
        if key == ("say", "text") and self.counter.seq == 0:
            # The task itself: the first thing said, before any reply. A subtask's was written by its parent.
            kind, origin = "user", "provider" if self.facts.parent else "human"
        elif key == ("say", "task") and self.facts.parent:
            origin = "provider"
        text, tool = _ui_text(message, key, tool)
        if kind == "tool_call":
            text = tool_call_text(tool, text)
        if (ev := self.counter.make(kind, origin, text, ts=ts, tool=tool)) is not None:
            yield ev

    def _request_usage(self, message: dict[str, Any]) -> None:
        doc = json_object(message.get("text") or "") if isinstance(message.get("text"), str) else None
        if doc is None:
            return
        tin, tout = int_or_none(doc.get("tokensIn")), int_or_none(doc.get("tokensOut"))
        if tin is not None or tout is not None:
            self.counted_tokens = True
            self.tokens_in += tin or 0
            self.tokens_out += tout or 0

    # -- api_conversation_history.json ----------------------------------------------------------

    def _api(self, messages: Iterable[Any]) -> Iterator[Event]:
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                self.unknown.saw(message.get("role") if isinstance(message, dict) else type(message).__name__)
                continue
            ts = self._ts(message)
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                continue
            if message["role"] == "user":
                yield from self._api_user(blocks, ts)
            else:
                yield from assistant_blocks(self.counter, blocks, ts, self.unknown)

    def _api_user(self, blocks: list[Any], ts: float | None) -> Iterator[Event]:
        in_result: str | None = None  # the tool whose "[tool] Result:" header came last in this message
        person: Origin = "provider" if self.facts.parent and self.counter.seq == 0 else "human"
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                ev = self.counter.make(
                    "tool_result",
                    "tool",
                    _result_text(block.get("content")),
                    ts=ts,
                    call_id=str_or_none(block.get("tool_use_id")),
                    is_error=block.get("is_error") is True,
                )
                if ev is not None:
                    yield ev
                continue
            if btype != "text" or not isinstance(block.get("text"), str):
                continue  # images, documents
            rest = block["text"]
            for m in _WRAPPED.finditer(rest):
                if (ev := self.counter.make("user", person, m.group(2).strip(), ts=ts)) is not None:
                    yield ev
                person = "human"
            rest = _WRAPPED.sub("", rest).strip()
            if not rest:
                continue
            header = _RESULT_HEADER.match(rest)
            if header:
                in_result = header.group(1).split(" ", 1)[0]
                if header.end() == len(rest):
                    continue  # a header alone: the result follows in the next block
            if rest.startswith("<environment_details>") or in_result is None:
                ev = self.counter.make("meta", "provider", rest, ts=ts)
            else:
                ev = self.counter.make("tool_result", "tool", rest, ts=ts, tool=in_result)
            if ev is not None:
                yield ev


#: The tags the extensions wrap a person's words in when they send them to the model.
_WRAPPED = re.compile(r"<(task|feedback|answer|user_message)>(.*?)</\1>", re.S)
#: The header of a tool's result in a user message: ``[execute_command for 'ls'] Result:``.
_RESULT_HEADER = re.compile(r"\[([^\]\n]+)\] Result:")


def _continues(pending: tuple[dict[str, Any], tuple[str, str]], message: dict[str, Any], key: tuple[str, str]) -> bool:
    """True when ``message`` is the partial ``pending`` message streamed further (same kind, same ts or longer text)."""
    before, before_key = pending
    if before.get("partial") is not True or key != before_key:
        return False
    if before.get("ts") == message.get("ts"):
        return True
    old, new = before.get("text"), message.get("text")
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    # A partial text may end in a placeholder ellipsis that the rest of the stream replaces.
    return new.startswith(old.rstrip().rstrip(".…").rstrip())


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_text(content) or compact_json(content)
    return "" if content is None else compact_json(content)


def tool_input_text(name: str | None, tool_input: Any) -> str:
    """A tool call's searchable text by the one rule (``toolcall.tool_call_text``); Cline's ``commands`` (a list
    of command lines) is read as one command, a line each."""
    if isinstance(tool_input, dict) and "command" not in tool_input:
        commands = tool_input.get("commands")
        if isinstance(commands, list) and commands and all(isinstance(c, str) for c in commands):
            # A call that carries command lines runs them: searched as those lines, whatever its name.
            return tool_call_text(name, {**tool_input, "command": "\n".join(commands)}, (name,) if name else ())
    return tool_call_text(name, tool_input)


def assistant_blocks(
    counter: EventCounter, blocks: list[Any], ts: float | None, unknown: UnknownRecords
) -> Iterator[Event]:
    """Events of an Anthropic-style assistant message: text, thinking, tool use (Cline's CLI and task history)."""
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            ev = counter.make(
                "assistant", "agent", block.get("text") if isinstance(block.get("text"), str) else None, ts=ts
            )
        elif btype in ("thinking", "reasoning"):
            thought = block.get("thinking", block.get("text"))
            ev = counter.make("reasoning", "agent", thought if isinstance(thought, str) else None, ts=ts)
        elif btype == "tool_use":
            name = str_or_none(block.get("name"))
            ev = counter.make(
                "tool_call",
                "agent",
                tool_input_text(name, block.get("input")),
                ts=ts,
                tool=name,
                call_id=str_or_none(block.get("id")),
            )
        elif btype in ("redacted_thinking", "image", "document"):
            continue
        else:
            unknown.saw(f"block:{btype}")
            continue
        if ev is not None:
            yield ev
