"""Mistral Vibe's legacy session logs (2.x, and 3.x/2.x run with ``--legacy-harness``), and the 1.x single files.

A legacy session is a folder ``<logs/session>/<prefix>_<YYYYMMDD>_<HHMMSS>_<id8>/`` holding
``messages.jsonl`` (one OpenAI-style chat message a line, appended as the session goes,
the system prompt left out) and ``meta.json`` (rewritten whole on every save: session id,
parent, cwd, git branch, title, start/end times, config, token stats, the system prompt).
Resuming a session appends to its ``messages.jsonl`` and rewrites ``meta.json``, so the
messages file is read incrementally from its byte offset and ``meta.json`` is read again
each time (its size and mtime are part of the source's fingerprint, so a rename that
touches only ``meta.json`` is seen). Before 2.0 a session was one file
``<prefix>_<…>.json`` holding ``{"metadata": …, "messages": […]}``: read whole, or past
``jsondoc.STREAM_JSON_BYTES`` a message at a time (``read_json_streamed``).

Messages carry no timestamps: events have none (nothing is invented) and the session's
times are ``meta.json``'s ``start_time``/``end_time``. ``injected: true`` marks text Vibe
itself put in a user turn (compaction context, hook feedback, reminders): ``meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters._common import (
    as_dict,
    cached_by_stat,
    EventCounter,
    int_or_none,
    join_text,
    JsonlSessionRead,
    openai_tool_calls,
    parse_ts,
    SessionFacts,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters._vibe_common import LABEL, META, PROVIDER, model_of, resume_command, title_of
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json, read_json_object, read_json_streamed, stream_end
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin, Session, session_id

MESSAGES = "messages.jsonl"
INDEX = ".session_index.json"

#: Tool names whose ``command`` argument is a shell command (rendered as the command itself).
_SHELL_TOOLS = frozenset({"bash", "shell", "run_command", "execute_command"})


def _load_index(path: str) -> dict[str, dict[str, Any]]:
    # read_json: an entry nested too deeply costs that entry, not the whole index (which every
    # legacy session reads).
    doc = read_json(path, fatal=False)
    return {k: v for k, v in doc.items() if isinstance(k, str) and isinstance(v, dict)} if isinstance(doc, dict) else {}


def index_entry(folder: Path) -> dict[str, Any]:
    """What ``.session_index.json`` (beside the session folders) says about ``folder``; {} if nothing."""
    index: dict[str, dict[str, Any]] = cached_by_stat(str(folder.parent / INDEX), _load_index, {})
    return index.get(folder.name, {})


def folder_id8(name: str) -> str | None:
    """The short session id a legacy folder name ends with (``session_20261201_080914_c01fc521`` -> ``c01fc521``)."""
    tail = name.rsplit("_", 1)[-1]
    return tail if tail and tail != name else None


class MessageMapper:
    """Turns one legacy chat message (a ``messages.jsonl`` line or a 1.x ``messages`` item) into events."""

    def __init__(self, counter: EventCounter, unknown: UnknownRecords) -> None:
        self.counter = counter
        self.unknown = unknown
        #: The first prompt a person typed (its head), to tell a title that merely copies it.
        self.first_prompt: str | None = None

    def events(self, msg: dict[str, Any]) -> Iterator[Event]:
        role = msg.get("role")
        c = self.counter
        if role == "user":
            text = join_text(msg.get("content"))
            if msg.get("injected") is True:
                ev = c.make("meta", "provider", text)
            else:
                ev = c.make("user", "human", text)
                if ev is not None and self.first_prompt is None:
                    self.first_prompt = text[:400]
            if ev is not None:
                yield ev
        elif role == "assistant":
            reasoning = msg.get("reasoning_content")
            if isinstance(reasoning, str) and (ev := c.make("reasoning", "agent", reasoning)) is not None:
                yield ev
            said_as: tuple[Kind, Origin] = (
                ("meta", "provider") if msg.get("injected") is True else ("assistant", "agent")
            )
            kind, origin = said_as
            if (ev := c.make(kind, origin, join_text(msg.get("content")))) is not None:
                yield ev
            for call in openai_tool_calls(msg.get("tool_calls")):
                text = tool_call_text(call.name, call.arguments, _SHELL_TOOLS)
                if (ev := c.make("tool_call", "agent", text, tool=call.name, call_id=call.id)) is not None:
                    yield ev
        elif role == "tool":
            result = as_dict(msg.get("tool_result"))
            output = as_dict(result.get("output"))
            exit_code = int_or_none(output.get("exit_code"))
            if exit_code is None:
                exit_code = int_or_none(output.get("returncode"))
            ev = c.make(
                "tool_result",
                "tool",
                join_text(msg.get("content")),
                tool=str_or_none(msg.get("name")),
                call_id=str_or_none(msg.get("tool_call_id")),
                exit_code=exit_code,
                is_error=bool(result.get("error")),
            )
            if ev is not None:
                yield ev
        elif role == "system":
            return  # the system prompt: Vibe keeps it in meta.json, never a turn of the conversation
        else:
            self.unknown.saw(f"message role {role!r}" if isinstance(role, str) else "message without a role")


def facts_from_meta(meta: dict[str, Any], folder: Path | None) -> SessionFacts:
    """What ``meta.json`` (or a 1.x file's ``metadata``) says about the session, with the side index as fallback."""
    entry = index_entry(folder) if folder is not None else {}
    facts = SessionFacts()
    facts.native_id = str_or_none(meta.get("session_id")) or str_or_none(entry.get("session_id"))
    env = as_dict(meta.get("environment"))
    facts.cwd = str_or_none(env.get("working_directory")) or str_or_none(entry.get("cwd"))
    facts.git_branch = str_or_none(meta.get("git_branch"))
    parent = str_or_none(meta.get("parent_session_id")) or str_or_none(entry.get("parent_session_id"))
    if parent:
        facts.parent = session_id(PROVIDER, parent)
    facts.model = model_of(meta.get("config"))
    facts.observe_ts(parse_ts(meta.get("start_time") or entry.get("start_time")))
    facts.observe_ts(parse_ts(meta.get("end_time") or entry.get("end_time")))
    stats = as_dict(meta.get("stats"))
    facts.tokens_in = int_or_none(stats.get("session_prompt_tokens"))
    facts.tokens_out = int_or_none(stats.get("session_completion_tokens"))
    return facts


def session_of(facts: SessionFacts, meta: dict[str, Any], first_prompt: str | None, source: str) -> Session:
    title, title_source = title_of(meta.get("title"), meta.get("title_source"), first_prompt)
    # A legacy child (a compaction's continuation, a fork) is a session of its own that Vibe resumes by its id.
    return facts.session(
        PROVIDER,
        title=title,
        title_source=title_source,
        resume=resume_command(facts.cwd, facts.native_id or ""),
        source=source,
    )


class LegacyRead(JsonlSessionRead):
    """One pass over a legacy session's ``messages.jsonl`` (from the cursor's offset), described by its ``meta.json``."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        self.folder = Path(source.path).parent
        self.notices: list[Notice] = []
        meta = read_json_object(self.folder / META, fatal=False)
        if isinstance(meta, Notice):
            self.notices.append(meta)
            meta = {}
        self.meta = meta
        self.facts = facts_from_meta(meta, self.folder)  # meta.json describes the session, not the cursor
        if self.facts.native_id is None:
            # Vibe writes messages.jsonl, then meta.json: caught in between, the session's id is not known
            # yet (the folder name holds 8 of its characters). Indexing it under a guess would leave a
            # second session behind once meta.json appears.
            self.notices.append(
                Notice(
                    source=str(self.folder / META),
                    fatal=True,
                    transient=True,
                    reason="no session id in meta.json or the session index yet; read again next scan",
                )
            )
        self.counter = EventCounter(session_id(PROVIDER, self.facts.native_id or self.folder.name), self.progress.seq)
        self.mapper = MessageMapper(self.counter, self.unknown)
        if isinstance(state.get("first_prompt"), str):
            self.mapper.first_prompt = state["first_prompt"]

    def _session(self) -> Session:
        return session_of(self.facts, self.meta, self.mapper.first_prompt, self.path)

    def _state(self) -> dict[str, Any]:
        return {"first_prompt": self.mapper.first_prompt} if self.mapper.first_prompt is not None else {}

    def _record(self, record: Record) -> Iterator[Item]:
        if isinstance(record.value, dict):
            yield from self.mapper.events(record.value)
        else:
            self.unknown.saw(f"a JSON {type(record.value).__name__} line")

    def run(self) -> Iterator[Any]:
        yield from self.notices
        if self.facts.native_id is not None:
            yield from super().run()


def read_single_file(source: Source) -> Iterator[Item]:
    """A 1.x session file ``{"metadata": …, "messages": […]}``, read whole (Vibe 2.0 migrates these into folders);
    a large one's messages are streamed, their events yielded as they come, and the Session said again at
    the end once the first prompt (a title when the file has none) is known."""
    skipped: list[Notice] = []
    doc = read_json_streamed(source.path, "messages", ("metadata",), notices=skipped)
    if isinstance(doc, Notice):
        yield doc
        return
    if not isinstance(doc, dict):
        yield Notice(source=source.path, reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)
        return
    yield from skipped
    meta: dict[str, Any] = doc["metadata"] if isinstance(doc.get("metadata"), dict) else {}
    messages = doc.get("messages")
    if not isinstance(messages, (list, StreamedArray)):
        yield Notice(source=source.path, reason='no "messages" list: not a Mistral Vibe session file Voyager knows')
        return
    facts = facts_from_meta(meta, None)
    if facts.native_id is None:
        facts.native_id = Path(source.path).stem
    unknown = UnknownRecords(LABEL)
    counter = EventCounter(session_id(PROVIDER, facts.native_id), 0)
    mapper = MessageMapper(counter, unknown)

    def produced() -> Iterator[Event]:
        for msg in messages:
            if isinstance(msg, dict):
                yield from mapper.events(msg)
            else:
                unknown.saw(f"a JSON {type(msg).__name__} message")

    if isinstance(messages, list):
        events = list(produced())
        yield session_of(facts, meta, mapper.first_prompt, source.path)
        yield from events
    else:
        first = session_of(facts, meta, None, source.path)
        yield first
        yield from produced()
        ended = list(stream_end(messages, source.path))
        yield from ended
        if any(n.fatal for n in ended):
            return
        if (last := session_of(facts, meta, mapper.first_prompt, source.path)) != first:
            yield last
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
