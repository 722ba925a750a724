"""The Qwen Code adapter: ``<qwen runtime dir>/projects/<cwd>/chats/<id>.jsonl`` to Sessions and Events.

Owns everything Voyager knows about Qwen Code's transcripts (docs/agents.md). Qwen Code began as
a fork of Gemini CLI and still stores each turn as a Gemini API ``Content``
(``{"role", "parts"}``, read by :mod:`._genai`), but its files are its own: one append-only
JSONL a session, one record a line, every record with ``uuid``, ``parentUuid``,
``sessionId``, ``timestamp``, ``type``, ``cwd`` and ``version``.

* **Where.** ``projects/<cwd with every non-alphanumeric character as ->/chats/<id>.jsonl``
  (``chats/archive/`` for archived ones) under the runtime dir: ``$QWEN_RUNTIME_DIR``, else
  ``$QWEN_HOME``, else ``~/.qwen``. A subagent's transcript is
  ``subagents/<parent session id>/agent-<agent id>.jsonl`` beside a ``.meta.json``; its
  records carry the *parent's* ``sessionId`` and ``isSidechain``, so its Voyager id is
  ``qwen:agent-<agent id>@<parent session id>``.
* **Who said it.** Only ``type:user`` with ``provenance:real_user`` is a person (and not the
  ``<system-reminder>`` part Qwen Code prepends to a prompt after a restore); other user
  records are injected (meta), the ``<task-notification>`` that returns a background
  subagent's result is that subagent's report (``tool_result``/``agent``, paired with the call that
  started it, as every adapter files a report: docs/json.md) and the acknowledgement of that
  launch is tool output; in a subagent's transcript the "user" is the parent agent. Thought
  parts are reasoning.
* **Copies never counted.** Every ``type:system`` record is bookkeeping or a copy
  (``ui_telemetry`` repeats each reply and tool call), except ``chat_compression``: the
  summary it carries (the first user entry of ``compressedHistory``) is meta; the records
  it compacted stay. A tool's exit code is the one Qwen Code recorded in
  ``toolCallResult.resultDisplay.exitCode``, never read out of the output text.

Reading streams from the Cursor's byte offset (:class:`JsonlSessionRead`): a new turn
costs what it adds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _genai
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    int_or_none,
    parse_ts,
    release,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import subdirs, walk_files
from voyager_sessions.ingest.jsondoc import read_json_object, sorted_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, notification_report
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "qwen"

_RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
#: A text part Qwen Code puts before what the person typed (a note after a restore, say).
_INJECTED = ("<system-reminder>",)
_NOTIFICATION = "<task-notification>"


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``qwen --resume <session id>``, run in the session's directory: sessions are kept per project."""
    return resume_in(cwd, "qwen", opt("--resume", native_id))


def _subagent_parent(path: Path) -> str | None:
    """The parent session id of a subagent transcript (``subagents/<parent id>/agent-*.jsonl``), else None."""
    if path.parent.parent.name == "subagents" and path.name.startswith("agent-"):
        return path.parent.name
    return None


class _QwenRead(JsonlSessionRead):
    """One pass over one transcript (or its appended tail when resuming from a Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self._start(source.path, cursor, "Qwen Code")
        p = Path(source.path)
        self.stem = p.stem
        self.parent_dir = _subagent_parent(p)
        self.title: str | None = None
        if self.parent_dir is not None:
            self._read_meta(p.with_name(p.stem + ".meta.json"))

    def _read_meta(self, path: Path) -> None:
        """A subagent's ``.meta.json``: the task description its parent gave it (its title), its model."""
        meta = read_json_object(path, fatal=False)
        if isinstance(meta, Notice):
            return  # optional: the transcript alone is the session
        description = str_or_none(meta.get("description"))
        self.title = description.strip() if description and description.strip() else None
        if self.facts.model is None:
            self.facts.model = str_or_none(meta.get("model"))

    # -- session -------------------------------------------------------------------

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        parent = self.facts.parent.split(":", 1)[1] if self.facts.parent else None
        # A subagent cannot be resumed on its own; its work lives on in the parent.
        return self.facts.session(
            PROVIDER,
            title=self.title,
            title_source="agent",
            source=self.path,
            resume=resume_command(self.facts.cwd, parent or native),
        )

    def _establish(self, line: dict[str, Any]) -> Session | None:
        if self.counter is not None:
            return None
        if self.parent_dir is not None:
            # The records carry the parent's sessionId; the file names the agent, after the
            # tool call that started it: unique within its parent only, hence the parent's id
            # after it (after, so that a prefix of the parent's id still names the parent alone).
            self.facts.parent = session_id(PROVIDER, str_or_none(line.get("sessionId")) or self.parent_dir)
            return self._begin(f"{self.stem}@{self.parent_dir}")
        return self._begin(self.stem)  # Qwen Code names the file after the session id

    # -- the stream ------------------------------------------------------------------

    def _record(self, record: Record) -> Iterator[Item]:
        line = record.value
        if not isinstance(line, dict):
            self.unknown.saw(f"a JSON {type(line).__name__}")
            return
        if isinstance(line.get("version"), str):
            self.unknown.version = line["version"]
            self.facts.agent_version = release(line["version"]) or self.facts.agent_version
        kind = line.get("type")
        if not (isinstance(kind, str) and kind in _RECORD_TYPES):  # a list or dict type is unhashable
            self.unknown.saw(kind if isinstance(kind, str) else "record without a type")
            return
        ts = parse_ts(line.get("timestamp"))
        self.facts.observe_ts(ts)
        self.facts.observe_place(line.get("cwd"), line.get("gitBranch"))
        first = self._establish(line)
        if first is not None:
            yield first
        if kind == "system":
            if line.get("subtype") == "chat_compression":
                yield from self._compression(line, ts)
            return  # telemetry, attribution snapshots, slash commands: bookkeeping or copies
        parts = _genai.as_parts(line.get("message"))
        if kind == "user":
            yield from self._user(line, parts, ts)
        elif kind == "assistant":
            yield from self._assistant(line, parts, ts)
        else:
            yield from self._tool_result(line, parts, ts)

    def _user(self, line: dict[str, Any], parts: list[dict[str, Any]], ts: float | None) -> Iterator[Event]:
        counter = self.counter
        assert counter is not None
        provenance, subtype = line.get("provenance"), line.get("subtype")
        sidechain = self.parent_dir is not None or line.get("isSidechain") is True
        typed = provenance == "real_user" or (provenance is None and subtype is None)
        for part in parts:
            text = _genai.text_of(part)
            if text is not None:
                head = text.lstrip()
                report, call_id = notification_report(text)
                if report:  # a background subagent's report: the one kind/origin (docs/json.md)
                    ev = counter.make(*SUBAGENT_REPORT, text, ts=ts, call_id=call_id)
                elif subtype == "notification" or head.startswith(_NOTIFICATION):
                    ev = counter.make("meta", "provider", text, ts=ts)  # another background task's end
                elif not typed or head.startswith(_INJECTED):
                    ev = counter.make("meta", "provider", text, ts=ts)
                else:
                    ev = counter.make("user", "provider" if sidechain else "human", text, ts=ts)
            elif (response := _genai.function_response(part)) is not None:
                ev = _genai.tool_result_event(counter, response, ts)
            else:
                continue  # images and files
            if ev is not None:
                yield ev

    def _assistant(self, line: dict[str, Any], parts: list[dict[str, Any]], ts: float | None) -> Iterator[Event]:
        assert self.counter is not None
        model = str_or_none(line.get("model"))
        if model:
            self.facts.model = model
        usage = line.get("usageMetadata")
        if isinstance(usage, dict):
            facts = self.facts
            facts.tokens_in = (facts.tokens_in or 0) + (int_or_none(usage.get("promptTokenCount")) or 0)
            facts.tokens_out = (
                (facts.tokens_out or 0)
                + (int_or_none(usage.get("candidatesTokenCount")) or 0)
                + (int_or_none(usage.get("thoughtsTokenCount")) or 0)
            )
        yield from _genai.model_events(self.counter, parts, ts)

    def _tool_result(self, line: dict[str, Any], parts: list[dict[str, Any]], ts: float | None) -> Iterator[Event]:
        counter = self.counter
        assert counter is not None
        info = line.get("toolCallResult")
        info = info if isinstance(info, dict) else {}
        display = info.get("resultDisplay")
        recorded_exit = int_or_none(display.get("exitCode")) if isinstance(display, dict) else None
        # A subagent started in the background answers with an acknowledgement; its report comes as a notification.
        background = isinstance(display, dict) and "background" in (display.get("executionMode"), display.get("status"))
        failed = info.get("status") == "error"
        responses = [r for p in parts if (r := _genai.function_response(p)) is not None]
        for response in responses:
            # The exit code belongs to the call toolCallResult describes.
            mine = len(responses) == 1 or response.get("id") == info.get("callId")
            ev = _genai.tool_result_event(
                counter,
                response,
                ts,
                exit_code=recorded_exit if mine else None,
                is_error=failed and mine,
                background=background and mine,
            )
            if ev is not None:
                yield ev
        for part in parts:
            text = _genai.text_of(part)
            if (
                text is not None
                and (ev := counter.make("tool_result", "tool", text, ts=ts, call_id=str_or_none(info.get("callId"))))
                is not None
            ):
                yield ev

    def _compression(self, line: dict[str, Any], ts: float | None) -> Iterator[Event]:
        """The summary a compaction wrote (the first user entry of its new history): meta."""
        assert self.counter is not None
        payload = line.get("systemPayload")
        history = payload.get("compressedHistory") if isinstance(payload, dict) else None
        for entry in history if isinstance(history, list) else ():
            if isinstance(entry, dict) and entry.get("role") == "user":
                for part in _genai.as_parts(entry):
                    text = _genai.text_of(part)
                    if text is not None and (ev := self.counter.make("meta", "provider", text, ts=ts)) is not None:
                        yield ev
                return  # what follows is an acknowledgement and kept records: copies


def probe(path: str) -> str:
    """The shape of a source, for ``voyager doctor``, from its place alone."""
    p = Path(path)
    if _subagent_parent(p) is not None:
        return "subagent"
    return "archived" if p.parent.name == "archive" else "session"


class QwenAdapter:
    """Qwen Code transcripts under ``<runtime dir>/projects/*/{chats,subagents}``."""

    name: ClassVar[str] = "qwen"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_home("qwen", env)
        return [home / "projects"] if home is not None else []

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        home = manifest.agent_home("qwen", env)
        if home is not None:
            yield from self._older_shape(home / "tmp")
        for root in self.roots(env):
            for project in subdirs(root):
                if isinstance(project, Notice):
                    yield project
                    continue
                # chats/ holds the sessions (and chats/archive/ the archived ones); other
                # folders of a project hold state that is not a transcript.
                yield from walk_files(project / "chats", ".jsonl", PROVIDER)
                yield from walk_files(project / "subagents", ".jsonl", PROVIDER, name_prefix="agent-")

    @staticmethod
    def _older_shape(tmp: Path) -> Iterator[Notice]:
        """Name, never guess at, sessions in the shape early Qwen Code inherited from Gemini CLI
        (``tmp/<sha256(cwd)>/chats/session-*.json``, per peers; not seen on a real install):
        a store Voyager cannot read must not look empty."""
        for folder in subdirs(tmp):
            if isinstance(folder, Notice):
                continue
            chats = folder / "chats"
            found = [f for f in sorted_files(chats, ".json") if f.name.startswith("session-")]
            if found:
                yield Notice(
                    source=str(chats),
                    reason=f"{len(found)} session file(s) in an older Qwen Code shape "
                    "(Gemini CLI's session-*.json) that Voyager does not read yet",
                )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _QwenRead(source, cursor).run()


ADAPTER = QwenAdapter()
