"""The Code Puppy adapter: ``~/.code_puppy/autosaves/<name>.json`` (observed, 0.0.946) to Sessions and Events.

Owns what Voyager knows about Code Puppy's sessions. Each session is one JSON file, rewritten
whole after every turn: an envelope ``{"format": 2, "code_puppy": "<version>", "pydantic_ai":
…, "encoding": "pydantic-ai-messages", "messages": [...]}`` whose messages are pydantic-ai
``ModelMessage``s:

* ``{"kind": "request", "timestamp", "instructions", "parts": [...]}`` with parts
  ``user-prompt`` (what the person typed: ``content`` a string or a list of strings and
  media), ``tool-return`` (a tool's result: for the shell tool an object with ``stdout``,
  ``stderr``, ``exit_code``), ``retry-prompt`` (the agent's own nudge back to the model:
  meta) and ``system-prompt`` (meta). ``instructions`` repeats the system prompt in every
  request and is not indexed.
* ``{"kind": "response", "model_name", "usage", "parts": [...]}`` with parts ``text`` (the
  reply), ``thinking`` (reasoning) and ``tool-call`` (``tool_name``, ``args`` as a JSON
  string with ``\\uXXXX``-escaped text, or an object).

Beside it, ``<name>_meta.json`` holds what the session file lacks: ``scope_key`` (the
working directory) and the time of the last save (local time, no zone). Its changes count
as the session's (a side file in the fingerprint). ``<name>.pkl`` pickles of versions
before the JSON format are never unpickled (Code Puppy migrates them itself).

Where: ``$XDG_CACHE_HOME/code_puppy/autosaves`` when Code Puppy runs with XDG variables, and
``~/.code_puppy/autosaves`` (its default); ``$VOYAGER_CODE_PUPPY_HOME`` names the autosaves
folder outright. Resume: ``code-puppy -r <name>`` in the session's directory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    doc_with_list,
    document_items,
    int_or_none,
    parse_ts,
    release,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, exit_code, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "code-puppy"
LABEL = "Code Puppy"
META_SUFFIX = "_meta.json"
SHELL_TOOLS = frozenset({"shell", "agent_run_shell_command", "run_shell_command"})
_DOC_KEYS = ("format", "code_puppy", "encoding")


def autosave_dirs(env: Mapping[str, str]) -> list[Path]:
    """The autosaves folders: ``$VOYAGER_CODE_PUPPY_HOME``; else ``$XDG_CACHE_HOME/code_puppy/autosaves`` (when
    set) and ``~/.code_puppy/autosaves``."""
    return manifest.agent_homes(("code-puppy", "code-puppy.home"), env)


def resume_command(cwd: str | None, name: str) -> str | None:
    return resume_in(cwd, "code-puppy", opt("-r", name))


def _is_session(name: str) -> bool:
    return name.endswith(".json") and not name.endswith(META_SUFFIX)


def meta_path(session_path: str) -> str:
    return session_path[: -len(".json")] + META_SUFFIX


def _text(content: Any) -> str:
    """A user prompt's content: a string, or a list whose strings are the text (media items are not)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c for c in content if isinstance(c, str))
    return ""


def _tool_output(content: Any) -> tuple[str, int | None]:
    """A tool return's text and exit code: the shell tool's ``stdout``/``stderr``/``error`` and ``exit_code``;
    any other tool's content as text or compact JSON."""
    if isinstance(content, dict) and ("stdout" in content or "exit_code" in content):
        parts = [content.get(k) for k in ("stdout", "stderr", "error")]
        return "\n".join(p for p in parts if isinstance(p, str) and p), exit_code(content.get("exit_code"))
    if isinstance(content, str):
        return content, None
    return tool_call_text(None, content) if content not in (None, "") else "", None


class _SessionRead:
    """One read of one session file (and its ``_meta.json``)."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        self.model: str | None = None
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.started: float | None = None
        self.updated: float | None = None

    def run(self) -> Iterator[Item]:
        read = doc_with_list(self.path, "messages", "a Code Puppy session file", _DOC_KEYS)
        if isinstance(read, Notice):
            yield read
            return
        doc, messages = read
        meta = read_json_object(meta_path(self.path), fatal=False)
        if isinstance(meta, Notice):
            meta = {}
        name = str_or_none(meta.get("session_name")) or Path(self.path).stem
        sid = session_id(PROVIDER, name)
        counter = EventCounter(sid, 0)
        cwd = str_or_none(meta.get("scope_key"))
        version = release(doc.get("code_puppy"))

        def events() -> Iterator[Event]:
            for message in messages:
                if isinstance(message, dict):
                    yield from number(counter, self._message(message))
                else:
                    self.unknown.saw(type(message).__name__)

        def session() -> Session:
            saved = parse_ts(meta.get("timestamp"), naive="local")
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=name,
                cwd=cwd,
                model=self.model,
                started=self.started,
                updated=max((t for t in (self.updated, saved) if t is not None), default=None),
                resume=resume_command(cwd, name),
                source=self.path,
                tokens_in=self.tokens_in,
                tokens_out=self.tokens_out,
                agent_version=version,
            )

        yield from document_items(sid, session, events(), messages, self.before, self.unknown, self.path)

    def _when(self, value: Any) -> float | None:
        ts = parse_ts(value)
        if ts is not None:
            self.started = ts if self.started is None else min(self.started, ts)
            self.updated = ts if self.updated is None else max(self.updated, ts)
        return ts

    def _message(self, message: dict[str, Any]) -> Iterator[Draft]:
        kind = message.get("kind")
        ts = self._when(message.get("timestamp"))
        parts = message.get("parts")
        if kind == "response":
            self.model = str_or_none(message.get("model_name")) or self.model
            usage = as_dict(message.get("usage"))
            if usage:
                self.tokens_in = (self.tokens_in or 0) + sum(
                    int_or_none(usage.get(k)) or 0 for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens")
                )
                self.tokens_out = (self.tokens_out or 0) + (int_or_none(usage.get("output_tokens")) or 0)
        elif kind != "request":
            self.unknown.saw(f"message:{kind}")
            return
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                yield from self._part(part, ts)

    def _part(self, part: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        pk = part.get("part_kind")
        ts = self._when(part.get("timestamp")) or ts
        if pk == "user-prompt":
            yield ("user", "human", _text(part.get("content")), {"ts": ts})
        elif pk == "text":
            yield ("assistant", "agent", part.get("content"), {"ts": ts})
        elif pk == "thinking":
            yield ("reasoning", "agent", part.get("content"), {"ts": ts})
        elif pk == "tool-call":
            name = str_or_none(part.get("tool_name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, part.get("args"), SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(part.get("tool_call_id"))},
            )
        elif pk == "tool-return":
            text, code = _tool_output(part.get("content"))
            failed = part.get("outcome") not in (None, "success") or (code is not None and code != 0)
            yield (
                "tool_result",
                "tool",
                text,
                {
                    "ts": ts,
                    "tool": str_or_none(part.get("tool_name")),
                    "call_id": str_or_none(part.get("tool_call_id")),
                    "exit_code": code,
                    "is_error": failed,
                },
            )
        elif pk in ("retry-prompt", "system-prompt"):
            content = part.get("content")
            yield (
                "meta",
                "provider",
                content if isinstance(content, str) else tool_call_text(None, content),
                {"ts": ts},
            )
        else:
            self.unknown.saw(f"part:{pk}")


class CodePuppyAdapter:
    """Code Puppy's autosaved sessions."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return autosave_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        seen: set[str] = set()
        for root in self.roots(env):
            # Only the autosaves folder itself: nothing below it is a session.
            for item in walk_files(
                root, ".json", PROVIDER, append_only=False, match=_is_session, skip_dir=lambda _name: True
            ):
                if isinstance(item, Source):
                    if item.path in seen:
                        continue
                    seen.add(item.path)
                    item = with_side_file(item, meta_path(item.path))
                yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _SessionRead(source, cursor).run()


ADAPTER = CodePuppyAdapter()
