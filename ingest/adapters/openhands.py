"""The OpenHands adapter: the CLI's (software-agent-sdk) conversations, and the V0 sessions before them.

A V1 conversation is a folder ``<conversations>/<uuid hex>/``: ``base_state.json`` (the
conversation's state, rewritten in place: working dir, model, token stats) and
``events/event-<5+ digit number>-<event uuid>.json``, one event a file, written once, in
number order. The folder is one source; it grows by new files, so a re-read resumes
after the last file read whole (``Partial`` + only the unseen files, see
``ingest/eventdir.py``). A subagent's conversation (the task and delegate tools) lives in
``<parent conversation>/subagents/<uuid hex>/`` with the same shape; its session's
``parent`` is the enclosing conversation. V0 sessions (``<persistence dir>/sessions/<id>/``,
``events/<n>.json`` + ``metadata.json``) are read by ``_openhands_v0``.

Event kinds (``kind``): ``MessageEvent`` (``source`` user: a person's prompt; agent: the
reply; ``extended_content``: context OpenHands added, ``meta``), ``ActionEvent`` (``thought``:
text beside the call, ``reasoning_content``/``thinking_blocks``: reasoning, ``action``: the
call, with the CJK of ``tool_call.arguments`` already decoded; ``FinishAction.message`` is
the reply and ``ThinkAction.thought`` reasoning), ``ObservationEvent`` (the result;
``observation.exit_code``, where -1 means "still running", not an exit code),
``UserRejectObservation`` / ``AgentErrorEvent`` (failed results), ``Condensation``
(its summary is ``meta``). ``SystemPromptEvent`` (the system prompt and tool list, the
same in every conversation) and bookkeeping events are skipped.

Timestamps are ISO without a zone, written with ``datetime.now()``: read as this
machine's local time (the machine that wrote them, in the normal case).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    SessionFacts,
    UnknownRecords,
    as_dict,
    compact_json,
    int_or_none,
    join_text,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.adapters._openhands_common import (
    EVENTS,
    LABEL,
    PROVIDER,
    Mapper,
    dashed,
    is_hex32,
    resume_command,
)
from voyager_sessions.ingest.adapters._openhands_v0 import is_v0, read_v0, v0_root, v0_sources
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.eventdir import event_files, event_folder_fingerprint, read_event_folder
from voyager_sessions.ingest.files import kind_of, subdirs
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Session, session_id

BASE_STATE = "base_state.json"
SUBAGENTS = "subagents"
#: The writer pads the number to five digits but does not cap it.
V1_EVENT = re.compile(r"event-(\d{5,})-[0-9A-Fa-f-]{8,}\.json")

#: Events that are not conversation: state changes, streaming, logs, hooks, requests. Skipped silently.
_BOOKKEEPING = frozenset(
    {
        "SystemPromptEvent",
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "InterruptEvent",
        "CondensationRequest",
        "TokenEvent",
        "StreamingDeltaEvent",
        "LLMCompletionLogEvent",
        "HookExecutionEvent",
    }
)
#: Observations that only echo their action (the finish message, a logged thought): the action is indexed.
_ECHOES = frozenset({"FinishObservation", "ThinkObservation"})
#: ACP tool call states after which the call has its result (earlier updates would repeat it).
_ACP_DONE = frozenset({"completed", "failed", "error", "cancelled"})

#: OpenHands' shell tool by its action's kind, when a call names no tool (``terminal`` and
#: ``execute_bash`` are shell tools to every adapter).
_SHELL_TOOLS = frozenset({"ExecuteBashAction", "TerminalAction", "CmdRunAction"})


class V1Mapper(Mapper):
    """One V1 event file's object to events."""

    def __init__(self, counter: EventCounter, unknown: UnknownRecords, *, subagent: bool) -> None:
        super().__init__(counter, unknown)
        self.subagent = subagent

    def events(self, doc: dict[str, Any]) -> Iterator[Event]:
        kind = doc.get("kind")
        ts = parse_ts(doc.get("timestamp"), naive="local")
        if kind == "MessageEvent":
            yield from self._message(doc, ts)
        elif kind == "ActionEvent":
            yield from self._action(doc, ts)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            yield from self._result(doc, ts)
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            yield from self._one("meta", "provider", doc.get("summary"), ts)
        elif kind == "ConversationErrorEvent":
            text = ": ".join(s for s in (str_or_none(doc.get("code")), str_or_none(doc.get("detail"))) if s)
            yield from self._one("meta", "provider", text, ts, is_error=True)
        elif kind == "ACPToolCallEvent":
            yield from self._acp(doc, ts)
        elif not (isinstance(kind, str) and kind in _BOOKKEEPING):  # a list or dict kind is unhashable
            self.unknown.saw(kind if isinstance(kind, str) else "event without a kind")

    def _reasoning(self, doc: dict[str, Any], ts: float | None) -> Iterator[Event]:
        parts = [doc.get("reasoning_content")]
        blocks = doc.get("thinking_blocks")
        parts += [b.get("thinking") for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        text = "\n".join(p for p in parts if isinstance(p, str) and p.strip())
        yield from self._one("reasoning", "agent", text, ts)

    def _message(self, doc: dict[str, Any], ts: float | None) -> Iterator[Event]:
        msg = as_dict(doc.get("llm_message"))
        text = join_text(msg.get("content"))
        source = doc.get("source")
        if source == "user":
            # A subagent's "user" is the agent that delegated to it; a message an agent sent in a multi-agent
            # run names its sender. Neither is a person typing.
            person = not self.subagent and not str_or_none(doc.get("sender"))
            yield from self._one("user", "human" if person else "provider", text, ts)
        elif source == "agent":
            reasoning = {
                "reasoning_content": msg.get("reasoning_content"),
                "thinking_blocks": msg.get("thinking_blocks"),
            }
            yield from self._reasoning(reasoning, ts)
            yield from self._one("assistant", "agent", text, ts)
        else:
            yield from self._one("meta", "provider", text, ts)
        # Context OpenHands added to the message (skills, agent context): the model saw it, nobody typed it.
        yield from self._one("meta", "provider", join_text(doc.get("extended_content")), ts)

    def _action(self, doc: dict[str, Any], ts: float | None) -> Iterator[Event]:
        yield from self._reasoning(doc, ts)
        yield from self._one("assistant", "agent", join_text(doc.get("thought")), ts)
        action = doc.get("action")  # missing when OpenHands could not run the call (then tool_call says it)
        said = as_dict(action)
        akind = said.get("kind")
        if akind == "FinishAction":
            yield from self._one("assistant", "agent", said.get("message"), ts)
            return
        if akind == "ThinkAction":
            yield from self._one("reasoning", "agent", said.get("thought"), ts)
            return
        tool = str_or_none(doc.get("tool_name"))
        call_id = str_or_none(doc.get("tool_call_id"))
        yield from self._one(
            "tool_call", "agent", _call_text(action, doc.get("tool_call"), tool), ts, tool=tool, call_id=call_id
        )

    def _result(self, doc: dict[str, Any], ts: float | None) -> Iterator[Event]:
        tool = str_or_none(doc.get("tool_name"))
        call_id = str_or_none(doc.get("tool_call_id"))
        kind = doc.get("kind")
        if kind == "UserRejectObservation":
            reason = str_or_none(doc.get("rejection_reason")) or "rejected"
            yield from self._one(
                "tool_result", "tool", f"Action rejected: {reason}", ts, tool=tool, call_id=call_id, is_error=True
            )
            return
        if kind == "AgentErrorEvent":
            yield from self._one("tool_result", "tool", doc.get("error"), ts, tool=tool, call_id=call_id, is_error=True)
            return
        obs = as_dict(doc.get("observation"))
        if isinstance(obs.get("kind"), str) and obs["kind"] in _ECHOES:  # a list or dict kind is unhashable
            return
        exit_code = int_or_none(obs.get("exit_code"))
        if exit_code is None and "exit_code" not in obs:
            exit_code = int_or_none(as_dict(obs.get("metadata")).get("exit_code"))
        if exit_code == -1:
            exit_code = None  # OpenHands' "still running after the soft timeout", not an exit status
        text = join_text(obs.get("content"))
        yield from self._one(
            "tool_result",
            "tool",
            text,
            ts,
            tool=tool,
            call_id=call_id,
            exit_code=exit_code,
            is_error=obs.get("is_error") is True,
        )

    def _acp(self, doc: dict[str, Any], ts: float | None) -> Iterator[Event]:
        if not (isinstance(doc.get("status"), str) and doc["status"] in _ACP_DONE):
            return  # a progress update: the finished call is recorded again with its result
        tool = str_or_none(doc.get("tool_kind")) or str_or_none(doc.get("title"))
        call_id = str_or_none(doc.get("tool_call_id"))
        raw_in = doc.get("raw_input")
        # No input recorded: the call's title stands for its arguments.
        call = tool_call_text(tool, raw_in if raw_in is not None else doc.get("title"), _SHELL_TOOLS)
        yield from self._one("tool_call", "agent", call, ts, tool=tool, call_id=call_id)
        raw_out = doc.get("raw_output")
        out = (
            raw_out
            if isinstance(raw_out, str)
            else (compact_json(raw_out) if raw_out is not None else join_text(doc.get("content")))
        )
        yield from self._one(
            "tool_result", "tool", out, ts, tool=tool, call_id=call_id, is_error=doc.get("is_error") is True
        )


def _call_text(action: Any, tool_call: Any, tool: str | None = None) -> str:
    """A tool call's text by the one rule (``tool_call_text``): the action's fields but its ``kind`` and
    the empty ones (the parsed call, CJK as text); ``tool_call.arguments`` (the same call as a JSON string
    with ``\\uXXXX`` escapes) only when the action is missing (a call OpenHands could not run)."""
    if isinstance(action, dict):
        fields = {k: v for k, v in action.items() if k != "kind" and v not in (None, "", [], {})}
        return tool_call_text(tool or str_or_none(action.get("kind")), fields, _SHELL_TOOLS)
    return tool_call_text(tool, as_dict(tool_call).get("arguments"), _SHELL_TOOLS)


# ---------------------------------------------------------------------------
# Reading a V1 conversation
# ---------------------------------------------------------------------------


def _v1_facts(folder: Path, base: dict[str, Any]) -> SessionFacts:
    facts = SessionFacts()
    facts.native_id = dashed(folder.name) if is_hex32(folder.name) else (str_or_none(base.get("id")) or folder.name)
    facts.cwd = str_or_none(as_dict(base.get("workspace")).get("working_dir"))
    facts.model = str_or_none(as_dict(as_dict(base.get("agent")).get("llm")).get("model"))
    tokens_in = tokens_out = None
    for usage in as_dict(as_dict(base.get("stats")).get("usage_to_metrics")).values():
        acc = as_dict(as_dict(usage).get("accumulated_token_usage"))
        if (n := int_or_none(acc.get("prompt_tokens"))) is not None:
            tokens_in = (tokens_in or 0) + n
        if (n := int_or_none(acc.get("completion_tokens"))) is not None:
            tokens_out = (tokens_out or 0) + n
    facts.tokens_in, facts.tokens_out = tokens_in, tokens_out
    if folder.parent.name == SUBAGENTS:
        facts.parent = session_id(PROVIDER, dashed(folder.parent.parent.name))
    return facts


def read_v1(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    folder = Path(source.path)
    base: dict[str, Any] = {}
    if os.path.exists(folder / BASE_STATE):
        got = read_json_object(folder / BASE_STATE, fatal=False)
        if isinstance(got, Notice):
            yield got  # rewritten in place: maybe caught half-written; the events are still readable
        else:
            base = got
    facts = _v1_facts(folder, base)
    subagent = facts.parent is not None

    def make_session(f: SessionFacts) -> Session:
        # A subagent's conversation is reached through the one that delegated to it.
        target = f.parent.split(":", 1)[1] if f.parent else (f.native_id or "")
        return f.session(PROVIDER, title=None, resume=resume_command(f.cwd, target), source=source.path)

    files = event_files(folder / EVENTS, V1_EVENT)
    unknown = UnknownRecords(LABEL)
    yield from read_event_folder(
        source,
        cursor,
        files,
        facts,
        make_session,
        lambda counter: V1Mapper(counter, unknown, subagent=subagent),
        unknown,
    )


# ---------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------


def v1_sources(root: Path, *, depth: int = 0) -> Iterator[Source | Notice]:
    """A Source per conversation folder under ``root`` (and per subagent conversation inside one)."""
    for folder in subdirs(root):
        if isinstance(folder, Notice):
            yield folder
            continue
        has_events = os.path.isdir(folder / EVENTS)
        if not has_events and not os.path.exists(folder / BASE_STATE):
            if is_hex32(folder.name):
                yield Notice(
                    source=str(folder),
                    reason=f"no {BASE_STATE} and no {EVENTS}/: not a conversation Voyager can read (yet); skipped",
                )
            continue
        base = folder / BASE_STATE
        if os.path.exists(base) and not os.path.isfile(base):
            yield Notice(source=str(base), reason=f"{kind_of(os.stat(base).st_mode)}, not a regular file; skipped")
            continue
        files = event_files(folder / EVENTS, V1_EVENT)
        try:
            fp = event_folder_fingerprint(folder, [base], folder / EVENTS, files)
        except OSError:
            continue
        yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)
        if depth < 4 and os.path.isdir(folder / SUBAGENTS):
            yield from v1_sources(folder / SUBAGENTS, depth=depth + 1)


def probe(path: str | os.PathLike[str]) -> str:
    """The layout of an OpenHands source, for ``voyager doctor``."""
    p = Path(path)
    if os.path.exists(p / BASE_STATE) or event_files(p / EVENTS, V1_EVENT):
        return "v1-conversation"
    return "v0-session" if is_v0(p) else "unknown-schema"


class OpenHandsAdapter:
    """OpenHands CLI conversations (``~/.openhands/conversations``) and V0 sessions (``~/.openhands/sessions``)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [manifest.agent_dir("openhands.conversations", env), v0_root(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        conversations, sessions = self.roots(env)
        yield from v1_sources(conversations)
        yield from v0_sources(sessions)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        folder = Path(source.path)
        if not os.path.exists(folder / BASE_STATE) and is_v0(folder):
            return read_v0(source, cursor)
        return read_v1(source, cursor)


ADAPTER = OpenHandsAdapter()
