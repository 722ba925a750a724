"""Reading a Codex CLI rollout (``$CODEX_HOME/{sessions,archived_sessions}/**/rollout-*.jsonl``) into Sessions and Events.

Owns everything Voyager knows about Codex rollouts (see docs/agents.md): the current
``{timestamp, type, payload}`` envelope and the early-2025 format without one, which
records are the conversation and which only repeat it, and who wrote what.

Codex writes most things twice: a ``response_item`` (what the model saw) and an
``event_msg`` (what the UI showed). The rules that keep counts honest:

* a person's prompt comes from ``event_msg.user_message``; ``response_item`` user
  messages are then either injected context (meta) or duplicates and replays
  (skipped). Rollouts that never wrote a ``user_message`` event (older ones) fall
  back to the ``response_item`` user messages;
* assistant text and reasoning come from ``response_item``; ``agent_message`` and
  ``agent_reasoning`` events are skipped;
* a tool's exit code is taken only from what Codex recorded with the output.

One rollout is one session. Reading is streaming and read-only, like every adapter.

The adapter (``codex``: where the rollouts are, the stat pass) imports this module only to read one: a
refresh that finds nothing changed never loads the format's Structs and the reading kit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    cached_by_stat,
    compact_json,
    int_or_none,
    join_text,
    parse_ts,
    release,
    arg,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft
from voyager_sessions.ingest.adapters.base import Cursor, Item, Source
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsonl import Record, decode_json, typed_decoder
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, tool_call_text
from voyager_sessions.core.model import Session

PROVIDER = "codex"

#: User-role text that starts like this was put there by Codex (environment, AGENTS.md,
#: instructions, notes about aborted turns), not typed by a person.
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<developer_instructions>",
    "<permissions instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)

#: A ``user_message`` event as serde writes it; the quotes make a match inside a JSON
#: string impossible (there they are escaped), so a byte search is exact enough.
_USER_MESSAGE_EVENT = re.compile(rb'"type"\s*:\s*"user_message"')
_UUID_IN_NAME = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")
_EXIT_CODE_LINE = re.compile(r"^Exit code: (-?\d+)")
_PROCESS_EXITED = re.compile(r"^Process exited with code (-?\d+)\s*$", re.M)
_CWD_TAG = re.compile(r"<cwd>([^<\n]+)</cwd>")

_decode = decode_json
#: Codex's shell tools beside the ones every adapter knows (``shell``, ``exec_command``, ``local_shell``).
SHELL_TOOLS = frozenset({"container.exec", "shell_command", "unified_exec"})

#: Envelope types that carry no conversation (usage records, world state): skipped without
#: a word. Any other unknown type is counted and named.
_NOT_CONVERSATION = frozenset({"token_usage_record", "world_state"})


#: How Codex hands a subagent's end (its status and last message) to the model: a harness-written user message.
_SUBAGENT_NOTIFICATION = "<subagent_notification>"


class _Item(msgspec.Struct):
    """A record's ``payload`` as this adapter reads it: a response item, an event, a session's or a turn's
    context (every field read, ``Any``: the reader checks types itself). Decoded straight into a Struct, so
    the fields it does not name (instructions, sandbox policies, usage breakdowns) are skipped unbuilt and no
    dict is made for it. Keep in step with ``CodexRead``."""

    type: Any = None
    role: Any = None
    content: Any = None
    summary: Any = None
    name: Any = None
    #: An MCP tool's server as the model was offered it (``mcp__voyager``); the function's ``name`` is bare.
    namespace: Any = None
    arguments: Any = None
    call_id: Any = None
    input: Any = None
    action: Any = None
    output: Any = None
    id: Any = None
    internal_chat_message_metadata_passthrough: Any = None
    message: Any = None
    kind: Any = None
    info: Any = None
    cli_version: Any = None
    timestamp: Any = None
    cwd: Any = None
    git: Any = None
    model: Any = None


class _Line(_Item):
    """One rollout line: the ``{timestamp, type, payload}`` envelope, or (early 2025) a bare item or the
    session's head, whose fields are the item's. ``UNSET`` tells a field that is absent from one that is
    null, as the format needs: an envelope is a line *with* ``payload``."""

    type: Any = UNSET
    payload: _Item | None | UnsetType = UNSET
    record_type: Any = UNSET


def _fitted(value: Any) -> Any:
    """A line the typed decode refused, decoded leniently (``value``), as a :class:`_Line`: a ``payload`` that is
    not an object reads as null (the reader skips both alike); what is not an object stays as it is."""
    if not isinstance(value, dict):
        return value
    if "payload" in value and not isinstance(value["payload"], dict):
        value = {**value, "payload": None}
    return msgspec.convert(value, _Line)


def _given(value: Any) -> Any:
    """``value``, or None where the line did not have the field (what ``dict.get`` gave)."""
    return None if value is UNSET else value


def is_injected(text: str) -> bool:
    """True when user-role text is context Codex injected rather than a person's prompt."""
    return text.lstrip().startswith(_INJECTED_PREFIXES)


def render_call(tool: str | None, arguments: Any) -> str:
    """A function call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md).

    Codex's shell tools pass ``command`` as an argv (``["bash", "-lc", "…"]``) or a string, or
    ``cmd`` in newer versions; the one rule reads all three."""
    return tool_call_text(tool, arguments, SHELL_TOOLS)


def parse_output(raw: Any) -> tuple[str, int | None]:
    """Text and exit code of a tool output, as Codex recorded it.

    The output is a string that is often JSON ``{"output", "metadata": {"exit_code"}}``;
    plain text may begin ``Exit code: N`` (or carry ``Process exited with code N`` in
    its header). Anything else has no exit code: ``None``, never a guess.
    """
    if isinstance(raw, list):
        return join_text(raw, ("input_text", "output_text", "text")), None
    if isinstance(raw, dict):
        raw = raw.get("content", raw.get("output", ""))
        if not isinstance(raw, str):
            return compact_json(raw), None
    if not isinstance(raw, str):
        return "", None
    stripped = raw.lstrip()
    if stripped.startswith("{"):
        try:
            doc = _decode(stripped)
        except (msgspec.DecodeError, UnicodeDecodeError):
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("output"), str):
            meta = doc.get("metadata")
            return doc["output"], int_or_none(meta.get("exit_code")) if isinstance(meta, dict) else None
    m = _EXIT_CODE_LINE.match(stripped)
    if m:
        return raw, int(m.group(1))
    header = raw.split("\nOutput:", 1)[0] if "\nOutput:" in raw else ""
    m = _PROCESS_EXITED.search(header)
    if m:
        return raw, int(m.group(1))
    return raw, None


def has_user_message_event(path: str, start: int) -> bool:
    """Whether ``path`` holds a ``user_message`` event at or after byte ``start`` (a chunked byte search).

    Decides, before the first prompt is emitted, whether prompts come from events
    (current rollouts) or from ``response_item`` messages (rollouts that predate the
    events). In a current rollout the event follows its prompt within a few lines, so
    the search stops in the first chunk.
    """
    try:
        with open_regular(path) as fh:
            fh.seek(start)
            tail = b""
            while chunk := fh.read(1 << 20):
                if _USER_MESSAGE_EVENT.search(tail + chunk):
                    return True
                tail = chunk[-64:]
    except OSError:
        pass
    return False


def _provenances(item: _Item) -> list[str | None]:
    """The provenance type (``user``, ``harness`` …) of each content item of a message, where Codex recorded it."""
    meta = item.internal_chat_message_metadata_passthrough
    entries = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    out: list[str | None] = []
    for entry in entries if isinstance(entries, list) else ():
        prov = entry.get("provenance") if isinstance(entry, dict) else None
        out.append(str_or_none(prov.get("type")) if isinstance(prov, dict) else None)
    return out


@lru_cache(maxsize=1024)
def session_index_of(folder: str) -> str | None:
    """``$CODEX_HOME/session_index.jsonl`` for a rollout in ``folder``: beside the ``sessions``/``archived_sessions``
    dir above it (None when there is none). Strings, not ``pathlib``, and once a folder: a first index reads
    thousands of rollouts from the same few dated folders, and walking a Path's parents cost ~60 µs a rollout."""
    head = folder
    while True:
        parent, name = os.path.split(head)
        if name in ("sessions", "archived_sessions"):
            return os.path.join(parent, "session_index.jsonl")
        if parent == head:
            return None
        head = parent


def _load_session_index(path: str) -> dict[str, str]:
    names: dict[str, str] = {}
    with open_regular(path) as fh:  # a side file too: a FIFO of its name must not hang the scan
        for line in fh:
            try:
                entry = _decode(line)
            except (msgspec.DecodeError, UnicodeDecodeError):
                continue  # a half-written last line or junk: the rest still counts
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                name = str_or_none(entry.get("thread_name"))
                if name:
                    names[entry["id"]] = name  # later lines are later renames
    return names


def index_title(index_file: str | None, native_id: str) -> str | None:
    """The thread name ``$CODEX_HOME/session_index.jsonl`` (``index_file``, see :func:`session_index_of`) gives a
    session, if any (absence is fine)."""
    if index_file is None:
        return None
    names: dict[str, str] = cached_by_stat(index_file, _load_session_index, {})
    return names.get(native_id)


def _qualified(name: str | None, namespace: str | None) -> str | None:
    """A call's tool as Codex names it: an MCP tool is offered to the model as function ``name`` inside namespace
    ``mcp__<server>`` (0.171.0 records both), and Codex's own name for it is ``mcp__<server>__<name>``; the bare
    name alone (``search``) would say neither which server answered nor that it was not a built-in tool."""
    if name and namespace:
        return f"{namespace}__{name}"
    return name


class CodexRead(JsonlSessionRead):
    """One pass over one rollout (or its appended tail when resuming)."""

    provider = PROVIDER
    #: What the agent is called in notices, and the program its ``resume`` runs (TRAE CLI's reader changes both).
    label: ClassVar[str] = "Codex"
    binary: ClassVar[str] = "codex"
    decode = staticmethod(typed_decoder(_Line, _fitted))

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, self.label)
        folder, name = os.path.split(source.path)
        m = _UUID_IN_NAME.search(name)
        self.name_id = m.group(1) if m else os.path.splitext(name)[0]
        self.index_file = session_index_of(folder)
        self._resume: tuple[str, str | None] | None = None  # (native id, its command): a read describes it twice
        #: Where prompts come from: "event" (user_message events), "response" (older
        #: rollouts without them), or None until the first prompt forces a decision.
        self.prompts: str | None = state.get("prompts")
        self.record_start = 0

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        if self._resume is None or self._resume[0] != native:
            self._resume = (native, resume_in(None, self.binary, "resume", arg(native)))
        return self.facts.session(
            self.provider,
            title=index_title(self.index_file, native),
            title_source="user",  # session_index.jsonl holds the names people give threads
            resume=self._resume[1],
            source=self.path,
        )

    def _establish(self, native_id: str | None) -> Session | None:
        """Fix the session id (from session_meta, else the file name); returns the Session to yield first."""
        if self.counter is not None:
            return None
        return self._begin(native_id or self.name_id)

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        if self.prompts is not None:
            state["prompts"] = self.prompts
        return state

    def _record(self, record: Record) -> Iterator[Item]:
        self.record_start = record.start
        if type(record.value) is _Line:
            yield from self._numbered(self._line(record.value), self.name_id)

    # -- one line ----------------------------------------------------------------------

    def _line(self, line: _Line) -> Iterator[Draft | Session]:
        payload = line.payload
        if payload is not UNSET:
            ts = parse_ts(line.timestamp)
            self.facts.observe_ts(ts)
            if payload is None:
                return
            kind = line.type
            if kind == "response_item":
                yield from self._item(payload, ts)
            elif kind == "event_msg":
                yield from self._event_msg(payload, ts)
            elif kind == "turn_context":
                self.facts.model = str_or_none(payload.model) or self.facts.model
                self.facts.cwd = self.facts.cwd or str_or_none(payload.cwd)
            elif kind == "session_meta":
                yield from self._meta(payload, ts)
            elif kind == "compacted":
                yield ("meta", "provider", payload.message, {"ts": ts})
            elif not (isinstance(kind, str) and kind in _NOT_CONVERSATION):  # a list or dict kind is unhashable
                self.unknown.saw(_given(kind))
            return
        if line.type is not UNSET:
            # Older rollouts: bare response items, without timestamps.
            yield from self._item(line, None)
        elif line.record_type is UNSET and isinstance(line.id, str):
            # Older rollouts open with {id, timestamp, instructions}.
            yield from self._meta(line, None)

    def _meta(self, meta: _Item, ts: float | None) -> Iterator[Session]:
        facts = self.facts
        version = str_or_none(meta.cli_version)
        if version:
            self.unknown.version = version
            facts.agent_version = release(version) or facts.agent_version
        started = parse_ts(meta.timestamp)
        facts.observe_ts(started)
        # The first session_meta names the session; any later one only fills gaps.
        facts.cwd = facts.cwd or str_or_none(meta.cwd)
        git = meta.git
        if isinstance(git, dict):
            facts.git_branch = facts.git_branch or str_or_none(git.get("branch"))
            facts.git_repo = facts.git_repo or str_or_none(git.get("repository_url"))
        first = self._establish(str_or_none(meta.id))
        if first is not None:
            yield first

    def _item(self, item: _Item, ts: float | None) -> Iterator[Draft]:
        itype = item.type
        if itype == "message":
            yield from self._message(item, ts)
        elif itype == "reasoning":
            text = join_text(item.summary, ("summary_text",), "\n\n")
            if not text:
                text = join_text(item.content, ("reasoning_text", "text"), "\n\n")
            yield ("reasoning", "agent", text, {"ts": ts})
        elif itype == "function_call":
            name = _qualified(str_or_none(item.name), str_or_none(item.namespace))
            yield (
                "tool_call",
                "agent",
                render_call(name, item.arguments),
                {"ts": ts, "tool": name, "call_id": str_or_none(item.call_id)},
            )
        elif itype == "custom_tool_call":
            name = str_or_none(item.name)
            yield (
                "tool_call",
                "agent",
                render_call(name, item.input),
                {"ts": ts, "tool": name, "call_id": str_or_none(item.call_id)},
            )
        elif itype == "local_shell_call":
            yield (
                "tool_call",
                "agent",
                render_call("local_shell", item.action),
                {
                    "ts": ts,
                    "tool": "local_shell",
                    "call_id": str_or_none(item.call_id) or str_or_none(item.id),
                },
            )
        elif itype in ("function_call_output", "custom_tool_call_output"):
            text, exit_code = parse_output(item.output)
            yield (
                "tool_result",
                "tool",
                text,
                {"ts": ts, "call_id": str_or_none(item.call_id), "exit_code": exit_code},
            )
        elif itype == "web_search_call":
            action = item.action
            query = action.get("query") if isinstance(action, dict) else None
            text = query if isinstance(query, str) and query.strip() else render_call("web_search", action)
            yield ("tool_call", "agent", text, {"ts": ts, "tool": "web_search", "call_id": str_or_none(item.id)})

    def _message(self, item: _Item, ts: float | None) -> Iterator[Draft]:
        role = item.role
        content = item.content
        if role == "assistant":
            yield ("assistant", "agent", join_text(content, ("output_text", "text")), {"ts": ts})
        elif role in ("developer", "system"):
            yield ("meta", "provider", join_text(content, ("input_text", "output_text", "text")), {"ts": ts})
        elif role == "user":
            # Each input_text on its own: context and prompt can share one message.
            if isinstance(content, str):
                blocks = [content]
            elif isinstance(content, list):
                blocks = content
            else:
                blocks = []
            provenance = _provenances(item)
            for i, block in enumerate(blocks):
                if isinstance(block, str):
                    text = block
                elif (
                    isinstance(block, dict)
                    and block.get("type") in ("input_text", "text")
                    and isinstance(block.get("text"), str)
                ):
                    text = block["text"]
                else:
                    continue
                # Codex 0.16x says who wrote each piece (user / harness); older rollouts only tell by their tags.
                who = provenance[i] if i < len(provenance) else None
                if who not in (None, "user") or (who is None and is_injected(text)):
                    if self.facts.cwd is None and (m := _CWD_TAG.search(text)):
                        self.facts.cwd = m.group(1).strip()
                    if text.lstrip().startswith(_SUBAGENT_NOTIFICATION):
                        # A subagent's end, with its last message: its report (docs/json.md); Codex names no call.
                        yield (*SUBAGENT_REPORT, text, {"ts": ts})
                    else:
                        yield ("meta", "provider", text, {"ts": ts})
                    continue
                if not text.strip():
                    continue
                if self.prompts is None:
                    self.prompts = "event" if has_user_message_event(self.path, self.record_start) else "response"
                if self.prompts == "response":
                    yield ("user", "human", text, {"ts": ts})
                # else: the user_message event carries this prompt (or this is a replay).

    def _event_msg(self, payload: _Item, ts: float | None) -> Iterator[Draft]:
        etype = payload.type
        if etype == "user_message":
            text = payload.message
            kind = payload.kind
            if not isinstance(text, str) or (kind is not None and kind != "plain") or is_injected(text):
                return  # injected context: its response_item copy is the meta event
            if self.prompts == "response":
                # An earlier (incremental) read took prompts from response items before
                # this event was written: it repeats a prompt already indexed.
                return
            self.prompts = "event"
            yield ("user", "human", text, {"ts": ts})
        elif etype == "token_count":
            info = payload.info
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(total, dict):
                # Totals are cumulative: the latest one describes the whole session.
                tokens_in = int_or_none(total.get("input_tokens"))
                tokens_out = int_or_none(total.get("output_tokens"))
                if tokens_in is not None:
                    self.facts.tokens_in = tokens_in
                if tokens_out is not None:
                    self.facts.tokens_out = tokens_out
        # agent_message / agent_reasoning repeat response items; exec_command_end repeats
        # the function_call_output; the rest is UI state. All skipped.
