"""The Reasonix adapter: ``~/.reasonix/projects/<cwd>/sessions-v4/<id>/events.frames`` (observed, 1.38.11).

Owns what Voyager knows about Reasonix's session log (format ``reasonix.session.linear/v4``). A session
is a folder named by its 32-hex id, in a folder per project (its cwd with ``/`` written ``-``);
``events.frames`` is its log, append-only, a sequence of frames: ``b"RX4F"``, the compressed length and
the raw length (big-endian u32 each), then one zstd frame that decompresses to one JSON record:

* ``batch/begin`` (``createdAt``: the time of the batch; the events' own ``createdAt`` is the zero time),
  ``batch/event`` (``event: {id, seq, kind, payload}``, the payload base64 of a JSON document) and
  ``batch/end``. A batch counts once its ``batch/end`` is written: a trailing batch without one is a
  write that was interrupted (or is under way) and is not read, and the cursor stays before it.
* event kinds: ``message/complete`` (``payload.message``: ``system``; ``user`` with ``origin: "user"``,
  the person's text in ``raw_content`` (``content`` prefixes an injected ``<reasoning-language>``
  block), or ``origin: "host"``, a context snapshot (meta, which also names the workspace);
  ``assistant`` with ``reasoning_content`` and ``tool_calls``; ``tool`` with ``tool_execution.exitCode``),
  ``session/config`` (``modelRef``); ``tool/call``, ``tool/start``, ``tool/result`` (a second copy
  of the call and its output), ``turn/start``, ``turn/end`` and ``assistant/attempt`` carry nothing a
  message does not: skipped.

Frames are decompressed through ``ingest/zstd.py`` with a cap (the raw length the frame states, and
never more than the line cap), so a crafted frame cannot inflate without limit; a frame that cannot be
read costs itself only (the reader skips it by its stated length, or finds the next ``RX4F``). Beside
the log, ``.recovery-cache`` and ``.query-cache`` keep plain copies of recent messages: never read.
Resume: ``reasonix --resume <id>`` in the session's directory.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import msgspec

from voyager_sessions.ingest import manifest, zstd
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    epoch,
    EventCounter,
    int_or_none,
    openai_tool_calls,
    opt,
    parse_ts,
    resume_in,
    SessionFacts,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters._drafts import Draft, exit_code, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import open_regular, read_notice, walk_files
from voyager_sessions.ingest.jsonl import Record, cursor_after, decode_json, max_line_bytes
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "reasonix"
LABEL = "Reasonix"
LOG = "events.frames"
MAGIC = b"RX4F"
_HEADER = struct.Struct(">4sII")
SHELL_TOOLS = frozenset({"bash", "shell", "run_command"})
_WORKSPACE = re.compile(r'^Current workspace: "(.+)"$', re.M)
#: Event kinds that repeat what a message says, or say nothing to search: skipped without a word.
_QUIET = frozenset({"tool/call", "tool/start", "tool/result", "turn/start", "turn/end", "assistant/attempt"})
#: Events one batch may hold before it is read as it stands (a batch is a few events; this bounds memory).
_MAX_BATCH = 4096


def project_roots(env: Mapping[str, str]) -> list[Path]:
    base = manifest.agent_home(PROVIDER, env)
    assert base is not None
    return [base / "projects"]


def resume_command(cwd: str | None, native: str) -> str | None:
    return resume_in(cwd, "reasonix", opt("--resume", native))


class Frame(msgspec.Struct, frozen=True):
    """One frame: where it starts and ends in the file, and its record (None when it could not be read)."""

    start: int
    end: int
    record: dict[str, Any] | None


def frames(fh: BinaryIO, offset: int, path: str, notices: list[Notice]) -> Iterator[Frame]:
    """The frames from ``offset`` on. A damaged frame is named in ``notices`` and skipped; a frame cut short
    at the end of the file (still being written) ends the stream."""
    cap = max_line_bytes()
    pos = offset
    fh.seek(pos)
    while True:
        head = fh.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return
        magic, clen, rlen = _HEADER.unpack(head)
        if magic != MAGIC:
            found = _next_magic(fh, pos + 1)
            notices.append(Notice(source=path, where=f"byte {pos}", reason="not a frame; skipped to the next one"))
            if found is None:
                return
            pos = found
            fh.seek(pos)
            continue
        end = pos + _HEADER.size + clen
        if clen > cap or rlen > cap:
            notices.append(
                Notice(
                    source=path,
                    where=f"byte {pos}",
                    reason=f"a frame of {max(clen, rlen):,} bytes: over the cap; skipped",
                )
            )
            if end > os.fstat(fh.fileno()).st_size:
                return  # (or cut short)
            fh.seek(end)
            pos = end
            continue
        data = fh.read(clen)
        if len(data) < clen:
            return  # cut short: the writer is still at it
        try:
            raw = zstd.decompress_blob(data, limit=rlen)
            record = decode_json(raw)
        except zstd.ZstdError as exc:
            notices.append(Notice(source=path, where=f"byte {pos}", reason=f"{exc}; frame skipped"))
            record = None
        except (msgspec.DecodeError, RecursionError):
            notices.append(Notice(source=path, where=f"byte {pos}", reason="a frame that is not JSON; skipped"))
            record = None
        yield Frame(pos, end, record if isinstance(record, dict) else None)
        pos = end


def _next_magic(fh: BinaryIO, start: int) -> int | None:
    """Where the next ``RX4F`` begins at or after ``start`` (read a block at a time), or None."""
    fh.seek(start)
    carry = b""
    base = start
    while block := fh.read(1 << 16):
        buf = carry + block
        at = buf.find(MAGIC)
        if at >= 0:
            return base - len(carry) + at
        carry = buf[-(len(MAGIC) - 1) :]
        base += len(block)
    return None


class _LogRead:
    """One pass over one session's log (or what was appended since the cursor)."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.native = Path(source.path).parent.name
        self.sid = session_id(PROVIDER, self.native)
        self.cursor = cursor
        state = cursor.state if cursor is not None else {}
        self.facts = SessionFacts.from_state(state)
        self.facts.native_id = self.native
        self.counter = EventCounter(self.sid, cursor.next_seq if cursor is not None else 0)
        self.unknown = UnknownRecords(LABEL)

    def _session(self) -> Session:
        return self.facts.session(
            PROVIDER, title=None, resume=resume_command(self.facts.cwd, self.native), source=self.path
        )

    def run(self) -> Iterator[Item]:
        offset = self.cursor.offset if self.cursor is not None else 0
        try:
            fh = open_regular(self.path)
        except OSError as exc:
            yield read_notice(self.path, exc, what="open")
            return
        sent = self._session()
        yield sent
        notices: list[Notice] = []
        committed: Frame | None = None
        batch: list[dict[str, Any]] = []
        batch_ts: float | None = None
        open_batch = False
        with fh:
            try:
                for frame in frames(fh, offset, self.path, notices):
                    yield from notices
                    notices.clear()
                    record = frame.record
                    if record is None:
                        continue
                    kind = record.get("recordType")
                    if kind == "batch/begin":
                        batch, open_batch = [], True
                        batch_ts = parse_ts(record.get("createdAt"))
                        self.facts.observe_ts(batch_ts)
                    elif kind == "batch/event" and open_batch:
                        batch.append(as_dict(record.get("event")))
                        if len(batch) >= _MAX_BATCH:
                            yield from number(self.counter, self._events(batch, batch_ts))
                            batch = []
                    elif kind == "batch/end" and open_batch:
                        yield from number(self.counter, self._events(batch, batch_ts))
                        batch, open_batch = [], False
                        committed = frame
                    else:
                        self.unknown.saw(f"record:{kind}")
                yield from notices
            except OSError as exc:
                yield Notice(source=self.path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                return
        if (notice := self.unknown.notice(self.path)) is not None:
            yield notice
        final = self._session()
        if final != sent:
            yield final
        yield self._cursor(committed)

    def _cursor(self, committed: Frame | None) -> Cursor:
        if committed is None:
            if self.cursor is not None:
                return self.cursor
            return Cursor(offset=0, next_seq=0, tail_hash="", session=self.sid, state=self.facts.to_state())
        span = Record(value=None, start=committed.start, end=committed.end, complete=True, lineno=0)
        return cursor_after(self.path, span, next_seq=self.counter.seq, session=self.sid, state=self.facts.to_state())

    def _events(self, batch: list[dict[str, Any]], ts: float | None) -> Iterator[Draft]:
        for event in batch:
            kind = event.get("kind")
            if kind in _QUIET:
                continue
            payload = _payload(event.get("payload"))
            if payload is None:
                self.unknown.saw(f"{kind}:payload")
                continue
            if kind == "message/complete":
                yield from self._message(as_dict(payload.get("message")), ts)
            elif kind == "session/config":
                model = str_or_none(payload.get("modelRef"))
                if model:
                    self.facts.model = model.split("/", 1)[-1]
            else:
                self.unknown.saw(kind)

    def _message(self, message: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user":
            when = epoch(message.get("createdAt")) or ts
            if message.get("origin") == "host":
                m = _WORKSPACE.search(text)
                if m and self.facts.cwd is None:
                    self.facts.cwd = m.group(1)
                yield ("meta", "provider", text, {"ts": when})
            else:
                raw = message.get("raw_content")
                yield ("user", "human", raw if isinstance(raw, str) else text, {"ts": when})
        elif role == "assistant":
            yield ("reasoning", "agent", str_or_none(message.get("reasoning_content")), {"ts": ts})
            yield ("assistant", "agent", text, {"ts": ts})
            for call in openai_tool_calls(message.get("tool_calls")):
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(call.name, call.arguments, SHELL_TOOLS),
                    {"ts": ts, "tool": call.name, "call_id": call.id},
                )
        elif role == "tool":
            execution = as_dict(message.get("tool_execution"))
            code = exit_code(execution.get("exitCode"))
            yield (
                "tool_result",
                "tool",
                text,
                {
                    "ts": ts,
                    "tool": str_or_none(message.get("name")),
                    "call_id": str_or_none(message.get("tool_call_id")),
                    "exit_code": code,
                    "is_error": code is not None and code != 0,
                },
            )
        elif role == "system":
            yield ("meta", "provider", text, {"ts": ts})
        else:
            self.unknown.saw(f"role:{role}")
        usage = as_dict(message.get("usage"))
        if usage:
            self.facts.tokens_in = (self.facts.tokens_in or 0) + (int_or_none(usage.get("prompt_tokens")) or 0)
            self.facts.tokens_out = (self.facts.tokens_out or 0) + (int_or_none(usage.get("completion_tokens")) or 0)


def _payload(value: Any) -> dict[str, Any] | None:
    """An event's payload: base64 of a JSON object (or the object itself)."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        decoded = decode_json(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError, msgspec.DecodeError, RecursionError):
        return None
    return decoded if isinstance(decoded, dict) else None


class ReasonixAdapter:
    """Reasonix's per-project session logs."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return project_roots(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in self.roots(env):
            # projects/<cwd>/sessions-v4/<id>/events.frames; the caches and content store (dot folders) hold
            # copies, not sessions.
            yield from walk_files(
                root, LOG, PROVIDER, match=lambda name: name == LOG, skip_dir=lambda name: name.startswith(".")
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _LogRead(source, cursor).run()


ADAPTER = ReasonixAdapter()
