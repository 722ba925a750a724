"""Mistral Vibe's unified session store (``mistral.vibe.unified-session-store/v1``; Vibe 3.x, 2.x by default).

One folder per session, ``<logs/session>/unified/<session id>/``. Which files hold the
conversation is decided by pointers, never by listing: ``CURRENT`` names the live
generation, ``generations/<gen>/manifest.json`` lists (in order) the content-addressed
``chunks/<sha256>.json`` arrays of the public history, or leaves it inline in the
generation's projection state. Older generations (kept for recovery) and the chunks only
they reference repeat earlier turns, so ``chunks/`` and ``generations/`` are never
globbed. ``journal/`` (hash-chained recovery records: commands, deltas) is not read:
what it holds of a finished turn is in the next generation. Entries are upserted by
``id`` (a later copy of an entry replaces the earlier one in place). The generation's
``checkpoint`` is the model-context copy of the same conversation: not read.

Entry types: ``message`` (user / assistant), ``reasoning``, ``effect`` (one tool call
with its result: ``state.output.structured_content.returncode`` is the exit code),
``notice`` and ``checkpoint`` (Vibe's own notes: ``meta``). Times are epoch milliseconds.
``meta.json`` (absent for a subagent) gives cwd, title, parent, start/end; the
generation's ``runtime-state.json`` gives the identity (``subagent`` / ``root`` / ``fork``)
and the active model; ``projection-state.json`` the token usage.

A session is re-read whole when what defines it changes (``CURRENT``, ``meta.json``): a
new generation may rewrite any earlier entry. What reaches the index is only what follows
the part of the history that is unchanged since the last read (``reread_delta``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    SessionFacts,
    UnknownRecords,
    as_dict,
    compact_json,
    epoch,
    int_or_none,
    join_text,
    parse_ts,
    reread_delta,
    str_or_none,
)
from voyager_sessions.ingest.adapters._vibe_common import LABEL, META, PROVIDER, model_of, resume_command, title_of
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.jsondoc import read_json, read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, session_id

STORE_FORMAT = "mistral.vibe.unified-session-store/v1"
CURRENT = "CURRENT"

#: A generation name or chunk hash from a pointer file: one plain path component, nothing else.
_SAFE_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]{0,127}")

#: ``source`` values of a user message that a person typed (a turn's prompt, a steer mid-turn).
_TYPED_SOURCES = frozenset({"turn_start", "turn_steer"})

#: Effect states whose result is a failure.
_FAILED = frozenset({"failed", "error", "errored", "denied", "rejected"})
#: Effect states that have no result yet: nothing is invented for a tool still running.
_PENDING = frozenset({"pending", "running", "in_progress", "queued", "awaiting_approval"})


def _safe(name: Any) -> str | None:
    return name if isinstance(name, str) and _SAFE_NAME.fullmatch(name) and ".." not in name else None


class _Generation:
    """The live generation of one session folder, located through ``CURRENT`` and its manifest."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.notices: list[Notice] = []
        self.current: dict[str, Any] = {}
        self.manifest: dict[str, Any] = {}
        self.dir: Path | None = None

    def open(self) -> Notice | None:
        """Follow ``CURRENT`` to the manifest; a Notice (fatal: the session cannot be read) if that fails."""
        current = read_json_object(self.folder / CURRENT)
        if isinstance(current, Notice):
            return current
        self.current = current
        fmt = current.get("store_format")
        if fmt is not None and fmt != STORE_FORMAT:
            return Notice(
                source=str(self.folder),
                fatal=True,
                reason=f"store format {str(fmt)[:80]!r} is not one Voyager knows (it reads {STORE_FORMAT}); "
                f"written by a newer {LABEL}?",
            )
        gen = _safe(current.get("generation"))
        if gen is None:
            return Notice(
                source=str(self.folder / CURRENT), fatal=True, reason='no usable "generation" in CURRENT; skipped'
            )
        self.dir = self.folder / "generations" / gen
        manifest = read_json_object(self.dir / "manifest.json")
        if isinstance(manifest, Notice):
            # The generation CURRENT names may be pruned under us by a running Vibe: worth a retry.
            return Notice(source=manifest.source, reason=manifest.reason, fatal=True, transient=True)
        self.manifest = manifest
        return None

    @property
    def version(self) -> str:
        minor = self.current.get("store_format_minor")
        return f"(unified store v1, minor {minor})" if isinstance(minor, int) else "(unified store v1)"

    def document(self, part: str, default_name: str) -> dict[str, Any]:
        """A generation document the manifest names (``projection_state``, ``runtime_state``); {} if unreadable."""
        assert self.dir is not None
        ref = as_dict(self.manifest.get(part))
        name = _safe(ref.get("path")) or default_name
        doc = read_json_object(self.dir / name, fatal=False)
        if isinstance(doc, Notice):
            self.notices.append(doc)  # the history may still be readable: say what is missing, go on
            return {}
        return doc

    def entries(self, projection: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The public history in order: the manifest's projection chunks, else the inline entries."""
        ref = as_dict(self.manifest.get("projection_state"))
        chunks = ref.get("chunks")
        if not isinstance(chunks, list):
            snapshot = as_dict(projection.get("snapshot"))
            history = as_dict(snapshot.get("history"))
            inline = history.get("entries")
            yield from (e for e in inline if isinstance(e, dict)) if isinstance(inline, list) else ()
            return
        for digest in chunks:
            name = _safe(digest)
            if name is None:
                self.notices.append(Notice(source=str(self.folder), reason=f"chunk name {str(digest)[:80]!r} refused"))
                continue
            path = self.folder / "chunks" / f"{name}.json"
            value = read_json(path, fatal=False)
            if isinstance(value, Notice):
                self.notices.append(value)
                continue
            if not isinstance(value, list):
                self.notices.append(
                    Notice(source=str(path), reason=f"a JSON {type(value).__name__}, not a list of entries")
                )
                continue
            yield from (e for e in value if isinstance(e, dict))


def upsert(entries: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries in first-seen order, each the last version written under its ``id``."""
    by_id: dict[str, dict[str, Any]] = {}
    order: list[Any] = []
    for entry in entries:
        key = entry.get("id")
        if isinstance(key, str) and key:
            if key not in by_id:
                order.append(key)
            by_id[key] = entry
        else:
            order.append(entry)  # no id: nothing can replace it
    return [by_id[k] if isinstance(k, str) else k for k in order]


class _Mapper:
    """Turns public history entries into events."""

    def __init__(self, counter: EventCounter, unknown: UnknownRecords, *, subagent: bool) -> None:
        self.counter = counter
        self.unknown = unknown
        self.subagent = subagent
        self.first_prompt: str | None = None

    def events(self, entry: dict[str, Any]) -> Iterator[Event]:
        kind = entry.get("type")
        ts = epoch(entry.get("createdAt"))
        c = self.counter
        if kind == "message":
            ev = self._message(entry, ts)
        elif kind == "reasoning":
            text = said if isinstance(said := entry.get("text"), str) else ""
            if not text.strip():
                text = _summary_text(entry.get("summary"))
            ev = c.make("reasoning", "agent", text, ts=ts)
        elif kind == "effect":
            yield from self._effect(entry, ts)
            return
        elif kind in ("notice", "checkpoint"):
            ev = c.make("meta", "provider", _notice_text(entry), ts=ts)
        else:
            self.unknown.saw(f"entry {kind!r}" if isinstance(kind, str) else "entry without a type")
            return
        if ev is not None:
            yield ev

    def _message(self, entry: dict[str, Any], ts: float | None) -> Event | None:
        role = entry.get("role")
        c = self.counter
        if role == "user":
            text = _user_text(entry)
            source = entry.get("source")
            if self.subagent:
                return c.make("user", "provider", text, ts=ts)  # the parent agent wrote this task
            if source is None or (isinstance(source, str) and source in _TYPED_SOURCES):  # a list or dict: unhashable
                ev = c.make("user", "human", text, ts=ts)
                if ev is not None and self.first_prompt is None:
                    self.first_prompt = text[:400]
                return ev
            # A user-role message from elsewhere (a queue, a loop, a notification): never a person's turn.
            self.unknown.saw(f"user message from {str(source)[:40]!r}")
            return c.make("meta", "provider", text, ts=ts)
        text = join_text(entry.get("content"))
        if role == "assistant":
            return c.make("assistant", "agent", text, ts=ts)
        return c.make("meta", "provider", text, ts=ts)

    def _effect(self, entry: dict[str, Any], ts: float | None) -> Iterator[Event]:
        c = self.counter
        detail = as_dict(entry.get("detail"))
        tool = str_or_none(detail.get("toolName")) or str_or_none(detail.get("kind"))
        tool_input = detail.get("input")
        # No input recorded: the entry's title ("Running ls") stands for the arguments.
        text = tool_call_text(tool, tool_input if tool_input is not None else entry.get("title"))
        call_id = str_or_none(entry.get("id"))
        if (ev := c.make("tool_call", "agent", text, ts=ts, tool=tool, call_id=call_id)) is not None:
            yield ev
        state = as_dict(entry.get("state"))
        status = state.get("status")
        if not isinstance(status, str):  # a list or dict is unhashable: it is no known status
            status = None
        if status in _PENDING:
            return
        output = as_dict(state.get("output"))
        structured = as_dict(output.get("structured_content"))
        exit_code = int_or_none(structured.get("returncode"))
        if exit_code is None:
            exit_code = int_or_none(structured.get("exit_code"))
        failed = status in _FAILED or output.get("type") in ("error", "failure", "failed")
        ev = c.make(
            "tool_result",
            "tool",
            _result_text(state, output, structured),
            ts=epoch(entry.get("updatedAt")) or ts,
            tool=tool,
            call_id=call_id,
            exit_code=exit_code,
            is_error=failed,
        )
        if ev is not None:
            yield ev


def _user_text(entry: dict[str, Any]) -> str:
    """What the person typed: the display content Vibe keeps beside an expanded prompt, else the content."""
    display = entry.get("userDisplayContent")
    if isinstance(display, dict) and isinstance(display.get("content"), list):
        return join_text(display["content"])
    content = entry.get("content")
    for block in content if isinstance(content, list) else ():
        meta = block.get("_meta") if isinstance(block, dict) else None
        shown = meta.get("vibe.userDisplayContent") if isinstance(meta, dict) else None
        if isinstance(shown, dict) and isinstance(shown.get("content"), list):
            return join_text(shown["content"])
    return join_text(content)


def _summary_text(summary: Any) -> str:
    if isinstance(summary, list):
        return "\n".join(s if isinstance(s, str) else join_text([s]) for s in summary if s)
    return summary if isinstance(summary, str) else ""


def _notice_text(entry: dict[str, Any]) -> str:
    for key in ("text", "message", "summary"):
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return join_text(entry.get("content")) or _summary_text(entry.get("summary"))


def _result_text(state: dict[str, Any], output: dict[str, Any], structured: dict[str, Any]) -> str:
    """A tool's output as a person reads it: stdout and stderr of a command, else its text blocks or message."""
    stdout, stderr = structured.get("stdout"), structured.get("stderr")
    if isinstance(stdout, str) or isinstance(stderr, str):
        return "\n".join(s for s in (stdout, stderr) if isinstance(s, str) and s)
    text = join_text(output.get("content"))
    if text:
        return text
    error = state.get("error")
    for value in (
        state.get("outputText"),
        error.get("message") if isinstance(error, dict) else error,
        state.get("reason"),
    ):
        if isinstance(value, str) and value.strip():
            return value
    return compact_json(structured) if structured else ""


def _facts(
    folder: Path, gen: _Generation, meta: dict[str, Any], runtime: dict[str, Any], psession: dict[str, Any]
) -> SessionFacts:
    """What the session's pointer, meta.json, runtime and projection state say about it."""
    identity = as_dict(runtime.get("identity"))
    rmeta = as_dict(runtime.get("session_metadata"))
    facts = SessionFacts()
    facts.native_id = str_or_none(gen.current.get("session_id")) or str_or_none(meta.get("session_id")) or folder.name
    facts.cwd = str_or_none(as_dict(meta.get("environment")).get("working_directory")) or str_or_none(rmeta.get("cwd"))
    facts.git_branch = str_or_none(meta.get("git_branch"))
    parent = (
        str_or_none(meta.get("parent_session_id"))
        or str_or_none(identity.get("parent_session_id"))
        or str_or_none(rmeta.get("parent_session_id"))
        or str_or_none(psession.get("parentSessionId"))
    )
    if parent and parent != facts.native_id:
        facts.parent = session_id(PROVIDER, parent)
    facts.model = model_of(meta.get("config")) or str_or_none(rmeta.get("active_model"))
    for stamp in (
        parse_ts(meta.get("start_time")),
        parse_ts(meta.get("end_time")),
        epoch(psession.get("createdAt")),
        epoch(psession.get("updatedAt")),
    ):
        facts.observe_ts(stamp)
    usage = as_dict(psession.get("tokenUsage"))
    facts.tokens_in = int_or_none(usage.get("inputTokens"))
    facts.tokens_out = int_or_none(usage.get("outputTokens"))
    return facts


def read_unified(source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
    """Every event of one unified session folder, in the order of its live generation's history.

    The history is rebuilt whole from the live generation; given the last read's ``cursor``,
    only what follows an unchanged prefix is yielded (after a ``Partial``), so a new turn
    costs the index what it adds.
    """
    folder = Path(source.path)
    gen = _Generation(folder)
    failure = gen.open()
    if failure is not None:
        yield failure
        return
    meta: dict[str, Any] = {}
    if os.path.exists(folder / META):  # a subagent has none
        got = read_json_object(folder / META, fatal=False)
        if isinstance(got, Notice):
            yield got
        else:
            meta = got
    projection = gen.document("projection_state", "projection-state.json")
    runtime = gen.document("runtime_state", "runtime-state.json")
    psession = as_dict(as_dict(projection.get("snapshot")).get("session"))
    facts = _facts(folder, gen, meta, runtime, psession)
    subagent = as_dict(runtime.get("identity")).get("kind") == "subagent"

    unknown = UnknownRecords(LABEL)
    unknown.version = gen.version
    mapper = _Mapper(EventCounter(session_id(PROVIDER, facts.native_id or folder.name), 0), unknown, subagent=subagent)
    # The whole history is held (one session's worth): entries are upserted, and the title's source
    # depends on the first prompt.
    events: list[Event] = []
    for entry in upsert(gen.entries(projection)):
        for ev in mapper.events(entry):
            facts.observe_ts(ev.ts)
            events.append(ev)

    # meta.json is where Vibe writes a title (its title call, a rename); the projection mirrors it.
    titled = meta if str_or_none(meta.get("title")) else psession
    title, title_source = title_of(
        titled.get("title"), titled.get("title_source", titled.get("titleSource")), mapper.first_prompt
    )
    # A subagent is reached through the session that spawned it.
    resume_id = facts.parent.split(":", 1)[1] if subagent and facts.parent else (facts.native_id or folder.name)
    session = facts.session(
        PROVIDER,
        title=title,
        title_source=title_source,
        resume=resume_command(facts.cwd, resume_id),
        source=source.path,
    )
    yield session
    items, delta = reread_delta(session.id, events, (cursor.state if cursor is not None else {}).get("history"))
    yield from items
    yield from gen.notices
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=len(events), tail_hash="", session=session.id, state={"history": delta})
