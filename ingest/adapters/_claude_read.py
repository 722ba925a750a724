"""Reading a Claude Code transcript (``<claude home>/projects/**/*.jsonl``) into Sessions and Events.

Owns everything Voyager knows about Claude Code's transcript format (see docs/agents.md):
which files are sessions, how a line maps to events, who wrote what (a person, the
model, a tool, or Claude Code itself), and where a session's title lives. One file is
one session; subagent transcripts (``agent-*.jsonl``, beside the sessions or under
``<sessionId>/subagents/``) are sessions of their own whose ``parent`` is the session
that spawned them. In the parent, what a subagent answered (the ``Task``/``Agent`` call's result, or
the ``<task-notification>`` that brings a background subagent's result; not the acknowledgement of
a background launch) is its report: ``tool_result``/``agent``, as every adapter files one
(docs/json.md, "Tool calls and subagent reports").

Reading is streaming and read-only: lines come from ``jsonl.read_records`` one at a
time, the Session is yielded as soon as its id is known, then once more at the end if
what is known about it grew (title, model, last timestamp), and a Cursor closes the
stream so the next scan reads only appended lines.

The adapter (``claude``: where the transcripts are, the stat pass) imports this module only to read
one: a refresh that finds nothing changed never loads the format's Structs and the reading kit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, ClassVar

import msgspec
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    cached_by_stat,
    int_or_none,
    join_text,
    parse_ts,
    release,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Source
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsondoc import capped_bytes
from voyager_sessions.ingest.jsonl import Record, decode_json, typed_decoder

from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, notification_report, tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin, Session, TitleSource, session_id

PROVIDER = "claude"

#: User text that begins with one of these was written by Claude Code, not typed as a
#: prompt: slash-command echoes, local command output, reminders it injects, hook output.
_WRAPPER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "[Request interrupted by user",
)

#: Assistant lines with this model were made up by Claude Code (API errors, "No response requested").
_SYNTHETIC_MODEL = "<synthetic>"


class _Usage(msgspec.Struct):
    """A message's token usage (counts checked where they are read: a field of the wrong type counts 0)."""

    input_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None
    output_tokens: Any = None


class _Block(msgspec.Struct):
    """One block of a message's content: text, thinking, a tool call or a tool result (the fields read)."""

    type: Any = None
    text: Any = None
    thinking: Any = None
    name: Any = None
    id: Any = None
    input: Any = None
    content: Any = None
    tool_use_id: Any = None
    is_error: Any = None


class _Message(msgspec.Struct):
    """The fields of a line's ``message`` this adapter reads."""

    content: list[_Block] | str | None = None
    id: Any = None
    model: Any = None
    usage: _Usage | None = None


class _ToolUseResult(msgspec.Struct):
    """The fields of a tool result's ``toolUseResult`` this adapter reads: whether a subagent was started in the
    background (then the result only acknowledges the launch; the report comes as a ``<task-notification>``)."""

    status: Any = None
    isAsync: Any = None


class _Line(msgspec.Struct):
    """The fields of a transcript line this adapter reads, decoded straight into a Struct: the fields it does
    not name are skipped without being built (``toolUseResult`` repeats a tool's whole output: only its launch
    status is read), and no dict is
    made for a line, its message, their blocks or their usage. Keep in step with ``ClaudeRead``.

    A leaf is ``Any`` wherever the reader checks its type itself; the shape is typed only where the reader's
    rule is that a value of the wrong type reads as absent (a message, its content, its blocks, its usage), so
    a line that does not fit is that rule applied (:func:`_fitted`), not a line lost."""

    type: Any = None
    version: Any = None
    summary: Any = None
    customTitle: Any = None
    aiTitle: Any = None
    message: _Message | None = None
    timestamp: Any = None
    cwd: Any = None
    gitBranch: Any = None
    sessionId: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isSidechain: Any = None
    isApiErrorMessage: Any = None
    #: Only its launch status is read; an error's text (a string) is decoded rather than sending the line
    #: down the lenient path.
    toolUseResult: _ToolUseResult | str | None = None


def _fitted(value: Any) -> Any:
    """A line the typed decode refused, decoded leniently (``value``), as a :class:`_Line` by the reader's rule:
    a message, content, block or usage of the wrong type reads as absent (a content list keeps its objects,
    the only blocks the reader looks at). What is not an object stays as it is (the reader skips it)."""
    if not isinstance(value, dict):
        return value
    line = dict(value)
    message = line.get("message")
    if isinstance(message, dict):
        message = dict(message)
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [b for b in content if isinstance(b, dict)]
        elif not isinstance(content, str):
            message["content"] = None
        if not isinstance(message.get("usage"), dict):
            message["usage"] = None
        line["message"] = message
    else:
        line["message"] = None
    if not isinstance(line.get("toolUseResult"), (dict, str)):
        line["toolUseResult"] = None
    return msgspec.convert(line, _Line)


def _launched_in_background(line: _Line) -> bool:
    """True for the result of a ``Task``/``Agent`` call that only started its subagent in the background."""
    result = line.toolUseResult
    return isinstance(result, _ToolUseResult) and (result.isAsync is True or result.status == "async_launched")


def is_wrapped_command(text: str) -> bool:
    """True when user text is Claude Code's own wrapping (command tags, reminders), not a prompt."""
    return text.lstrip().startswith(_WRAPPER_PREFIXES)


def render_tool_input(name: str | None, tool_input: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, tool_input)


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """The command that reopens a session: ``claude --resume`` must run in the session's directory."""
    return resume_in(cwd, "claude", opt("--resume", native_id))


#: Record types that are not conversation (bookkeeping Claude Code writes beside it):
#: skipped without a word. Anything else that is neither a message nor one of these is
#: counted and named, so a format change never hides sessions silently.
_NOT_CONVERSATION = frozenset(
    {
        "system",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "attachment",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "atis-latch",
        "tools-used",
        "cost-state",
        "mode",
        "agent-name",
        "progress",
        "tag",
        "pr-link",
        "worktree-state",
    }
)


def _load_sessions_index(path: str) -> dict[str, tuple[str, TitleSource]]:
    with open_regular(path) as fh:
        doc = decode_json(capped_bytes(fh))  # past the cap: no titles from it (cached_by_stat's default)
    titles: dict[str, tuple[str, TitleSource]] = {}
    entries = doc.get("entries") if isinstance(doc, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
            custom = str_or_none(entry.get("customTitle"))
            summary = str_or_none(entry.get("summary"))
            if custom:
                titles[entry["sessionId"]] = (custom, "user")
            elif summary:
                titles[entry["sessionId"]] = (summary, "agent")
    return titles


def index_title(project_dir: str, native_id: str) -> tuple[str, TitleSource] | None:
    """The title ``<project dir>/sessions-index.json`` gives a session, with its source (``user`` for a
    rename, ``agent`` for a generated summary), if any. A missing or corrupt index is no error."""
    titles: dict[str, tuple[str, TitleSource]] = cached_by_stat(
        os.path.join(project_dir, "sessions-index.json"), _load_sessions_index, {}
    )
    return titles.get(native_id)


class UsageTally(msgspec.Struct):
    """Token usage so far. One API message may be split over several lines that repeat its usage, so the
    pending message (``pending_id``) is counted once, from its last line, then folded into ``done``."""

    done_in: int = 0
    done_out: int = 0
    pending_id: str | None = None
    pending_in: int = 0
    pending_out: int = 0


class ClaudeRead(JsonlSessionRead):
    """One pass over one transcript file (or its appended tail when resuming).

    Agents that write Claude Code's transcript format under another home (Qoder CLI) read
    through a subclass naming their ``provider``, ``label`` and ``resume_command``.
    """

    provider = PROVIDER
    label: ClassVar[str] = "Claude Code"
    decode = staticmethod(typed_decoder(_Line, _fitted))

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        saved = self._start(source.path, cursor, self.label).get("usage")
        # Strings, not pathlib: a Path and its parents cost a first index ~25 µs a transcript, 15,000 of them.
        folder, name = os.path.split(source.path)
        self.stem = os.path.splitext(name)[0]
        # Subagent transcripts are named agent-<id>.jsonl wherever they live; the newer
        # layout nests them as <project>/<parent sessionId>/subagents/agent-<id>.jsonl.
        self.is_agent_file = name.startswith("agent-")
        above, parent = os.path.split(folder)
        self.nested_parent = os.path.basename(above) if parent == "subagents" else None
        self.project_dir = folder
        self._resume: tuple[tuple[str | None, str], str | None] | None = None  # (cwd, id) and its command
        self.version: str | None = None  # the last version a line named (checked once per change)
        try:
            self.usage = msgspec.convert(saved, UsageTally) if isinstance(saved, dict) else UsageTally()
        except msgspec.ValidationError:
            self.usage = UsageTally()

    # -- session -------------------------------------------------------------------

    @property
    def sid(self) -> str | None:
        return self.counter.session if self.counter else None

    def _title(self) -> tuple[str | None, TitleSource | None]:
        """The session's title and who gave it: a rename in the file, else the side index, else a summary line."""
        if self.facts.user_title:
            return self.facts.user_title, "user"
        if self.facts.native_id and not self.is_agent_file:
            found = index_title(self.project_dir, self.facts.native_id)
            if found:
                return found
        return self.facts.line_title, "agent"

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        # A subagent cannot be resumed on its own; its work lives on in the parent.
        key = (self.facts.cwd, self.facts.parent.split(":", 1)[1] if self.facts.parent else native)
        if self._resume is None or self._resume[0] != key:  # a read describes its session twice, first and last
            self._resume = (key, self.resume_command(*key))
        resume = self._resume[1]
        title, title_source = self._title()
        return self.facts.session(
            self.provider, title=title, title_source=title_source, resume=resume, source=self.path
        )

    @staticmethod
    def resume_command(cwd: str | None, native_id: str) -> str | None:
        return resume_command(cwd, native_id)

    def _establish(self, line: _Line) -> Session:
        """Fix the session id at the first line that names one (none did before); returns the Session to yield
        first."""
        # The file is the session: Claude Code names it after the session id, and
        # `claude --resume` looks it up by that name. Lines copied into a resumed or
        # forked transcript still carry the old session's id, so they cannot decide.
        if self.is_agent_file:
            parent = str_or_none(line.sessionId) or self.nested_parent
            if parent:
                self.facts.parent = session_id(self.provider, parent)
        return self._begin(self.stem)

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        if self.facts.tokens_in is not None:
            state["usage"] = msgspec.structs.asdict(self.usage)
        return state

    # -- the stream ------------------------------------------------------------------

    def _record(self, record: Record) -> Iterator[Item]:
        if type(record.value) is _Line:
            yield from self._line(record.value)

    def _line(self, line: _Line) -> Iterator[Item]:
        kind = line.type
        version = line.version
        if isinstance(version, str) and version != self.version:  # the same on every line: check it once
            self.version = version
            self.unknown.version = version
            self.facts.agent_version = release(version) or self.facts.agent_version
        if kind == "summary":
            summary = str_or_none(line.summary)
            if summary:
                self.facts.line_title = summary.strip()
            return
        if kind == "ai-title":  # a title the app generated (Claude Desktop's Cowork writes them): the last one wins
            generated = str_or_none(line.aiTitle)
            if generated and generated.strip():
                self.facts.line_title = generated.strip()
            return
        if kind == "custom-title":  # /rename: the last one wins
            custom = str_or_none(line.customTitle)
            if custom and custom.strip():
                self.facts.user_title = custom.strip()
            return
        if kind != "user" and kind != "assistant":
            if kind not in _NOT_CONVERSATION:
                self.unknown.saw(kind)
            return
        message = line.message
        if message is None:
            return
        ts = parse_ts(line.timestamp)
        self.facts.observe_ts(ts)
        self.facts.observe_place(line.cwd, line.gitBranch)
        if self.counter is None:
            yield self._establish(line)
        if kind == "user":
            yield from self._user(line, message, ts)
        else:
            yield from self._assistant(line, message, ts)

    def _user(self, line: _Line, message: _Message, ts: float | None) -> Iterator[Event]:
        counter = self.counter
        assert counter is not None
        injected = line.isMeta is True or line.isCompactSummary is True
        # In a subagent's transcript the "user" is the parent agent writing the task.
        person: Origin = "provider" if (self.is_agent_file or line.isSidechain is True) else "human"

        def prompt(text: str) -> Event | None:
            report, call_id = notification_report(text)
            if report:  # a background subagent's report: the one kind/origin every adapter gives one
                return counter.make(*SUBAGENT_REPORT, text, ts=ts, call_id=call_id)
            if injected or is_wrapped_command(text):
                return counter.make("meta", "provider", text, ts=ts)
            return counter.make("user", person, text, ts=ts)

        content = message.content
        if isinstance(content, str):
            if (ev := prompt(content)) is not None:
                yield ev
            return
        for block in content or ():
            btype = block.type
            if btype == "text" and isinstance(block.text, str):
                ev = prompt(block.text)
            elif btype == "tool_result":
                call_id = str_or_none(block.tool_use_id)
                if _launched_in_background(line):
                    counter.launched(call_id)  # only the launch: the report comes as a <task-notification>
                # A Task/Agent call's result is its subagent's report: the counter files it so (docs/json.md).
                ev = counter.make(
                    "tool_result",
                    "tool",
                    join_text(block.content),
                    ts=ts,
                    call_id=call_id,
                    # Claude records no exit code in a tool result: exit_code stays None.
                    is_error=block.is_error is True,
                )
            else:
                continue  # images, documents
            if ev is not None:
                yield ev

    def _assistant(self, line: _Line, message: _Message, ts: float | None) -> Iterator[Event]:
        counter = self.counter
        assert counter is not None
        model = str_or_none(message.model)
        synthetic = model == _SYNTHETIC_MODEL or line.isApiErrorMessage is True
        if model and not synthetic:
            self.facts.model = model
        if message.usage is not None:
            self._usage(message, message.usage)
        said_as: tuple[Kind, Origin] = ("meta", "provider") if synthetic else ("assistant", "agent")
        text_kind, text_origin = said_as
        content = message.content
        if isinstance(content, str):
            if (ev := counter.make(text_kind, text_origin, content, ts=ts)) is not None:
                yield ev
            return
        for block in content or ():
            btype = block.type
            if btype == "text":
                text = block.text
                ev = counter.make(text_kind, text_origin, text if isinstance(text, str) else None, ts=ts)
            elif btype == "thinking":
                thinking = block.thinking
                ev = counter.make("reasoning", "agent", thinking if isinstance(thinking, str) else None, ts=ts)
            elif btype == "tool_use":
                name = str_or_none(block.name)
                ev = counter.make(
                    "tool_call",
                    "agent",
                    render_tool_input(name, block.input),
                    ts=ts,
                    tool=name,
                    call_id=str_or_none(block.id),
                )
            else:
                continue  # redacted_thinking has no readable text; unknown blocks are skipped
            if ev is not None:
                yield ev

    def _usage(self, message: _Message, usage: _Usage) -> None:
        tally = self.usage
        msg_id = str_or_none(message.id)
        if msg_id is None or msg_id != tally.pending_id:
            # A new API message: the previous one is finished, fold it into the totals.
            tally.done_in += tally.pending_in
            tally.done_out += tally.pending_out
            tally.pending_id = msg_id
        tally.pending_in = (
            (int_or_none(usage.input_tokens) or 0)
            + (int_or_none(usage.cache_creation_input_tokens) or 0)
            + (int_or_none(usage.cache_read_input_tokens) or 0)
        )
        tally.pending_out = int_or_none(usage.output_tokens) or 0
        self.facts.tokens_in = tally.done_in + tally.pending_in
        self.facts.tokens_out = tally.done_out + tally.pending_out
