"""The Factory Droid adapter: ``~/.factory/sessions/<cwd slug>/<id>.jsonl`` to Sessions and Events.

Owns what Voyager knows about Droid's session store (docs/agents.md, observed on 0.225.2).
One append-only JSONL file is one session: a ``session_start`` line (id, title, cwd; no
timestamp), then ``message`` lines holding an Anthropic-style message (``role``,
``content`` blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``). Beside it,
``<id>.settings.json`` gives the model and token usage (its ``.bak`` copy is ignored).
The rules:

* a person's prompt is ``role: user`` text; a message marked ``visibility: "llm_only"``
  (Droid's ``context-<id>`` message of ``<system-reminder>`` blocks) is injected context;
* reasoning is stored twice, as a ``thinking`` block and as ``chatCompletionReasoningContent``:
  only the block is indexed;
* a tool's exit code exists only as the text ``[Process exited with code N]`` in its output.

Documented by peers, not observed here: ``droid exec --output-format stream-json`` logs
that people redirect under ``~/.factory/projects/`` (``system``, ``message``,
``tool_call``, ``tool_result``, ``completion``, ``error`` records). They are read with the
same rules; a log whose session the store also holds is a copy and is not read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    cached_by_stat,
    compact_json,
    epoch,
    int_or_none,
    join_text,
    parse_ts,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import open_regular, walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import BadLine, Record, decode_line
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Kind, Origin, Session

PROVIDER = "droid"
LABEL = "Factory Droid"

#: Droid's shell tool; its ``input.command`` is what a person searches for.
SHELL_TOOLS = frozenset({"Execute"})
_EXIT_CODE = re.compile(r"\[Process exited with code (-?\d+)\]")
#: User text that begins like this was put there by Droid, not typed.
_INJECTED_PREFIXES = ("<system-reminder>", "<system-notification>")
#: Record types that carry nothing to index (turn outcomes, todo-list snapshots): skipped
#: without a word. Any other unknown type is named.
_BOOKKEEPING = frozenset({"agent_turn_outcome", "todo_state"})


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``droid --resume <id>`` (Droid fetches the session from Factory's servers), run in the session's directory."""
    return resume_in(cwd, "droid", opt("--resume", native_id))


def exit_code_in(text: str) -> int | None:
    """The exit code Droid appended to a tool's output (``[Process exited with code N]``), if any."""
    found = _EXIT_CODE.findall(text)
    return int(found[-1]) if found else None


def render_tool_input(name: str | None, tool_input: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, tool_input, SHELL_TOOLS)


def _text_of(value: Any) -> str:
    """The text of a tool output: a string, text blocks, or anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return join_text(value)
    return "" if value is None else compact_json(value)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _copies_prompt(title: str, prompt: str) -> bool:
    """True when ``title`` is the first prompt, perhaps cut short (what Droid stores until someone renames it)."""
    t = " ".join(title.split()).rstrip("…").rstrip(".").strip()
    return bool(t) and " ".join(prompt.split()).startswith(t)


class _Settings(msgspec.Struct):
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None


def _load_settings(path: str) -> _Settings:
    doc = read_json_object(path, fatal=False)
    if isinstance(doc, Notice):
        return _Settings()
    usage = doc.get("tokenUsage")
    tokens_in = tokens_out = None
    if isinstance(usage, dict):
        parts = [int_or_none(usage.get(k)) for k in ("inputTokens", "cacheCreationTokens", "cacheReadTokens")]
        if parts[0] is not None:
            tokens_in = sum(p or 0 for p in parts)
        tokens_out = int_or_none(usage.get("outputTokens"))
    return _Settings(model=str_or_none(doc.get("model")), tokens_in=tokens_in, tokens_out=tokens_out)


def settings_path(log: Path) -> Path:
    return log.with_name(log.name[: -len(".jsonl")] + ".settings.json")


class _DroidRead(JsonlSessionRead):
    """One pass over one Droid JSONL file (or its appended tail when resuming)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        state = self._start(source.path, cursor, LABEL)
        p = Path(source.path)
        self.stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
        self.title: str | None = str_or_none(state.get("title"))
        self.title_by_user = state.get("title_by_user") is True
        #: Whether the title is the first prompt (None until the first prompt is seen).
        self.title_is_prompt: bool | None = (
            state.get("title_is_prompt") if isinstance(state.get("title_is_prompt"), bool) else None
        )
        self.first_prompt_seen = state.get("first_prompt_seen") is True
        self.last_reply: str | None = str_or_none(state.get("last_reply"))
        # A missing settings file is the default, as an unreadable one is (cached_by_stat stats it once).
        self.settings = cached_by_stat(str(settings_path(p)), _load_settings, _Settings())

    # -- session -------------------------------------------------------------------

    def _title_source(self) -> str | None:
        if self.title_by_user:
            return "user"
        if self.title_is_prompt is None:
            return None  # not known yet: the scan compares it with the first prompt it sees
        return "prompt" if self.title_is_prompt else "agent"

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        facts = self.facts
        facts.model = self.settings.model or facts.model
        if self.settings.tokens_in is not None:
            facts.tokens_in = self.settings.tokens_in
        if self.settings.tokens_out is not None:
            facts.tokens_out = self.settings.tokens_out
        return facts.session(
            PROVIDER,
            title=self.title,
            title_source=self._title_source(),
            resume=resume_command(facts.cwd, native),
            source=self.path,
        )

    def _establish(self, native_id: str | None) -> Iterator[Session]:
        """Fix the session id at the first record that names one (else the file name); yields the Session once."""
        if self.counter is None:
            yield self._begin(native_id or self.stem)

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        if self.title is not None:
            state["title"] = self.title
        if self.title_by_user:
            state["title_by_user"] = True
        if self.title_is_prompt is not None:
            state["title_is_prompt"] = self.title_is_prompt
        if self.first_prompt_seen:
            state["first_prompt_seen"] = True
        if self.last_reply is not None:
            state["last_reply"] = self.last_reply
        return state

    # -- the stream ------------------------------------------------------------------

    def _emit(self, kind: Kind, origin: Origin, text: Any, **extra: Any) -> Iterator[Item]:
        if not isinstance(text, str) or not text.strip():
            return
        yield from self._establish(None)
        assert self.counter is not None
        if kind == "user" and origin == "human" and not self.first_prompt_seen:
            self.first_prompt_seen = True
            if self.title is not None and not self.title_by_user:
                self.title_is_prompt = _copies_prompt(self.title, text)
        if kind == "assistant":
            self.last_reply = _digest(text)
        event = self.counter.make(kind, origin, text, **extra)
        if event is not None:
            yield event

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            return
        kind = line.get("type")
        if kind == "session_start":
            yield from self._session_start(line)
        elif kind == "message" and isinstance(line.get("message"), dict):
            yield from self._message(line, line["message"])
        elif kind == "message" and "role" in line:
            yield from self._stream_message(line)
        elif isinstance(kind, str) and kind in _STREAM_HANDLERS:  # a list or dict kind is unhashable
            ts = epoch(line.get("timestamp"))
            self.facts.observe_ts(ts)
            yield from _STREAM_HANDLERS[kind](self, line, ts)
        elif not (isinstance(kind, str) and kind in _BOOKKEEPING):
            self.unknown.saw(kind)

    # -- the session store -------------------------------------------------------------

    def _session_start(self, line: dict[str, Any]) -> Iterator[Item]:
        self.facts.cwd = str_or_none(line.get("cwd")) or self.facts.cwd
        title = str_or_none(line.get("title"))
        if title and title.strip():
            self.title = title.strip()
            self.title_by_user = line.get("isSessionTitleManuallySet") is True
        yield from self._establish(str_or_none(line.get("id")))

    def _message(self, line: dict[str, Any], message: dict[str, Any]) -> Iterator[Item]:
        ts = parse_ts(line.get("timestamp"))
        self.facts.observe_ts(ts)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        role = message.get("role")
        if role == "user":
            injected = (
                message.get("visibility") == "llm_only"
                or line.get("visibility") == "llm_only"
                or str(line.get("id") or "").startswith("context-")
            )
            yield from self._user_blocks(blocks, injected, ts)
        elif role == "assistant":
            self.facts.model = str_or_none(message.get("modelId")) or self.facts.model
            yield from self._assistant_blocks(blocks, ts)
        else:
            self.unknown.saw(f"message/{role}" if isinstance(role, str) else role)

    def _user_blocks(self, blocks: list[Any], injected: bool, ts: float | None) -> Iterator[Item]:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if injected or text.lstrip().startswith(_INJECTED_PREFIXES):
                    yield from self._emit("meta", "provider", text, ts=ts)
                else:
                    yield from self._emit("user", "human", text, ts=ts)
            elif btype == "tool_result":
                text = _text_of(block.get("content"))
                yield from self._emit(
                    "tool_result",
                    "tool",
                    text,
                    ts=ts,
                    call_id=str_or_none(block.get("tool_use_id")),
                    exit_code=exit_code_in(text),
                    is_error=block.get("is_error") is True,
                )

    def _assistant_blocks(self, blocks: list[Any], ts: float | None) -> Iterator[Item]:
        # chatCompletionReasoningContent beside the blocks repeats the thinking block: not read.
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "thinking":
                yield from self._emit("reasoning", "agent", block.get("thinking"), ts=ts)
            elif btype == "text":
                yield from self._emit("assistant", "agent", block.get("text"), ts=ts)
            elif btype == "tool_use":
                name = str_or_none(block.get("name"))
                yield from self._emit(
                    "tool_call",
                    "agent",
                    render_tool_input(name, block.get("input")),
                    ts=ts,
                    tool=name,
                    call_id=str_or_none(block.get("id")),
                )

    # -- stream-json logs (documented, not observed) ------------------------------------------

    def _stream_message(self, line: dict[str, Any]) -> Iterator[Item]:
        ts = epoch(line.get("timestamp"))
        self.facts.observe_ts(ts)
        yield from self._establish(str_or_none(line.get("session_id")))
        if line.get("subtype") == "delta":
            return  # a streamed piece of a message that follows whole
        text = line.get("text", line.get("content"))
        role = line.get("role")
        if role == "user":
            injected = isinstance(text, str) and text.lstrip().startswith(_INJECTED_PREFIXES)
            yield from self._emit("meta" if injected else "user", "provider" if injected else "human", text, ts=ts)
        elif role == "assistant":
            yield from self._emit("assistant", "agent", text, ts=ts)
        else:
            self.unknown.saw(f"message/{role}" if isinstance(role, str) else role)

    def _stream_system(self, line: dict[str, Any], ts: float | None) -> Iterator[Item]:
        self.facts.cwd = self.facts.cwd or str_or_none(line.get("cwd"))
        self.facts.model = str_or_none(line.get("model")) or self.facts.model
        yield from self._establish(str_or_none(line.get("session_id")))

    def _stream_tool_call(self, line: dict[str, Any], ts: float | None) -> Iterator[Item]:
        name = str_or_none(line.get("toolName"))
        params = line.get("parameters", line.get("input"))
        yield from self._emit(
            "tool_call",
            "agent",
            render_tool_input(name, params),
            ts=ts,
            tool=name,
            call_id=str_or_none(line.get("toolCallId")) or str_or_none(line.get("id")),
        )

    def _stream_tool_result(self, line: dict[str, Any], ts: float | None) -> Iterator[Item]:
        text = _text_of(line.get("value"))
        yield from self._emit(
            "tool_result",
            "tool",
            text,
            ts=ts,
            call_id=str_or_none(line.get("toolCallId")) or str_or_none(line.get("id")),
            exit_code=exit_code_in(text),
            is_error=line.get("isError") is True,
        )

    def _stream_completion(self, line: dict[str, Any], ts: float | None) -> Iterator[Item]:
        final = line.get("finalText")
        if isinstance(final, str) and self.last_reply == _digest(final):
            return  # the last assistant message again
        yield from self._emit("assistant", "agent", final, ts=ts)

    def _stream_error(self, line: dict[str, Any], ts: float | None) -> Iterator[Item]:
        yield from self._emit("meta", "provider", line.get("message"), ts=ts)


_STREAM_HANDLERS = {
    "system": _DroidRead._stream_system,
    "tool_call": _DroidRead._stream_tool_call,
    "tool_result": _DroidRead._stream_tool_result,
    "completion": _DroidRead._stream_completion,
    "error": _DroidRead._stream_error,
}


# -- discovery -----------------------------------------------------------------------------------


def _head_session_id(path: str) -> str | None:
    """The session id the first records of a log name (``session_id``, or a ``session_start`` ``id``)."""
    with open_regular(path) as fh:
        head = fh.read(64 << 10)
    for raw in head.split(b"\n")[:8]:
        try:
            line = decode_line(raw.strip()) if raw.strip() else None
        except BadLine:
            continue
        if isinstance(line, dict):
            sid = str_or_none(line.get("session_id"))
            if sid is None and line.get("type") == "session_start":
                sid = str_or_none(line.get("id"))
            if sid:
                return sid
    return None


class DroidAdapter:
    """Factory Droid sessions under ``~/.factory/sessions`` (and stream-json logs under ``~/.factory/projects``)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_home("droid", env)
        assert home is not None
        return [home / "sessions", home / "projects"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        sessions_root, projects_root = self.roots(env)
        stored: set[str] = set()
        for item in walk_files(sessions_root, ".jsonl", self.name):
            if isinstance(item, Source):
                stored.add(Path(item.path).name[: -len(".jsonl")])
                item = with_side_file(item, settings_path(Path(item.path)))  # model and tokens change there
            yield item
        for item in walk_files(projects_root, ".jsonl", self.name):
            if isinstance(item, Source):
                sid = cached_by_stat(item.path, _head_session_id, None)
                if sid is not None and sid in stored:
                    continue  # a redirected copy of a session the store holds: read there, not twice
            yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _DroidRead(source, cursor).run()


ADAPTER = DroidAdapter()
