"""Kiro's append-only JSONL sessions: the CLI's ``~/.kiro/sessions/cli/<id>.jsonl`` and ``sess_<id>/messages.jsonl``.

Two documented layouts, one reader (the loop is :class:`~._common.JsonlSessionRead`: read
from the cursor's byte offset, a half-written last line retried):

``cli-jsonl``           ``~/.kiro/sessions/cli/<uuid>.jsonl`` with ``<uuid>.json`` beside it
                        (``session_id``, ``cwd``, ``title``, ``created_at``, ``updated_at``);
                        described by FAD, AV and DJ on kiro-cli 2.22.
``session-dir-jsonl``   ``~/.kiro/sessions/<workspace>/sess_<uuid>/messages.jsonl`` with
                        ``session.json`` (DJ); no sample of it exists anywhere.

A line is ``{"kind": "Prompt" | "AssistantMessage" | "ToolResults", "data": {"content":
[blocks], "meta": {"timestamp": <epoch s>}}}``; blocks are ``{"kind": "text", "data": …}``,
``{"kind": "toolUse", "data": {toolUseId, name, input}}`` and ``{"kind": "toolResult",
"data": {toolUseId, content, status}}``. Since nobody has seen a ``messages.jsonl``, a line
shaped as a plain chat message (``role`` + ``content``) is read as well. Kinds of line or
block Voyager does not know are counted and named, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    cached_by_stat,
    compact_json,
    epoch,
    parse_ts,
    release,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, exit_code, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Source
from voyager_sessions.ingest.files import open_regular
from voyager_sessions.ingest.jsonl import Record, decode_line
from voyager_sessions.core.model import Session

PROVIDER = "kiro"

#: Kiro's shell tools (kiro-cli's ``execute_bash``, later ``shell``): indexed as the command.
SHELL_TOOLS = frozenset({"execute_bash", "executebash", "execute_cmd", "shell", "bash", "execute_command"})
#: Content blocks that carry nothing to search (attachments): skipped without a word.
_QUIET_BLOCKS = frozenset({"image"})


def _quiet(kind: Any) -> bool:
    """A block kind known to carry nothing to index (a list or object kind is unhashable: never one)."""
    return isinstance(kind, str) and kind in _QUIET_BLOCKS


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``kiro-cli chat --resume-id <id>``: kiro.dev's session-management page documents it, and sessions
    are kept per directory, so it runs in the session's cwd."""
    return resume_in(cwd, "kiro-cli", "chat", opt("--resume-id", native_id))


def _load_object(path: str) -> dict[str, Any]:
    with open_regular(path) as fh:
        value = decode_line(fh.read(1 << 22).strip() or b"{}")
    return value if isinstance(value, dict) else {}


def side_file(path: Path) -> dict[str, Any]:
    """A metadata file's JSON object, read once per change; {} when absent or unreadable."""
    return cached_by_stat(str(path), _load_object, {})


def tool_result(blocks: Any) -> tuple[str, int | None]:
    """(text, exit code) of a tool result's content blocks, in either spelling Kiro uses:
    ``{"kind": "text"|"json", "data": …}`` (CLI JSONL) or ``{"Text": …}`` / ``{"Json": …}`` (SQLite)."""
    if isinstance(blocks, str):
        return blocks, None
    texts: list[str] = []
    code: int | None = None
    for block in blocks if isinstance(blocks, list) else [blocks]:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        if "kind" in block:
            kind, value = block.get("kind"), block.get("data")
        elif len(block) == 1:
            kind, value = next(iter(block.items()))
        else:
            kind, value = "json", block
        kind = str(kind).lower()
        if kind == "text" and isinstance(value, str):
            texts.append(value)
        elif kind == "json":
            text, found = _json_output(value)
            texts.append(text)
            code = found if found is not None else code
    return "\n".join(t for t in texts if t), code


def _json_output(value: Any) -> tuple[str, int | None]:
    """A JSON tool output: a shell run's ``stdout``/``stderr`` (and its recorded exit status), else compact JSON."""
    if not isinstance(value, dict):
        return compact_json(value), None
    code = None
    for key in ("exit_status", "exitStatus", "exit_code", "exitCode"):
        code = exit_code(value.get(key))
        if code is not None:
            break
    streams = [value[k] for k in ("stdout", "stderr") if isinstance(value.get(k), str) and value[k]]
    return ("\n".join(streams) if streams else compact_json(value)), code


def failed(status: Any) -> bool:
    return isinstance(status, str) and status.lower() in ("error", "failed", "failure")


class KiroStreamRead(JsonlSessionRead):
    """One pass over one Kiro JSONL session (or what was appended since the cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None, *, layout: str) -> None:
        self._start(source.path, cursor, "Kiro CLI" if layout == "cli-jsonl" else "Kiro")
        self.layout = layout
        path = Path(source.path)
        self.meta_path = path.with_suffix(".json") if layout == "cli-jsonl" else path.parent / "session.json"
        if self.counter is None:  # the cursor does not know the session yet
            meta = side_file(self.meta_path)
            fallback = path.stem if layout == "cli-jsonl" else path.parent.name.removeprefix("sess_")
            self._identify(str_or_none(meta.get("session_id")) or str_or_none(meta.get("sessionId")) or fallback)

    def _session(self) -> Session:
        meta = side_file(self.meta_path)
        facts = self.facts
        native = facts.native_id
        assert native is not None
        facts.cwd = facts.cwd or next(
            (
                v
                for k in ("cwd", "workspacePath", "workspaceDirectory", "working_directory")
                if (v := str_or_none(meta.get(k)))
            ),
            None,
        )
        for key in ("created_at", "updated_at", "createdAt", "updatedAt"):
            facts.observe_ts(epoch(meta.get(key)))
        title = str_or_none(meta.get("title"))
        if title == native or title == self.meta_path.stem:
            title = None  # kiro-cli names a session after its id until it has a title
        resume = resume_command(facts.cwd, native) if self.layout == "cli-jsonl" else None
        return facts.session(PROVIDER, title=title, resume=resume, source=self.path)

    def _record(self, record: Record) -> Iterator[Item]:
        value = record.value
        if not isinstance(value, dict):
            self.unknown.saw(type(value).__name__)
            return
        version = str_or_none(value.get("version"))
        if version:
            self.unknown.version = version
            self.facts.agent_version = release(version) or self.facts.agent_version
        assert self.counter is not None
        drafts = self._line(value) if "kind" in value else self._message(value)
        yield from number(self.counter, drafts)

    # -- the CLI's records --------------------------------------------------------------

    def _line(self, line: dict[str, Any]) -> Iterator[Draft]:
        kind = line.get("kind")
        data = line.get("data") if isinstance(line.get("data"), dict) else {}
        meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
        ts = epoch(meta.get("timestamp")) or epoch(line.get("timestamp"))
        self.facts.observe_ts(ts)
        blocks = data.get("content") if isinstance(data.get("content"), list) else []
        if kind == "Prompt":
            yield ("user", "human", self._texts(blocks), {"ts": ts})
        elif kind == "AssistantMessage":
            for block in blocks:
                yield from self._assistant_block(block, ts)
        elif kind == "ToolResults":
            for block in blocks:
                if (
                    isinstance(block, dict)
                    and block.get("kind") == "toolResult"
                    and isinstance(block.get("data"), dict)
                ):
                    result = block["data"]
                    text, code = tool_result(result.get("content"))
                    yield (
                        "tool_result",
                        "tool",
                        text,
                        {
                            "ts": ts,
                            "call_id": str_or_none(result.get("toolUseId")),
                            "exit_code": code,
                            "is_error": failed(result.get("status")),
                        },
                    )
                elif isinstance(block, dict):
                    self.unknown.saw(f"block:{block.get('kind')}")
        else:
            self.unknown.saw(kind)

    def _texts(self, blocks: list[Any]) -> str:
        texts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("kind") == "text" and isinstance(block.get("data"), str):
                texts.append(block["data"])
            elif not _quiet(block.get("kind")):
                self.unknown.saw(f"block:{block.get('kind')}")
        return "\n".join(texts)

    def _assistant_block(self, block: Any, ts: float | None) -> Iterator[Draft]:
        if not isinstance(block, dict):
            return
        kind, data = block.get("kind"), block.get("data")
        if kind == "text":
            yield ("assistant", "agent", data, {"ts": ts})
        elif kind in ("reasoning", "thinking") and isinstance(data, str):
            yield ("reasoning", "agent", data, {"ts": ts})
        elif kind == "toolUse" and isinstance(data, dict):
            name = str_or_none(data.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, data.get("input"), SHELL_TOOLS),
                {"ts": ts, "tool": name, "call_id": str_or_none(data.get("toolUseId"))},
            )
        elif not _quiet(kind):
            self.unknown.saw(f"block:{kind}")

    # -- a plain chat message (the undocumented messages.jsonl) -----------------------

    def _message(self, message: dict[str, Any]) -> Iterator[Draft]:
        role = message.get("role")
        ts = epoch(message.get("timestamp")) or parse_ts(message.get("createdAt"))
        self.facts.observe_ts(ts)
        content = message.get("content")
        if role == "user":
            if isinstance(content, str):
                yield ("user", "human", content, {"ts": ts})
                return
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    yield ("user", "human", block.get("text"), {"ts": ts})
                elif block.get("type") == "tool_result":
                    text, code = tool_result(block.get("content"))
                    yield (
                        "tool_result",
                        "tool",
                        text,
                        {
                            "ts": ts,
                            "call_id": str_or_none(block.get("tool_use_id")),
                            "exit_code": code,
                            "is_error": block.get("is_error") is True,
                        },
                    )
                elif not _quiet(block.get("type")):
                    self.unknown.saw(f"block:{block.get('type')}")
        elif role == "assistant":
            if isinstance(content, str):
                yield ("assistant", "agent", content, {"ts": ts})
                return
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text":
                    yield ("assistant", "agent", block.get("text"), {"ts": ts})
                elif btype in ("thinking", "reasoning"):
                    yield ("reasoning", "agent", block.get("thinking") or block.get("text"), {"ts": ts})
                elif btype == "tool_use":
                    name = str_or_none(block.get("name"))
                    yield (
                        "tool_call",
                        "agent",
                        tool_call_text(name, block.get("input"), SHELL_TOOLS),
                        {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
                    )
                elif not _quiet(btype):
                    self.unknown.saw(f"block:{btype}")
        elif role == "tool":
            text, code = tool_result(content)
            yield (
                "tool_result",
                "tool",
                text,
                {"ts": ts, "call_id": str_or_none(message.get("tool_call_id")), "exit_code": code},
            )
        elif role == "system":
            return  # a system prompt: not what anyone said
        else:
            self.unknown.saw(f"role:{role}")


def layout_of(path: str) -> str:
    """``cli-jsonl`` or ``session-dir-jsonl``: which of the two JSONL layouts ``path`` is."""
    p = Path(path)
    if p.name == "messages.jsonl" and p.parent.name.startswith("sess_"):
        return "session-dir-jsonl"
    return "cli-jsonl"


def read_stream(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    """Stream one JSONL session, from the cursor's offset when there is one."""
    return KiroStreamRead(source, cursor, layout=layout_of(source.path)).run()


def is_session_dir(name: str) -> bool:
    return name.startswith("sess_") and len(name) > len("sess_")
