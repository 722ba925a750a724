"""The Cline adapter: the CLI's sessions (observed, 3.0.65) and the VS Code extension's task folders (documented).

**The CLI** (npm ``cline`` 3.x) keeps ``<data dir>/sessions/<id>/<id>.messages.json``, one
pretty JSON document rewritten whole after every message (so re-read whole, the session
replaced), with ``<id>.json`` beside it (the manifest: cwd, model, times, title = the first
prompt cut). Subagents (and team tasks) write ``<other>.messages.json`` files in their root
session's folder: sessions of their own whose parent is the root. What a person typed is
wrapped in ``<user_input mode="…">``; a ``user`` message made only of ``tool_result``
blocks is tool output. Messages are deduplicated by ``id``. The data dir is
``$VOYAGER_CLINE_HOME`` (authoritative), else ``$CLINE_DATA_DIR``, ``$CLINE_DIR/data``,
``~/.cline/data``; ``$CLINE_SESSION_DATA_DIR`` moves ``sessions/``. Copies never read:
``db/sessions.db`` (the manifest again), ``db/session-search.db`` (an FTS copy, lagging),
``cache/user_input_history.jsonl`` (prompts typed in the TUI).

**The VS Code extension** (``saoudrizwan.claude-dev``) keeps task folders under every VS
Code-family user dir's ``globalStorage`` (or ``$VOYAGER_CLINE_VSCODE_HOME``), read by
:mod:`._cline_tasks`; titles, cwd and model come from ``state/taskHistory.json`` and the
task's ``task_metadata.json``. It has no resume command (the IDE reopens tasks).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _cline_tasks as tasks
from voyager_sessions.ingest.adapters._common import (
    MAX_IDS_KEPT,
    DeltaStream,
    EventCounter,
    UnknownRecords,
    cached_by_stat,
    compact_json,
    epoch,
    int_or_none,
    release,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json, read_json_object, read_json_streamed, stream_end
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, TOOL_OUTPUT
from voyager_sessions.core.model import Event, Origin, Session, session_id

PROVIDER = "cline"
EXTENSION = "saoudrizwan.claude-dev"
MESSAGES_SUFFIX = ".messages.json"

#: What a person typed, as the CLI sends it to the model.
_USER_INPUT = re.compile(r"<user_input(?:\s[^>]*)?>(.*?)</user_input>", re.S)
#: How a failed command's result ends (the CLI records no exit code otherwise).
_EXITED = re.compile(r"\[Command exited with code (-?\d+)\]")


# -- where -------------------------------------------------------------------------------------


def sessions_dir(env: Mapping[str, str]) -> Path:
    """The CLI's ``sessions/``: under ``$VOYAGER_CLINE_HOME`` when set, else ``$CLINE_SESSION_DATA_DIR``, else the data dir's."""
    moved = None if env.get("VOYAGER_CLINE_HOME") else manifest.agent_home("cline.sessions", env)
    if moved is not None:
        return moved
    data = manifest.agent_home("cline", env)
    assert data is not None
    return data / "sessions"


def extension_dirs(env: Mapping[str, str]) -> list[Path]:
    """The extension's storage dirs: ``$VOYAGER_CLINE_VSCODE_HOME``, else one per VS Code-family app."""
    named = manifest.agent_home("cline.vscode", env)
    return [named] if named is not None else paths.vscode_extension_dirs(EXTENSION, env)


def discover_cli(root: Path) -> Iterator[Source | Notice]:
    """Every ``sessions/*/*.messages.json``, and a Notice for a session folder that has none."""
    parents: set[str] = set()
    for item in walk_files(root, MESSAGES_SUFFIX, PROVIDER, append_only=False):
        if isinstance(item, Source):
            folder = Path(item.path).parent
            parents.add(str(folder))
            # The manifest holds the title, cwd and times: its change alone means "read again".
            item = with_side_file(item, folder / f"{folder.name}.json")
        yield item
    try:
        with os.scandir(root) as it:
            folders = sorted(e.path for e in it if tasks.is_dir(e))
    except OSError:
        return
    for folder in folders:
        if folder not in parents and os.path.isfile(os.path.join(folder, f"{os.path.basename(folder)}.json")):
            yield Notice(
                source=folder, reason=f"Cline CLI session manifest without its {MESSAGES_SUFFIX} file; nothing to index"
            )


def _index_without_sessions(env: Mapping[str, str]) -> Iterator[Notice]:
    """Never silently empty: the CLI's session index exists but not one session file was found beside it."""
    data = manifest.agent_home("cline", env)
    index = data / "db" / "sessions.db" if data is not None else None
    if index is not None and os.path.isfile(index):
        yield Notice(
            source=str(index),
            reason=f"the Cline CLI keeps a session index here but no session file was found "
            f"under {sessions_dir(env)} (moved? Voyager reads CLINE_SESSION_DATA_DIR "
            "and CLINE_DATA_DIR)",
        )


def resume_command(root_id: str) -> str | None:
    """``cline --id <id>`` reopens a session in the TUI (a subagent through its root session)."""
    return resume_in(None, "cline", opt("--id", root_id))


# -- the CLI's messages file ------------------------------------------------------------------


def _result_text(content: Any) -> tuple[str, bool, int]:
    """A tool result's text, whether it reports a failure, and how many commands it answers. ``run_commands``
    answers one ``{query, result, success}`` per command; ``spawn_agent`` a JSON string holding the subagent's ``text``."""
    if isinstance(content, str):
        doc = tasks.json_object(content)
        if doc is not None and isinstance(doc.get("text"), str):
            return doc["text"], False, 1
        return content, False, 1
    if isinstance(content, list):
        parts: list[str] = []
        failed = False
        commands = 0
        for item in content:
            if isinstance(item, dict) and "result" in item:
                commands += 1
                parts.append(item["result"] if isinstance(item["result"], str) else compact_json(item["result"]))
                failed = failed or item.get("success") is False
            elif isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, str):
                parts.append(item)
            elif item is not None:
                parts.append(compact_json(item))
        return "\n".join(p for p in parts if p), failed, max(commands, 1)
    return ("" if content is None else compact_json(content)), False, 1


class _CliRead:
    """One read of one ``*.messages.json`` (a root session or one of its subagents)."""

    def __init__(self, source: Source, cursor: Cursor | None = None) -> None:
        self.path = Path(source.path)
        #: What the last read indexed of this session ([count, digest]): the CLI rewrites the whole file
        #: after each message, and a new turn should cost what it adds (see ``reread_delta``).
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.folder = self.path.parent
        self.root_id = self.folder.name
        self.stem = self.path.name[: -len(MESSAGES_SUFFIX)]
        self.is_root = self.stem == self.root_id
        self.unknown = UnknownRecords("Cline CLI")
        self.model: str | None = None
        self.tokens = [0, 0]
        self.first_ts: float | None = None
        self.last_ts: float | None = None

    def run(self) -> Iterator[Item]:
        # A session of hundreds of MB is streamed a message at a time (jsondoc.read_json_streamed).
        doc = read_json_streamed(self.path, "messages", ("sessionId", "updated_at", "origin"))
        if isinstance(doc, Notice):
            yield doc
            return
        if not isinstance(doc, dict):
            yield Notice(
                source=str(self.path), reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True
            )
            return
        messages = doc.get("messages")
        if not isinstance(messages, (list, StreamedArray)):
            yield Notice(
                source=str(self.path), reason="no 'messages' list: not a Cline CLI session file; skipped", fatal=True
            )
            return
        manifest = read_json_object(self.folder / f"{self.root_id}.json", fatal=False)
        if isinstance(manifest, Notice):
            if os.path.exists(manifest.source):
                yield manifest
            manifest = {}
        origin = doc.get("origin") if isinstance(doc.get("origin"), dict) else {}
        meta = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
        history = meta.get("sessionHistoryOrigin") if isinstance(meta.get("sessionHistoryOrigin"), dict) else {}
        self.unknown.version = str_or_none(origin.get("version")) or str_or_none(history.get("version"))
        native = str_or_none(doc.get("sessionId"))
        if self.is_root:
            native = native or self.root_id
        elif native is None or native == self.root_id:
            native = f"{self.root_id}__{self.stem}"
        sid = session_id(PROVIDER, native)
        counter = EventCounter(sid, 0)

        def session() -> Session:
            usage = meta.get("usage") if self.is_root and isinstance(meta.get("usage"), dict) else {}
            tin, tout = int_or_none(usage.get("inputTokens")), int_or_none(usage.get("outputTokens"))
            ended = max(
                (
                    t
                    for t in (
                        epoch(manifest.get("ended_at")) if self.is_root else None,
                        epoch(doc.get("updated_at")),
                        self.last_ts,
                    )
                    if t is not None
                ),
                default=None,
            )
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                # The CLI's title is the first prompt cut to 120 characters (no title call).
                title=str_or_none(meta.get("title")) if self.is_root else None,
                title_source="prompt",
                cwd=str_or_none(manifest.get("cwd")) or str_or_none(manifest.get("workspace_root")),
                model=self.model or str_or_none(manifest.get("model")),
                started=(epoch(manifest.get("started_at")) if self.is_root else None) or self.first_ts,
                updated=ended,
                parent=None if self.is_root else session_id(PROVIDER, self.root_id),
                resume=resume_command(self.root_id),
                source=str(self.path),
                tokens_in=tin if tin is not None else (self.tokens[0] or None),
                tokens_out=tout if tout is not None else (self.tokens[1] or None),
                agent_version=release(self.unknown.version),
            )

        first = session()
        yield first
        # The CLI wraps what a person typed; where a session does, unwrapped user text was injected.
        wraps = any("<user_input" in text for text in _user_texts(messages))
        person: Origin = "human" if self.is_root else "provider"
        seen: dict[str, None] = {}
        delta = DeltaStream(sid, self.before)
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw(type(message).__name__)
                continue
            mid = message.get("id")
            if isinstance(mid, str):
                if mid in seen:
                    continue  # the same message written twice
                seen[mid] = None
                if len(seen) > MAX_IDS_KEPT:  # a copy sits near its original: the oldest ids can go
                    del seen[next(iter(seen))]
            ts = epoch(message.get("ts"))
            if ts is not None:
                self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
                self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                continue
            role = message.get("role")
            if role == "user":
                produced = self._user(counter, blocks, ts, person, wraps)
            elif role == "assistant":
                self._assistant_facts(message)
                produced = tasks.assistant_blocks(counter, blocks, ts, self.unknown)
            else:
                self.unknown.saw(f"role:{role}")
                continue
            for item in produced:
                if isinstance(item, Event):
                    yield from delta.add(item)
                else:
                    yield item
        # Caught half-rewritten (or vanished): what was read stands, and the file is read again next scan.
        ended = list(stream_end(messages, str(self.path)))
        yield from ended
        if any(n.fatal for n in ended):
            return
        items, now = delta.finish()
        yield from items
        if (notice := self.unknown.notice(str(self.path))) is not None:
            yield notice
        last = session()
        if last != first:
            yield last
        yield Cursor(offset=0, next_seq=0, tail_hash="", session=sid, state={"delta": now})

    def _assistant_facts(self, message: dict[str, Any]) -> None:
        info = message.get("modelInfo")
        if isinstance(info, dict) and str_or_none(info.get("id")):
            self.model = info["id"]
        metrics = message.get("metrics")
        if isinstance(metrics, dict):
            self.tokens[0] += int_or_none(metrics.get("inputTokens")) or 0
            self.tokens[1] += int_or_none(metrics.get("outputTokens")) or 0

    def _user(
        self, counter: EventCounter, blocks: list[Any], ts: float | None, person: Origin, wraps: bool
    ) -> Iterator[Event]:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                text, failed, commands = _result_text(block.get("content"))
                # The exit code only where the text records it for the one command the result answers.
                codes = _EXITED.findall(text) if commands == 1 else []
                name = str_or_none(block.get("name"))
                # Cline's spawn_agent runs its subagent to the end: what it returns is the subagent's report.
                kind, origin = SUBAGENT_REPORT if name == "spawn_agent" else TOOL_OUTPUT
                ev = counter.make(
                    kind,
                    origin,
                    text,
                    ts=ts,
                    tool=name,
                    call_id=str_or_none(block.get("tool_use_id")),
                    exit_code=int(codes[0]) if len(codes) == 1 else None,
                    is_error=failed or block.get("is_error") is True,
                )
                if ev is not None:
                    yield ev
                continue
            if btype != "text" or not isinstance(block.get("text"), str):
                continue  # images, files
            text = block["text"]
            for m in _USER_INPUT.finditer(text):
                if (ev := counter.make("user", person, m.group(1).strip(), ts=ts)) is not None:
                    yield ev
            rest = _USER_INPUT.sub("", text).strip()
            if rest:
                injected = wraps or not self.is_root or rest.startswith("<mode_notice")
                kind, origin = ("meta", "provider") if injected and self.is_root else ("user", person)
                if (ev := counter.make(kind, origin, rest, ts=ts)) is not None:
                    yield ev


# -- the extension's task folders --------------------------------------------------------------


def _load_task_history(path: str) -> dict[str, dict[str, Any]]:
    # read_json: one task nested too deeply costs that task's facts, not every task's (it raised
    # RecursionError out of the read before).
    doc = read_json(path, fatal=False)
    items = doc if isinstance(doc, list) else []
    return {i["id"]: i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)}


def extension_facts(folder: Path) -> tasks.TaskFacts:
    """A task's title, cwd, model and token counts, from ``state/taskHistory.json`` and its ``task_metadata.json``."""
    history = cached_by_stat(str(folder.parent.parent / "state" / "taskHistory.json"), _load_task_history, {})
    item = history.get(folder.name, {})
    model = str_or_none(item.get("modelId"))
    meta = read_json_object(folder / "task_metadata.json", fatal=False)
    if isinstance(meta, dict) and isinstance(meta.get("model_usage"), list):
        used = [u for u in meta["model_usage"] if isinstance(u, dict) and str_or_none(u.get("model_id"))]
        if used:
            model = used[-1]["model_id"]
    return tasks.TaskFacts(
        title=tasks.task_title(item.get("task")),
        cwd=str_or_none(item.get("cwdOnTaskInitialization")),
        model=model,
        updated=epoch(item.get("ts")),
        tokens_in=int_or_none(item.get("tokensIn")),
        tokens_out=int_or_none(item.get("tokensOut")),
    )


class ClineAdapter:
    """Cline: the CLI's ``sessions/*/*.messages.json`` and the VS Code extension's task folders."""

    name: ClassVar[str] = "cline"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [sessions_dir(env), *(d / "tasks" for d in extension_dirs(env))]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        found = False
        for item in discover_cli(sessions_dir(env)):
            found = found or isinstance(item, Source)
            yield item
        if not found:
            yield from _index_without_sessions(env)
        for storage in extension_dirs(env):
            yield from tasks.discover_tasks(
                storage, PROVIDER, "Cline (VS Code)", ("task_metadata.json",), index="state/taskHistory.json"
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if os.path.isdir(source.path):
            folder = Path(source.path)
            return tasks.TaskRead(source, PROVIDER, "Cline (VS Code)", extension_facts(folder)).run()
        return _CliRead(source, cursor).run()


def _user_texts(messages: Iterable[Any]) -> Iterator[str]:
    """The text blocks (and string contents) of the user messages: where a prompt wrapper can stand."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                yield content
            elif isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                        yield block["text"]


def probe(path: str) -> str:
    """The shape of a source for ``voyager doctor``: ``cli``, or the view a task folder is read from."""
    return tasks.task_shape(path) if os.path.isdir(path) else "cli"


ADAPTER = ClineAdapter()
