"""The GitHub Copilot CLI adapter: ``$COPILOT_HOME/session-state/<id>/events.jsonl`` to Sessions and Events.

Owns what Voyager knows about Copilot CLI's session store (docs/agents.md, observed on
1.0.102). Each session is a folder named by its id holding an append-only event log,
``events.jsonl`` (``{"type", "data", "id", "timestamp", "parentId"}`` lines), and a small
``workspace.yaml`` (id, cwd, name, ``user_named``, created/updated times). The rules:

* a prompt is ``user.message`` ``data.content``; ``transformedContent`` is the same text
  with an injected date and is never read; ``system.message`` (the system prompt) is skipped;
* reasoning is ``assistant.message`` ``reasoningText``, tool calls its ``toolRequests``;
  a tool's output is ``tool.execution_complete`` with the exit code Copilot recorded;
* compaction writes ``model.*`` records that repeat the whole conversation: all skipped;
  the summary (``session.compaction_complete`` ``summaryContent``) is one ``meta`` event;
* a subagent has no file of its own: its lines sit in the parent's log with a top-level
  ``agentId``. They are routed to a child session ``<parent id>/<agentId>`` whose parent
  is the log's session, so one source yields several sessions. The cursor remembers
  each child's event counter, so a read from a byte offset keeps routing right;
* ``session-store.db`` and the ``checkpoints/`` files are later, partial copies: never read.

The older layout, ``history-session-state/<id>.json`` (one JSON document per session with
OpenAI-style ``chatMessages``, documented by peers, not observed here), is read whole, or past
``jsondoc.STREAM_JSON_BYTES`` a message at a time (``read_json_streamed``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    int_or_none,
    join_text,
    JsonlSessionRead,
    openai_tool_calls,
    opt,
    parse_ts,
    release,
    resume_in,
    SessionFacts,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.flatyaml import read_flat_yaml
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed, stream_end
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Kind, Origin, Session, TitleSource, session_id

PROVIDER = "copilot"
LABEL = "GitHub Copilot CLI"

#: Tools whose ``arguments.command`` is a shell command (what a person searches for).
SHELL_TOOLS = frozenset({"bash", "powershell", "shell"})

#: Record types that carry nothing to index: turn boundaries, the tool start (its
#: arguments repeat the assistant's tool request), shutdown totals, the system prompt,
#: subagent bookkeeping. Skipped without a word; any other unknown type is named.
_BOOKKEEPING = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "tool.execution_start",
        "session.shutdown",
        "session.compaction_start",
        "system.message",
        "subagent.configured",
        "subagent.selected",
        "subagent.completed",
    }
)


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``copilot --resume <id>``, run in the session's directory when it is known (the agent works there)."""
    return resume_in(cwd, "copilot", opt("--resume", native_id))


def render_call(name: str | None, arguments: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, arguments, SHELL_TOOLS)


def _workspace(folder: Path) -> tuple[dict[str, str | None], Notice | None]:
    """The session's ``workspace.yaml`` (empty when absent), and a Notice when it exists but cannot be read."""
    path = folder / "workspace.yaml"
    if not path.exists():
        return {}, None
    doc = read_flat_yaml(path)
    if isinstance(doc, Notice):
        return {}, doc
    return doc, None


class _Route:
    """One session a log holds (the main one or a subagent's): what is known of it and its event counter."""

    __slots__ = ("facts", "counter", "sent", "resumed_at")

    def __init__(self, facts: SessionFacts, counter: EventCounter, resumed_at: int | None = None) -> None:
        self.facts = facts
        self.counter = counter
        self.sent: Session | None = None
        #: Set for a subagent read on from a cursor: its events from this seq on are read again.
        self.resumed_at = resumed_at


class _CopilotRead(JsonlSessionRead):
    """One pass over one ``events.jsonl`` (or its appended tail when resuming)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        self.folder = Path(source.path).parent
        self.native_id = self.folder.name
        self.unknown.version = str_or_none(state.get("version"))
        saved = state.get("agents")
        self.saved_agents: dict[str, Any] = dict(saved) if isinstance(saved, dict) else {}
        self.agents: dict[str, _Route] = {}
        self.workspace, self.workspace_notice = _workspace(self.folder)
        self.facts.cwd = self.facts.cwd or str_or_none(self.workspace.get("cwd"))
        self.facts.observe_ts(parse_ts(self.workspace.get("created_at")))
        self.facts.observe_ts(parse_ts(self.workspace.get("updated_at")))
        self.main: _Route | None = None
        if self.counter is not None:
            self.main = _Route(self.facts, self.counter)

    # -- sessions --------------------------------------------------------------------

    def _title(self) -> tuple[str | None, TitleSource | None]:
        """``workspace.yaml`` ``name``: the first prompt, unless the person renamed the session (``user_named``)."""
        name = str_or_none(self.workspace.get("name"))
        if not name or not name.strip():
            return None, None
        named = (self.workspace.get("user_named") or "").strip().lower() == "true"
        return name.strip(), "user" if named else "prompt"

    def _session(self) -> Session:
        title, title_source = self._title()
        return self.facts.session(
            PROVIDER,
            title=title,
            title_source=title_source,
            resume=resume_command(self.facts.cwd, self.native_id),
            source=self.path,
        )

    def _agent_session(self, route: _Route) -> Session:
        facts = route.facts
        facts.cwd = facts.cwd or self.facts.cwd
        # A subagent cannot be resumed on its own; its work lives on in the parent session.
        return facts.session(
            PROVIDER,
            title=facts.line_title,
            title_source="agent",
            resume=resume_command(facts.cwd, self.native_id),
            source=self.path,
        )

    def _main(self) -> Iterator[Session]:
        """Fix the main session at its first record; yields its Session the first time."""
        if self.main is None:
            sent = self._begin(self.native_id)
            assert self.counter is not None
            self.main = _Route(self.facts, self.counter)
            yield sent

    def _agent(self, agent_id: str) -> Iterator[Session]:
        """Make sure the route for subagent ``agent_id`` exists (its Session comes with its first event)."""
        yield from self._main()
        if agent_id in self.agents:
            return
        assert self.counter is not None
        saved = self.saved_agents.get(agent_id)
        saved = saved if isinstance(saved, dict) else None
        facts = SessionFacts.from_state(saved.get("facts") if saved else None)
        facts.native_id = f"{self.native_id}/{agent_id}"
        facts.parent = self.counter.session
        seq = int_or_none(saved.get("seq")) if saved else None
        counter = EventCounter(session_id(PROVIDER, facts.native_id), seq or 0)
        self.agents[agent_id] = _Route(facts, counter, resumed_at=seq if saved else None)

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        if self.unknown.version:
            state["version"] = self.unknown.version
        agents = dict(self.saved_agents)
        for agent_id, route in self.agents.items():
            # Its id and parent follow from the log and the agentId: not kept (cursors stay small).
            facts = {k: v for k, v in route.facts.to_state().items() if k not in ("native_id", "parent")}
            agents[agent_id] = {"seq": route.counter.seq, "facts": facts}
        if agents:
            state["agents"] = agents
        return state

    # -- the stream ------------------------------------------------------------------

    def run(self) -> Iterator[Any]:
        if self.workspace_notice is not None:
            yield self.workspace_notice
        for item in super().run():
            if isinstance(item, Cursor):
                # The subagents' final Sessions, before the Cursor closes the stream.
                for route in self.agents.values():
                    if route.sent is not None or route.resumed_at is not None:
                        final = self._agent_session(route)
                        if final != route.sent:
                            yield final
            yield item

    def _emit(self, route: _Route, kind: Kind, origin: Origin, text: Any, **extra: Any) -> Iterator[Item]:
        if not isinstance(text, str) or not text.strip():
            return
        if route is not self.main and route.sent is None:
            route.sent = self._agent_session(route)
            yield route.sent
            if route.resumed_at is not None:
                # Read on from a cursor: what this subagent had from here on (a half-written
                # last line) is replaced by what follows.
                yield Partial(session=route.counter.session, from_seq=route.resumed_at)
        event = route.counter.make(kind, origin, text, **extra)
        if event is not None:
            yield event

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            return
        kind = line.get("type")
        if not isinstance(kind, str):
            self.unknown.saw(kind)
            return
        if kind in _BOOKKEEPING or kind.startswith("model."):
            return  # model.* records are compaction snapshots that repeat the conversation
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.unknown.saw(kind)
            return
        agent_id = str_or_none(line.get("agentId"))
        if agent_id is not None:
            yield from self._agent(agent_id)
            route = self.agents[agent_id]
        else:
            yield from self._main()
            assert self.main is not None
            route = self.main
        data = line.get("data")
        ts = parse_ts(line.get("timestamp"))
        route.facts.observe_ts(ts)
        yield from handler(self, route, data if isinstance(data, dict) else {}, ts)

    # -- one record type each ----------------------------------------------------------

    def _session_start(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        facts = route.facts
        version = str_or_none(data.get("copilotVersion"))
        if version:
            self.unknown.version = version
            facts.agent_version = release(version) or facts.agent_version
        facts.observe_ts(parse_ts(data.get("startTime")))
        facts.model = str_or_none(data.get("selectedModel")) or facts.model
        context = data.get("context")
        if isinstance(context, dict):
            facts.cwd = str_or_none(context.get("cwd")) or facts.cwd
            facts.git_branch = str_or_none(context.get("branch")) or facts.git_branch
            facts.git_repo = str_or_none(context.get("repository")) or facts.git_repo
        return iter(())

    def _session_resume(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        facts = route.facts
        facts.model = str_or_none(data.get("selectedModel")) or facts.model
        context = data.get("context")
        if isinstance(context, dict):
            facts.cwd = facts.cwd or str_or_none(context.get("cwd"))
        return iter(())

    def _model_change(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        route.facts.model = str_or_none(data.get("newModel")) or route.facts.model
        return iter(())

    def _user_message(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        # data.content is what was typed; transformedContent repeats it with an injected date.
        text = data.get("content")
        # A subagent's task (source "agent-<session id>") was written by the agent that delegated
        # it. Other sources are not documented: a person's prompt must not be lost to a guess.
        by_agent = route is not self.main or (str_or_none(data.get("source")) or "").startswith("agent")
        yield from self._emit(route, "user", "provider" if by_agent else "human", text, ts=ts)

    def _assistant_message(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        route.facts.model = str_or_none(data.get("model")) or route.facts.model
        yield from self._emit(route, "reasoning", "agent", data.get("reasoningText"), ts=ts)
        yield from self._emit(route, "assistant", "agent", data.get("content"), ts=ts)
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else ():
            if not isinstance(request, dict):
                continue
            name = str_or_none(request.get("name"))
            yield from self._emit(
                route,
                "tool_call",
                "agent",
                render_call(name, request.get("arguments")),
                ts=ts,
                tool=name,
                call_id=str_or_none(request.get("toolCallId")),
            )

    def _tool_complete(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        result = data.get("result")
        text: Any = None
        if isinstance(result, dict):
            text = str_or_none(result.get("content")) or str_or_none(result.get("detailedContent"))
        elif isinstance(result, str):
            text = result
        if not text:
            error = data.get("error")
            text = str_or_none(error.get("message")) if isinstance(error, dict) else str_or_none(error)
        shell = data.get("shellExecution")
        exit_code = int_or_none(shell.get("exitCode")) if isinstance(shell, dict) else None
        # The ``task`` call's result is its subagent's report: the counter files it so (docs/json.md).
        yield from self._emit(
            route,
            "tool_result",
            "tool",
            text,
            ts=ts,
            call_id=str_or_none(data.get("toolCallId")),
            exit_code=exit_code,
            is_error=data.get("success") is False,
        )

    def _compaction(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        # The summary once, from here: checkpoints/NNN-*.md holds the same text.
        yield from self._emit(route, "meta", "provider", data.get("summaryContent"), ts=ts)

    def _usage(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        usage = data.get("usage")
        if isinstance(usage, dict):
            facts = route.facts
            tokens_in, tokens_out = int_or_none(usage.get("inputTokens")), int_or_none(usage.get("outputTokens"))
            if tokens_in is not None:
                facts.tokens_in = (facts.tokens_in or 0) + tokens_in
            if tokens_out is not None:
                facts.tokens_out = (facts.tokens_out or 0) + tokens_out
        return iter(())

    def _subagent_started(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        facts = route.facts
        # What the delegating agent called the task: the subagent session's title.
        facts.line_title = (
            str_or_none(data.get("agentDescription"))
            or str_or_none(data.get("agentDisplayName"))
            or str_or_none(data.get("agentName"))
            or facts.line_title
        )
        facts.model = str_or_none(data.get("model")) or facts.model
        return iter(())

    def _notice_record(self, route: _Route, data: dict[str, Any], ts: float | None) -> Iterator[Item]:
        yield from self._emit(route, "meta", "provider", data.get("message"), ts=ts)


_HANDLERS = {
    "session.start": _CopilotRead._session_start,
    "session.resume": _CopilotRead._session_resume,
    "session.model_change": _CopilotRead._model_change,
    "user.message": _CopilotRead._user_message,
    "assistant.message": _CopilotRead._assistant_message,
    "tool.execution_complete": _CopilotRead._tool_complete,
    "session.compaction_complete": _CopilotRead._compaction,
    "session.usage_record": _CopilotRead._usage,
    "subagent.started": _CopilotRead._subagent_started,
    "session.error": _CopilotRead._notice_record,
    "session.warning": _CopilotRead._notice_record,
}


# -- the legacy layout: history-session-state/<id>.json ---------------------------------------


def read_legacy(source: Source) -> Iterator[Item]:
    """One ``history-session-state/*.json`` document: ``sessionId``, ``startTime``/``endTime`` and
    OpenAI-style ``chatMessages`` (``user``/``assistant`` with ``tool_calls``/``tool``/``system``).
    Its ``timeline`` repeats the tool calls and is not read."""
    skipped: list[Notice] = []
    doc = read_json_streamed(source.path, "chatMessages", ("sessionId", "cwd", "startTime", "endTime"), notices=skipped)
    if isinstance(doc, Notice):
        yield doc
        return
    if not isinstance(doc, dict):
        yield Notice(source=source.path, reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)
        return
    yield from skipped
    path = Path(source.path)
    native = str_or_none(doc.get("sessionId")) or path.stem
    messages = doc.get("chatMessages")
    if not isinstance(messages, (list, StreamedArray)):
        yield Notice(source=source.path, reason="no chatMessages list: not a Copilot CLI session document")
        return
    facts = SessionFacts()
    facts.native_id = native
    facts.cwd = str_or_none(doc.get("cwd"))
    facts.observe_ts(parse_ts(doc.get("startTime")))
    facts.observe_ts(parse_ts(doc.get("endTime")))
    yield facts.session(PROVIDER, title=None, resume=resume_command(facts.cwd, native), source=source.path)
    counter = EventCounter(session_id(PROVIDER, native), 0)
    unknown = UnknownRecords(f"{LABEL} (history-session-state)")
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = join_text(message.get("content"))
        drafts: list[tuple[Kind, Origin, Any, dict[str, Any]]] = []
        if role == "user":
            drafts.append(("user", "human", text, {}))
        elif role == "assistant":
            drafts.append(("assistant", "agent", text, {}))
            for call in openai_tool_calls(message.get("tool_calls")):
                drafts.append(
                    (
                        "tool_call",
                        "agent",
                        render_call(call.name, call.arguments),
                        {"tool": call.name, "call_id": call.id},
                    )
                )
        elif role == "tool":
            drafts.append(("tool_result", "tool", text, {"call_id": str_or_none(message.get("tool_call_id"))}))
        elif role != "system":  # the system prompt is not indexed
            unknown.saw(role)
        for kind, origin, body, extra in drafts:
            if isinstance(body, str) and (event := counter.make(kind, origin, body, **extra)) is not None:
                yield event
    ended = list(stream_end(messages, source.path))
    yield from ended
    if any(n.fatal for n in ended):
        return
    if (notice := unknown.notice(source.path)) is not None:
        yield notice


# -- discovery -----------------------------------------------------------------------------------


def _session_logs(root: Path) -> Iterator[Source | Notice]:
    """``<root>/<session id>/events.jsonl`` for every session folder, in name order."""
    try:
        with os.scandir(root) as it:
            folders = sorted((e for e in it if e.is_dir()), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        yield Notice(source=str(root), reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)
        return
    found = 0
    for folder in folders:
        for item in walk_files(
            Path(folder.path),
            "events.jsonl",
            PROVIDER,
            match=lambda n: n == "events.jsonl",
            skip_dir=lambda _name: True,
        ):
            if isinstance(item, Source):
                found += 1
                item = with_side_file(item, Path(folder.path) / "workspace.yaml")  # a rename changes only that file
            yield item
    if folders and not found:
        yield Notice(
            source=str(root),
            reason=f"{len(folders)} session folder{'s' if len(folders) != 1 else ''} of "
            f"{LABEL}, none with an events.jsonl: nothing to index",
        )


class CopilotAdapter:
    """GitHub Copilot CLI sessions under ``$COPILOT_HOME`` (default ``~/.copilot``)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_home("copilot", env)
        assert home is not None
        return [home / "session-state", home / "history-session-state"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        state_root, legacy_root = self.roots(env)
        yield from _session_logs(state_root)
        for item in walk_files(legacy_root, ".json", self.name, append_only=False, skip_dir=lambda _name: True):
            if isinstance(item, Source) and (state_root / Path(item.path).stem / "events.jsonl").exists():
                continue  # the same session in the current layout: read there, not twice
            yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if source.path.endswith(".json"):
            return read_legacy(source)
        return _CopilotRead(source, cursor).run()


ADAPTER = CopilotAdapter()
