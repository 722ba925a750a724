"""The Continue adapter: ``~/.continue/sessions/<id>.json`` (the CLI ``cn`` observed, 1.5.47) to Sessions and Events.

Owns what Voyager knows about Continue's session files, which the CLI (``cn``) and the IDE
extensions share: one pretty JSON document a session, ``{sessionId, title,
workspaceDirectory, history, usage}``, rewritten whole after every message, so it is read
whole again when it changes and ``reread_delta`` keeps an added turn at the cost of what it
adds. ``sessions/sessions.json`` is the list the pickers show (id, title, ``dateCreated``
in epoch milliseconds as a string, cwd, message count): read only for the creation time.

``history[]`` items are ``{message, contextItems, editorState?, toolCallStates?, reasoning?}``:

* ``message.role`` ``user`` is what a person typed (its ``content`` a string or a list of
  ``text``/``imageUrl`` parts); ``editorState`` is the editor's copy of the same text (never
  read); ``contextItems`` are files and other context attached to it: meta.
* ``assistant``: the reply text, its ``toolCalls`` (``Bash``: the command). A tool's output
  has no message of its own in ``cn``: it is the item's ``toolCallStates[].output`` (a list
  of context items), with ``status`` ``errored``/``canceled`` as failures; no exit code is
  recorded. A ``tool`` message (what the IDE writes) is read unless that call's output was.
* ``thinking`` messages and an item's ``reasoning.text`` are reasoning; ``system`` is meta.

The files record no per-message time; the session's start is ``dateCreated`` and its end the
file's modification time. ``cn --resume`` reopens only the newest session; by id there is
``cn --fork <id>`` (a copy that continues it), suggested in the session's directory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    cached_by_stat,
    doc_with_list,
    document_items,
    epoch,
    EventCounter,
    int_or_none,
    join_text,
    json_sessions,
    list_or_empty,
    openai_tool_calls,
    opt,
    resume_in,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.jsondoc import read_json
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "continue"
LABEL = "Continue"
INDEX = "sessions.json"

#: Tools whose ``command`` argument is a shell command (cn's ``Bash``, the IDE's ``run_terminal_command``).
SHELL_TOOLS = frozenset({"Bash", "bash", "run_terminal_command", "runTerminalCommand"})
#: The title a session has until something names it: no title at all.
_PLACEHOLDER_TITLES = frozenset({"Untitled Session", "New Session", ""})
#: Tool call states that mean the call did not succeed.
_FAILED = frozenset({"errored", "canceled", "cancelled", "error"})


def sessions_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_CONTINUE_HOME``, ``$CONTINUE_GLOBAL_DIR`` or ``~/.continue``, then ``sessions/``."""
    base = manifest.agent_home("continue", env)
    assert base is not None
    return base / "sessions"


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``cn --fork <id>`` (``cn --resume`` takes no id: it reopens the newest session of all)."""
    return resume_in(cwd, "cn", opt("--fork", native_id))


def _load_index(path: str) -> dict[str, dict[str, Any]]:
    doc = read_json(path, fatal=False)
    return {
        i["sessionId"]: i for i in list_or_empty(doc) if isinstance(i, dict) and isinstance(i.get("sessionId"), str)
    }


def index_entry(folder: Path, native_id: str) -> dict[str, Any]:
    """The session's entry in ``sessions.json`` (read once per change of that file), or ``{}``."""
    index: dict[str, dict[str, Any]] = cached_by_stat(str(folder / INDEX), _load_index, {})
    return index.get(native_id, {})


def created_at(value: Any) -> float | None:
    """``dateCreated``: epoch milliseconds written as a string of digits (or a number, or ISO text)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        return epoch(int(value))
    return epoch(value)


def _text(content: Any) -> str:
    """A message's text: a string, or the ``text`` parts of a list (images skipped)."""
    return join_text(content) if isinstance(content, (str, list)) else ""


def _output_text(output: Any) -> str:
    """A tool call's output as cn keeps it: a list of context items ``{content, name, description}``."""
    if isinstance(output, str):
        return output
    parts = [
        item["content"]
        for item in list_or_empty(output)
        if isinstance(item, dict) and isinstance(item.get("content"), str) and item["content"]
    ]
    return "\n".join(parts)


class _SessionRead:
    """One read of one session file."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.source = source
        self.path = Path(source.path)
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.model: str | None = None
        #: Calls whose output a toolCallStates entry gave: a ``tool`` message for them is a copy.
        self.answered: set[str] = set()

    def run(self) -> Iterator[Item]:
        read = doc_with_list(
            self.path, "history", "a Continue session file", ("sessionId", "usage", "title", "workspaceDirectory")
        )
        if isinstance(read, Notice):
            yield read
            return
        doc, history = read
        native = str_or_none(doc.get("sessionId")) or self.path.stem
        sid = session_id(PROVIDER, native)
        entry = index_entry(self.path.parent, native)
        counter = EventCounter(sid, 0)

        def events() -> Iterator[Event]:
            for item in history:
                if not isinstance(item, dict):
                    self.unknown.saw(type(item).__name__)
                    continue
                yield from self._item(counter, item)

        usage = as_dict(doc.get("usage"))
        title = str_or_none(doc.get("title")) or str_or_none(entry.get("title"))
        cwd = str_or_none(doc.get("workspaceDirectory")) or str_or_none(entry.get("workspaceDirectory"))
        started = created_at(entry.get("dateCreated"))

        def session() -> Session:  # the model is the last a message named
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=None if title is None or title.strip() in _PLACEHOLDER_TITLES else title,
                cwd=cwd,
                model=self.model,
                started=started,
                # No message carries a time: the file was last rewritten when the last one was added.
                updated=self.source.fingerprint.mtime_ns / 1e9 or None,
                resume=resume_command(cwd, native),
                source=str(self.path),
                tokens_in=int_or_none(usage.get("promptTokens")),
                tokens_out=int_or_none(usage.get("completionTokens")),
            )

        yield from document_items(sid, session, events(), history, self.before, self.unknown, str(self.path))

    def _item(self, counter: EventCounter, item: dict[str, Any]) -> Iterator[Event]:
        message = item.get("message")
        if not isinstance(message, dict):
            self.unknown.saw("item without a message")
            return
        role = message.get("role")
        make = counter.make
        if role == "user":
            for ctx in list_or_empty(item.get("contextItems")):
                if (
                    isinstance(ctx, dict)
                    and (ev := make("meta", "provider", str_or_none(ctx.get("content")))) is not None
                ):
                    yield ev
            if (ev := make("user", "human", _text(message.get("content")))) is not None:
                yield ev
        elif role == "assistant":
            yield from self._assistant(counter, item, message)
        elif role == "thinking":
            if (ev := make("reasoning", "agent", _text(message.get("content")))) is not None:
                yield ev
        elif role == "tool":
            call_id = str_or_none(message.get("toolCallId"))
            if call_id in self.answered:
                return
            if (ev := make("tool_result", "tool", _text(message.get("content")), call_id=call_id)) is not None:
                yield ev
        elif role == "system":
            if (ev := make("meta", "provider", _text(message.get("content")))) is not None:
                yield ev
        else:
            self.unknown.saw(f"role:{role}")

    def _assistant(self, counter: EventCounter, item: dict[str, Any], message: dict[str, Any]) -> Iterator[Event]:
        usage = as_dict(message.get("usage"))
        self.model = str_or_none(usage.get("model")) or self.model
        reasoning = as_dict(item.get("reasoning"))
        if (ev := counter.make("reasoning", "agent", str_or_none(reasoning.get("text")))) is not None:
            yield ev
        if (ev := counter.make("assistant", "agent", _text(message.get("content")))) is not None:
            yield ev
        states = {
            s["toolCallId"]: s
            for s in list_or_empty(item.get("toolCallStates"))
            if isinstance(s, dict) and isinstance(s.get("toolCallId"), str)
        }
        calls = [c for c in list_or_empty(message.get("toolCalls")) if isinstance(c, dict)]
        # A state whose call the message does not list (older files) still carries the call.
        listed = {c.get("id") for c in calls}
        calls += [as_dict(s.get("toolCall")) | {"id": k} for k, s in states.items() if k not in listed]
        for call in openai_tool_calls(calls):
            name, call_id = call.name, call.id
            state = states.get(call_id, {}) if call_id else {}
            # The arguments as Continue parsed them, when its state for the call kept them.
            args = state.get("parsedArgs") if isinstance(state.get("parsedArgs"), dict) else call.arguments
            if (
                ev := counter.make(
                    "tool_call", "agent", tool_call_text(name, args, SHELL_TOOLS), tool=name, call_id=call_id
                )
            ) is not None:
                yield ev
            if not state:
                continue
            status = state.get("status")
            failed = isinstance(status, str) and status in _FAILED
            if (
                ev := counter.make(
                    "tool_result",
                    "tool",
                    _output_text(state.get("output")),
                    tool=name,
                    call_id=call_id,
                    is_error=failed,
                )
            ) is not None:
                if call_id:
                    self.answered.add(call_id)
                yield ev


class ContinueAdapter:
    """Continue's session files (the CLI's and the IDE extensions')."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [sessions_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from json_sessions(sessions_dir(env), PROVIDER, INDEX, LABEL)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _SessionRead(source, cursor).run()


ADAPTER = ContinueAdapter()
