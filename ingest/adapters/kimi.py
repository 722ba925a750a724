"""The Kimi adapter: Kimi CLI's session folders (``~/.kimi``) and Kimi Code's (``~/.kimi-code``).

A Kimi session is a folder of several files, so a Source here is a folder, fingerprinted
over its files (:func:`~voyager_sessions.ingest.files.folder_fingerprint`), and the
events come from one append-only stream in it:

* **Kimi CLI** (the Python CLI, observed 1.52.0): ``<share dir>/sessions/<md5(cwd)>/<uuid>/``
  with ``context.jsonl`` (the model's context, no timestamps), ``wire.jsonl`` (the same
  conversation as wire events, with the only timestamps) and ``state.json`` (title,
  archive flag). ``wire.jsonl`` is read; ``context.jsonl`` only when a session has no
  wire log (older releases). ``kimi.json``'s ``work_dirs`` is the only map from the md5
  folder name back to the working directory. A delegated subagent keeps its own
  ``subagents/<agent id>/wire.jsonl`` beside ``meta.json``: a session of its own whose
  parent is the main one (its events also reach the parent's wire as ``SubagentEvent``
  copies, which are skipped).
* **Kimi Code** (documented from its source and docs, no capture yet): ``$KIMI_CODE_HOME/
  sessions/<work dir key>/<session>/agents/<agent>/wire.jsonl`` with the session's
  ``state.json`` two levels up; ``main`` is the session, other agents are its subagents.
  The record mapping lives in :mod:`._kimi_code`.
* **Kimi Work** (the Kimi desktop app's local agent; documented by agentsview's
  ``kimi_work_provider.go``): a Kimi Code home inside the app's data dir,
  ``<kimi-desktop>/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_<ws>_<hash>/conv-*/``,
  each conversation's agents under ``agents/<agent>/wire.jsonl`` as Kimi Code keeps them (an older
  layout keeps one ``wire.jsonl`` in the ``conv-*`` folder itself, read as Kimi CLI's wire log). Only
  ``conv-*`` folders are a person's conversations; the app's own runs beside them (``ctitle-*`` titles,
  ``sklsum-*`` skill summaries, ``dvlt-*``) are not read. The desktop app has no resume command.

Reading: the first read takes the stream whole; the Cursor then remembers the stream
file, its inode and the byte offset, and when the folder changes (a new turn, a title)
the next read checks that the stream's prefix is intact and yields ``Partial`` plus only
the new events; anything else is read whole again.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _kimi_code
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    cached_by_stat,
    compact_json,
    epoch,
    int_or_none,
    JsonlSessionRead,
    openai_tool_calls,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters._kimi_code import render_call
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source
from voyager_sessions.ingest.files import folder_fingerprint, read_notice
from voyager_sessions.ingest.jsondoc import read_json
from voyager_sessions.ingest.jsonl import Record, tail_matches
from voyager_sessions.core.model import Origin, Session, TitleSource, session_id

PROVIDER = "kimi"

#: Wire events with nothing to search (turn and step bookkeeping, status, approvals, hooks, MCP).
_WIRE_SKIPPED = frozenset(
    {
        "StepBegin",
        "StepInterrupted",
        "StepRetry",
        "TurnEnd",
        "CompactionBegin",
        "CompactionEnd",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "HookTriggered",
        "HookResolved",
        "HookRequest",
        "HookResponse",
        "ApprovalRequest",
        "ApprovalResponse",
        "ApprovalRequestResolved",
        "ToolCallRequest",
        "ToolCallPart",
    }
)
#: What Kimi CLI prepends to the summary that replaces a compacted context.
_COMPACTION_OUTPUT = "Previous context has been compacted"


def resume_command(cwd: str | None, native_id: str, *, code: bool = False) -> str | None:
    """Kimi looks sessions up per working directory: ``kimi -r <id>`` (Kimi Code: ``kimi --session <id>``) in the cwd."""
    return resume_in(cwd, "kimi", opt("--session" if code else "-r", native_id))


def parts_text(content: Any, *, drop_system: bool = False) -> str:
    """Text of a Kimi message ``content``: a string, or ``text`` parts (``<system>…</system>`` notes dropped on request)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            t = part["text"]
            if drop_system and t.startswith("<system>") and t.rstrip().endswith("</system>"):
                continue
            texts.append(t)
    return "\n".join(texts)


def _read_json_file(path: str) -> Any:
    """The JSON value in a side file, None when it cannot be read (read_json: nesting too deep,
    lone surrogates and a byte-order mark cost the piece they are in, never the read)."""
    value = read_json(path, fatal=False)
    return None if isinstance(value, Notice) else value


def _object(path: Path) -> dict[str, Any]:
    """A side file's JSON object, read once per change; {} when absent or unreadable."""
    value = cached_by_stat(str(path), _read_json_file, None)
    return value if isinstance(value, dict) else {}


def _work_dirs(share_dir: Path) -> dict[str, str]:
    """md5 folder name -> working directory, from ``kimi.json`` (non-local KAOS folders are ``<kaos>_<md5>``)."""

    def load(path: str) -> dict[str, str]:
        doc = _read_json_file(path)
        out: dict[str, str] = {}
        for wd in doc.get("work_dirs", []) if isinstance(doc, dict) and isinstance(doc.get("work_dirs"), list) else ():
            if isinstance(wd, dict) and isinstance(wd.get("path"), str):
                digest = hashlib.md5(wd["path"].encode("utf-8", "surrogatepass")).hexdigest()
                kaos = wd.get("kaos")
                out[digest if kaos in (None, "local") else f"{kaos}_{digest}"] = wd["path"]
        return out

    return cached_by_stat(str(share_dir / "kimi.json"), load, {})


class _Layout(msgspec.Struct, frozen=True):
    """What a source folder is: which product wrote it, which session and agent it holds, where its side files are."""

    code: bool
    #: Kimi Work's (the desktop app's): no resume command.
    work: bool
    native_id: str
    parent: str | None
    folder: Path
    session_dir: Path
    home: Path


#: Where Kimi Work's sessions sit below the desktop app's data dir.
WORK_SESSIONS = Path("daimon-share", "daimon", "runtime", "kimi-code", "home", "sessions")
#: The prefix of the folders of a person's Kimi Work conversations (the app's own runs have others).
WORK_CONVERSATION = "conv-"


def _is_work(folder: Path) -> bool:
    """True when ``folder`` lies in Kimi Work's sessions (a desktop app's: no resume command)."""
    if f"{os.sep}{WORK_SESSIONS}{os.sep}" in str(folder):
        return True
    named = manifest.agent_home("kimi.work", os.environ)
    try:
        return named is not None and folder.resolve().is_relative_to(named.expanduser().resolve())
    except (OSError, ValueError):
        return False


def layout_of(folder: Path) -> _Layout:
    layout = _layout_of(folder)
    return msgspec.structs.replace(layout, work=True) if _is_work(folder) else layout


def _layout_of(folder: Path) -> _Layout:
    if folder.parent.name == "agents":
        session_dir = folder.parent.parent
        agent = folder.name
        native = session_dir.name if agent == "main" else f"{session_dir.name}/{agent}"
        return _Layout(
            code=True,
            work=False,
            native_id=native,
            parent=None if agent == "main" else session_dir.name,
            folder=folder,
            session_dir=session_dir,
            home=session_dir.parent.parent.parent,
        )
    if folder.parent.name == "subagents":
        session_dir = folder.parent.parent
        return _Layout(
            code=False,
            work=False,
            native_id=f"{session_dir.name}/{folder.name}",
            parent=session_dir.name,
            folder=folder,
            session_dir=session_dir,
            home=session_dir.parent.parent.parent,
        )
    return _Layout(
        code=False,
        work=False,
        native_id=folder.name,
        parent=None,
        folder=folder,
        session_dir=folder,
        home=folder.parent.parent.parent,
    )


def stream_of(folder: Path) -> Path | None:
    """The file a session's events come from: ``wire.jsonl``, else (older Kimi CLI) ``context.jsonl``."""
    for name in ("wire.jsonl", "context.jsonl"):
        if os.path.isfile(folder / name):
            return folder / name
    return None


class _FolderRead(JsonlSessionRead):
    """One pass over one session folder's stream (or what was appended to it since the cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, layout: _Layout, stream: Path, cursor: Cursor | None) -> None:
        state = self._start(str(stream), cursor, "Kimi Code" if layout.code else "Kimi CLI")
        self.layout = layout
        self.stream_name = stream.name
        self.subagent = layout.parent is not None
        self._identify(layout.native_id)
        if layout.parent:
            self.facts.parent = session_id(PROVIDER, layout.parent)
        self.inode = os.stat(stream).st_ino
        self.mapper: Callable[[dict[str, Any]], Iterator[Draft]]
        if layout.code:
            self.code_state = _kimi_code.CodeState.from_cursor(state)
            if cursor is None:
                self.code_state.forked = _kimi_code.forked_agent(
                    _object(layout.session_dir / "state.json"), layout.folder.name
                )
            self.mapper = lambda rec: _kimi_code.record(rec, self.code_state, self.facts, self.unknown, self.subagent)
        elif self.stream_name == "context.jsonl":
            self.mapper = self._context
        else:
            self.mapper = self._wire

    # -- session -------------------------------------------------------------------

    def _session(self) -> Session:
        lay = self.layout
        title, title_source = self._title()
        if lay.code:
            state = _object(lay.session_dir / "state.json")
            cwd = str_or_none(state.get("cwd")) or _kimi_code.work_dir(lay.home, lay.session_dir.name)
            self.facts.cwd = self.facts.cwd or cwd
            forked = str_or_none(state.get("forkedFrom"))
            if forked and not self.subagent:
                self.facts.parent = session_id(PROVIDER, forked)
            for key in ("createdAt", "updatedAt"):
                self.facts.observe_ts(epoch(state.get(key)))
        else:
            self.facts.cwd = self.facts.cwd or _work_dirs(lay.home).get(lay.session_dir.parent.name)
        resume_id = lay.parent if lay.parent else lay.native_id
        return self.facts.session(
            PROVIDER,
            title=title,
            title_source=title_source,
            resume=None if lay.work else resume_command(self.facts.cwd, resume_id, code=lay.code),
            source=self.path,
        )

    def _title(self) -> tuple[str | None, TitleSource | None]:
        lay = self.layout
        if lay.code:
            if lay.parent:
                return None, None
            return _kimi_code.title(_object(lay.session_dir / "state.json"))
        if lay.parent:
            meta = _object(lay.folder / "meta.json")
            spec = meta.get("launch_spec")
            if isinstance(spec, dict) and str_or_none(spec.get("effective_model")):
                self.facts.model = spec["effective_model"]
            return str_or_none(meta.get("description")), "agent"
        state = _object(lay.folder / "state.json")
        title = str_or_none(state.get("custom_title"))
        if not title:
            return None, None
        # Kimi fills custom_title with the first prompt cut short until a person renames the session or a
        # title is generated (title_generated); which of those two it was, the file does not say.
        return title, (None if state.get("title_generated") is True else "prompt")

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        state["file"] = self.stream_name
        state["inode"] = self.inode
        if self.layout.code:
            state.update(self.code_state.to_cursor())
        return state

    # -- the stream ------------------------------------------------------------------

    def _record(self, record: Record) -> Iterator[Item]:
        if not isinstance(record.value, dict):
            return
        assert self.counter is not None
        yield from number(self.counter, self.mapper(record.value))

    def _person(self) -> Origin:
        # In a subagent's log the "user" is the parent agent handing over its task.
        return "provider" if self.subagent else "human"

    def _wire(self, rec: dict[str, Any]) -> Iterator[Draft]:
        if rec.get("type") == "metadata":
            version = str_or_none(rec.get("protocol_version"))
            if version:
                self.unknown.version = f"(wire protocol {version})"
            return
        ts = epoch(rec.get("timestamp"))
        self.facts.observe_ts(ts)
        message = rec.get("message")
        if isinstance(message, dict):
            yield from self._wire_message(message, ts, self.subagent, nested=False)

    def _wire_message(
        self, message: dict[str, Any], ts: float | None, subagent: bool, *, nested: bool
    ) -> Iterator[Draft]:
        kind = message.get("type")
        payload = message.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        person: Origin = "provider" if subagent else "human"
        if kind in ("TurnBegin", "SteerInput"):
            yield ("user", person, parts_text(payload.get("user_input")), {"ts": ts})
        elif kind == "ContentPart":
            ptype = payload.get("type")
            if ptype == "text":
                yield ("assistant", "agent", payload.get("text"), {"ts": ts})
            elif ptype == "think":
                yield ("reasoning", "agent", payload.get("think"), {"ts": ts})
        elif kind == "ToolCall":
            fn = as_dict(payload.get("function"))
            name = str_or_none(fn.get("name"))
            yield (
                "tool_call",
                "agent",
                render_call(name, fn.get("arguments")),
                {"ts": ts, "tool": name, "call_id": str_or_none(payload.get("id"))},
            )
        elif kind == "ToolResult":
            ret = as_dict(payload.get("return_value"))
            failed = ret.get("is_error") is True
            text = parts_text(ret.get("output"))
            note = str_or_none(ret.get("message"))
            if failed and note and note not in text:
                text = f"{text}\n{note}" if text else note
            # Kimi records whether a tool failed, never an exit code.
            yield (
                "tool_result",
                "tool",
                text,
                {"ts": ts, "call_id": str_or_none(payload.get("tool_call_id")), "is_error": failed},
            )
        elif kind == "StatusUpdate":
            if not nested:  # a subagent's usage is its own
                self._usage(payload.get("token_usage"))
        elif kind == "SubagentEvent":
            agent = str_or_none(payload.get("agent_id"))
            inner = payload.get("event")
            # The subagent's own log holds these events: read there, not twice. Without one
            # (older releases), they are the only copy and stay with the parent.
            if (agent and os.path.isdir(self.layout.session_dir / "subagents" / agent)) or not isinstance(inner, dict):
                return
            yield from self._wire_message(inner, ts, True, nested=True)
        elif kind == "Notification":
            body = "\n".join(t for t in (str_or_none(payload.get("title")), str_or_none(payload.get("body"))) if t)
            yield ("meta", "provider", body, {"ts": ts})
        elif kind == "PlanDisplay":
            yield ("meta", "provider", payload.get("content"), {"ts": ts})
        elif kind == "BtwBegin":
            yield ("user", person, payload.get("question"), {"ts": ts})
        elif kind == "BtwEnd":
            yield ("assistant", "agent", payload.get("response"), {"ts": ts})
        elif kind in ("QuestionRequest", "QuestionResponse"):
            yield ("meta", "provider", compact_json(payload.get("questions") or payload.get("answers")), {"ts": ts})
        elif not (isinstance(kind, str) and kind in _WIRE_SKIPPED):  # a list or dict type is unhashable
            self.unknown.saw(kind)

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        self.facts.tokens_in = (self.facts.tokens_in or 0) + sum(
            int_or_none(usage.get(k)) or 0 for k in ("input_other", "input_cache_read", "input_cache_creation")
        )
        self.facts.tokens_out = (self.facts.tokens_out or 0) + (int_or_none(usage.get("output")) or 0)

    def _context(self, rec: dict[str, Any]) -> Iterator[Draft]:
        """A ``context.jsonl`` record (no timestamps): what older sessions without a wire log hold."""
        role = rec.get("role")
        if not isinstance(role, str) or role.startswith("_"):
            return  # _system_prompt, _checkpoint, _usage: bookkeeping
        content = rec.get("content")
        if role == "user":
            text = parts_text(content)
            if text.lstrip().startswith(("<system>" + _COMPACTION_OUTPUT, _COMPACTION_OUTPUT)):
                yield ("meta", "provider", parts_text(content, drop_system=True), {})
            else:
                yield ("user", self._person(), text, {})
        elif role == "assistant":
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "think":
                        yield ("reasoning", "agent", part.get("think"), {})
            yield ("assistant", "agent", parts_text(content), {})
            for call in openai_tool_calls(rec.get("tool_calls")):
                yield (
                    "tool_call",
                    "agent",
                    render_call(call.name, call.arguments),
                    {"tool": call.name, "call_id": call.id},
                )
        elif role == "tool":
            yield (
                "tool_result",
                "tool",
                parts_text(content, drop_system=True),
                {"call_id": str_or_none(rec.get("tool_call_id"))},
            )
        elif role == "system":
            return  # the system prompt
        else:
            self.unknown.saw(f"role:{role}")


def _resumable(cursor: Cursor | None, stream: Path) -> bool:
    """True when ``cursor`` was left on this very stream and everything it consumed is still there."""
    if cursor is None or cursor.state.get("file") != stream.name:
        return False
    try:
        st = os.stat(stream)
    except OSError:
        return False
    if st.st_ino != cursor.state.get("inode") or st.st_size < cursor.offset:
        return False
    return cursor.offset == 0 or tail_matches(str(stream), cursor.tail_start, cursor.offset, cursor.tail_hash)


def read_folder(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    folder = Path(source.path)
    stream = stream_of(folder)
    if stream is None:
        yield Notice(
            source=source.path, reason="no wire.jsonl or context.jsonl in it any more", fatal=True, transient=True
        )
        return
    layout = layout_of(folder)
    if layout.code and _kimi_code.imported(_object(layout.session_dir / "state.json")):
        # Kimi Code's import of a Kimi CLI session: the original in ~/.kimi is read instead.
        yield Cursor(offset=0, next_seq=0, tail_hash="", state={})
        return
    resumable = _resumable(cursor, stream)
    try:
        reader = _FolderRead(source, layout, stream, cursor if resumable else None)
    except OSError as exc:
        yield read_notice(str(stream), exc)
        return
    if resumable:
        assert cursor is not None
        yield Partial(session=session_id(PROVIDER, layout.native_id), from_seq=cursor.next_seq)
    yield from reader.run()


class KimiAdapter:
    """Kimi CLI's session folders under its share dir, and Kimi Code's under ``$KIMI_CODE_HOME``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        roots = []
        for home in ("kimi", "kimi.code"):
            base = manifest.agent_home(home, env)
            if base is not None:
                roots.append(base / "sessions")
        return roots + work_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        legacy, code, *work = self.roots(env)
        yield from self._legacy(legacy)
        yield from self._code(code)
        for sessions in work:
            yield from self._code(sessions, conversations_only=True)

    def _legacy(self, legacy: Path) -> Iterator[Source | Notice]:
        for wd in _subdirs(legacy):
            if isinstance(wd, Notice):
                yield wd
                continue
            for folder in _subdirs(wd):
                if isinstance(folder, Notice):
                    yield folder
                    continue
                yield from _source(folder, ("state.json",))
                for sub in _subdirs(folder / "subagents", quiet=True):
                    if isinstance(sub, Path):
                        yield from _source(sub, ("meta.json",))

    def _code(self, code: Path, *, conversations_only: bool = False) -> Iterator[Source | Notice]:
        for wd in _subdirs(code):
            if isinstance(wd, Notice):
                yield wd
                continue
            for session in _subdirs(wd):
                if isinstance(session, Notice):
                    yield session
                    continue
                if conversations_only:
                    if not session.name.startswith(WORK_CONVERSATION):
                        continue  # the desktop app's own runs (titles, skill summaries), not a conversation
                    # The older layout: one wire log in the conversation's folder itself.
                    yield from _source(session, ("state.json",))
                for agent in _subdirs(session / "agents", quiet=True):
                    if isinstance(agent, Path):
                        yield from _source(agent, (), extra=[session / "state.json"])

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return read_folder(source, cursor)


def _subdirs(path: Path, *, quiet: bool = False) -> Iterator[Path | Notice]:
    """The directories in ``path``, sorted; a Notice when it exists but cannot be listed."""
    try:
        with os.scandir(path) as it:
            entries = sorted(e.name for e in it if e.is_dir())
    except FileNotFoundError:
        return
    except NotADirectoryError:
        return
    except OSError as exc:
        if not quiet:
            yield Notice(source=str(path), reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)
        return
    for name in entries:
        yield path / name


def _source(folder: Path, side: tuple[str, ...], extra: list[Path] | None = None) -> Iterator[Source]:
    stream = stream_of(folder)
    if stream is None:
        return  # a folder Kimi created before anything was said
    files = [folder / n for n in ("wire.jsonl", "context.jsonl", *side)] + (extra or [])
    try:
        fp = folder_fingerprint(folder, files)
    except OSError:
        return
    yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)


def work_dirs(env: Mapping[str, str]) -> list[Path]:
    """Kimi Work's sessions dirs: ``$VOYAGER_KIMI_WORK_HOME`` (the sessions dir itself, authoritative), else
    :data:`WORK_SESSIONS` below the desktop app's data dir (``~/.config/kimi-desktop``, on Linux also
    ``$XDG_DATA_HOME/kimi-desktop``; macOS's and Windows' user-data dirs)."""
    named = manifest.agent_home("kimi.work", env)
    if named is not None:
        return [named]
    apps = paths.app_dirs(env, "kimi-desktop")
    if not sys.platform.startswith(("win", "darwin")):
        data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else paths.home(env) / ".local" / "share"
        apps.append(data / "kimi-desktop")
    return [app / WORK_SESSIONS for app in apps]


ADAPTER = KimiAdapter()
