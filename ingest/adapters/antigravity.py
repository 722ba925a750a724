"""The Antigravity adapter: the ``brain/<id>/.system_generated/logs/`` transcripts, read-only.

Antigravity (Google; CLI ``agy``, IDE, desktop) keeps each conversation's steps as JSONL in
``~/.gemini/antigravity*/brain/<uuid>/.system_generated/logs/``: ``transcript.jsonl`` (long
fields cut, named in ``truncated_fields``) and ``transcript_full.jsonl`` (the same steps
whole). One of them is read, never both: ``transcript_full.jsonl`` when it exists.

Two documented shapes of a line (``probe`` names which a file is):

``steps``         ``{step_index, source, type, status, created_at, content, thinking, tool_calls}``
                  (agent-sessions' fixture, trimmed from a real capture): ``USER_INPUT`` is what
                  the person typed (the ``<USER_REQUEST>`` in it; settings changes beside it are
                  ``meta``), ``PLANNER_RESPONSE`` the model (``thinking`` = reasoning, ``content``
                  = reply, ``tool_calls``), the tool steps (``LIST_DIRECTORY``, ``VIEW_FILE``,
                  ``RUN_COMMAND``, ``CODE_ACTION``, ``SEARCH_WEB``, ``GREP_SEARCH``, ``TOOL_RESPONSE``)
                  their results, ``CHECKPOINT`` (a compaction summary) and ``SYSTEM_MESSAGE``
                  ``meta``; ``CONVERSATION_HISTORY`` carries nothing. Other types are counted.
``source-lines``  deja-vu's two-line variant: ``{source: USER_EXPLICIT | MODEL, created_at,
                  content}``, the cwd in ``<ADDITIONAL_METADATA>`` inside the request.

Antigravity's other store, ``conversations/<uuid>.db`` (SQLite whose steps are protobuf blobs)
and encrypted ``.pb`` files, has no sample anywhere and no published schema: decoding it
would be guesswork about field numbers. Voyager does not read it; a conversation kept only
there is *named* in ``doctor`` and the scan (a Notice from discovery), never silently left
out. One that also has a brain transcript is read from the transcript.

Only ``antigravity*`` folders are looked into: ``~/.gemini``'s other contents are Gemini CLI's.
``VOYAGER_ANTIGRAVITY_HOME`` names the folder holding them (default ``~/.gemini``), or one
Antigravity folder itself. Antigravity has no resume command Voyager knows of.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import JsonlSessionRead, list_or_empty, parse_ts, str_or_none
from voyager_sessions.ingest.adapters._drafts import Draft, json_value, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Item, Notice, Source
from voyager_sessions.ingest.files import kind_of, open_regular
from voyager_sessions.ingest.jsonl import BadLine, Record, decode_line
from voyager_sessions.core.model import Session

PROVIDER = "antigravity"
TRANSCRIPTS = ("transcript_full.jsonl", "transcript.jsonl")
LOGS = (".system_generated", "logs")

#: Step types whose content is a tool's result.
TOOL_STEPS = frozenset(
    {"LIST_DIRECTORY", "VIEW_FILE", "RUN_COMMAND", "CODE_ACTION", "SEARCH_WEB", "GREP_SEARCH", "TOOL_RESPONSE"}
)
#: Step types that are Antigravity's own context: indexed as meta.
META_STEPS = frozenset({"CHECKPOINT", "SYSTEM_MESSAGE"})
#: Step types that carry nothing to search.
QUIET_STEPS = frozenset({"CONVERSATION_HISTORY"})
SHELL_TOOLS = frozenset({"run_command", "run_terminal_command", "shell"})

_REQUEST = re.compile(r"<USER_REQUEST>(.*?)(?:</USER_REQUEST>|$)", re.DOTALL)
_METADATA = re.compile(r"<ADDITIONAL_METADATA>(.*?)</ADDITIONAL_METADATA>", re.DOTALL)


def antigravity_dirs(env: Mapping[str, str]) -> list[Path]:
    """Antigravity's folders: every ``antigravity*`` folder in the home, or the home itself when it is one."""
    base = manifest.agent_home("antigravity", env)
    assert base is not None
    if os.path.isdir(base / "brain") or os.path.isdir(base / "conversations"):
        return [base]
    found = {base / name for name in ("antigravity-cli", "antigravity", "antigravity-ide")}
    try:
        with os.scandir(base) as it:
            found.update(Path(e.path) for e in it if e.name.startswith("antigravity") and e.is_dir())
    except OSError:
        pass
    return sorted(found)


def split_request(content: str) -> tuple[str, str, str | None]:
    """(what the person typed, what Antigravity wrapped around it, the cwd its metadata names)."""
    cwd: str | None = None
    extra: list[str] = []
    for m in _METADATA.finditer(content):
        meta = json_value(m.group(1).strip())
        if isinstance(meta, dict):
            cwd = cwd or str_or_none(meta.get("cwd")) or str_or_none(meta.get("workspace"))
        extra.append(m.group(1).strip())
    body = _METADATA.sub("", content)
    requests = [m.group(1).strip() for m in _REQUEST.finditer(body)]
    if not requests:
        return body.strip(), "\n".join(extra), cwd
    around = _REQUEST.sub("", body).strip()
    return "\n".join(requests), "\n".join(t for t in (around, *extra) if t), cwd


def _arguments(args: Any) -> Any:
    """Tool arguments with each value JSON-decoded when Antigravity wrote it as a JSON string (``"\\"/tmp\\""``)."""
    if isinstance(args, str):
        decoded = json_value(args)
        return decoded if decoded is not None else args
    if not isinstance(args, dict):
        return args
    out = {}
    for key, value in args.items():
        decoded = json_value(value) if isinstance(value, str) else None
        out[key] = decoded if decoded is not None else value
    return out


class _TranscriptRead(JsonlSessionRead):
    """One pass over one brain transcript (or what was appended to it since the cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self._start(source.path, cursor, "Antigravity")
        self._identify(Path(source.path).parent.parent.parent.name)

    def _session(self) -> Session:
        return self.facts.session(PROVIDER, title=None, resume=None, source=self.path)

    def _record(self, record: Record) -> Iterator[Item]:
        step = record.value
        if not isinstance(step, dict):
            self.unknown.saw(type(step).__name__)
            return
        assert self.counter is not None
        yield from number(self.counter, self._step(step))

    def _step(self, step: dict[str, Any]) -> Iterator[Draft]:
        ts = parse_ts(step.get("created_at"))
        self.facts.observe_ts(ts)
        stype, source = step.get("type"), step.get("source")
        if stype is not None and not isinstance(stype, str):  # a list or object: unhashable, and no step type
            self.unknown.saw(f"step of type {type(stype).__name__}")
            return
        content = said if isinstance(said := step.get("content"), str) else ""
        if stype == "USER_INPUT" or (stype is None and source == "USER_EXPLICIT"):
            typed, around, cwd = split_request(content)
            self.facts.cwd = self.facts.cwd or cwd
            yield ("user", "human", typed, {"ts": ts})
            yield ("meta", "provider", around, {"ts": ts})
        elif stype == "PLANNER_RESPONSE" or (stype is None and source == "MODEL"):
            yield ("reasoning", "agent", step.get("thinking"), {"ts": ts})
            yield ("assistant", "agent", content, {"ts": ts})
            for call in list_or_empty(step.get("tool_calls")):
                yield from self._call(call, ts)
        elif stype in TOOL_STEPS:
            yield (
                "tool_result",
                "tool",
                content,
                {"ts": ts, "tool": stype.lower(), "is_error": step.get("status") in ("ERROR", "FAILED")},
            )
        elif stype in META_STEPS or (stype is None and source == "SYSTEM"):
            yield ("meta", "provider", content, {"ts": ts})
        elif stype == "ERROR_MESSAGE":
            yield ("meta", "provider", content, {"ts": ts, "is_error": True})
        elif stype not in QUIET_STEPS:
            self.unknown.saw(stype if stype is not None else f"source:{source}")

    def _call(self, call: Any, ts: float | None) -> Iterator[Draft]:
        if not isinstance(call, dict):
            return
        fn = inner if isinstance(inner := call.get("function"), dict) else call
        name = str_or_none(fn.get("name"))
        args = _arguments(fn.get("args", fn.get("arguments")))
        yield (
            "tool_call",
            "agent",
            tool_call_text(name, args, SHELL_TOOLS),
            {"ts": ts, "tool": name, "call_id": str_or_none(call.get("id"))},
        )


def _transcript(session_dir: Path) -> Path | None:
    logs = session_dir.joinpath(*LOGS)
    for name in TRANSCRIPTS:
        if os.path.exists(logs / name):
            return logs / name
    return None


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


class AntigravityAdapter:
    """Antigravity's brain transcripts; its protobuf conversation stores are named, not read."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [d / sub for d in antigravity_dirs(env) for sub in ("brain", "conversations")]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for folder in antigravity_dirs(env):
            readable: set[str] = set()
            for entry in _listing(folder / "brain"):
                if not entry.is_dir():
                    continue
                transcript = _transcript(Path(entry.path))
                if transcript is None:
                    continue
                try:
                    st = os.stat(transcript)
                except OSError:
                    continue
                if not os.path.isfile(transcript):
                    yield Notice(source=str(transcript), reason=f"{kind_of(st.st_mode)}, not a regular file; skipped")
                    continue
                readable.add(entry.name)
                yield Source(
                    provider=PROVIDER,
                    path=str(transcript),
                    append_only=True,
                    fingerprint=Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino),
                )
            unread = [
                e.name
                for e in _listing(folder / "conversations")
                if e.name.endswith((".db", ".pb")) and e.name.rsplit(".", 1)[0] not in readable
            ]
            if unread:
                yield Notice(
                    source=str(folder / "conversations"),
                    reason=f"{len(unread)} Antigravity conversation store(s) ({', '.join(unread[:3])}"
                    f"{' …' if len(unread) > 3 else ''}) with no brain transcript: SQLite with protobuf "
                    "blobs (or encrypted .pb), which this version of Voyager cannot read",
                )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _TranscriptRead(source, cursor).run()


ADAPTER = AntigravityAdapter()


def probe(path: str | os.PathLike[str]) -> str:
    """``<file stem>:steps`` or ``<file stem>:source-lines``: which transcript and which documented shape."""
    p = Path(path)
    stem = p.name.removesuffix(".jsonl")
    try:
        with open_regular(p) as fh:
            first = fh.readline(1 << 20)
    except OSError:
        return "unreadable"
    try:
        value = decode_line(first.strip()) if first.strip() else {}
    except BadLine:
        return "unknown-schema"
    if not isinstance(value, dict):
        return "unknown-schema"
    if "step_index" in value or "type" in value:
        return f"{stem}:steps"
    if "source" in value:
        return f"{stem}:source-lines"
    return f"{stem}:empty" if not value else "unknown-schema"
