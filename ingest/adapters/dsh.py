"""The DeepSeek Harness adapter (``dsh``, documented): zstd-compressed JSONL session logs.

Where: ``<sessions>/<--cwd slug-->/<session dir>/session.jsonl.zstd`` under ``$DSH_HOME/sessions``
(default ``~/.dsh/sessions``), ``~/.deepseek-harness/sessions`` and ``~/.config/dsh/sessions``
(the other roots the harness's PyPI companion probes), and ``<cwd>/.dsh/sessions`` in the
working directories of sessions Voyager has indexed (the companion probes ``./.dsh/sessions``
too). The harness can be configured to write raw lines (``session.jsonl``): both are read,
and when a directory holds both, the compressed log (the default) is the session and the
other a copy.

The log is written as consecutive zstd frames (one line a frame, or several lines a
frame) and rewritten or appended frame by frame, so a changed file is read again whole
(``append_only=False``): appending frames could be resumed only by proving every earlier
frame untouched, which a stat cannot. Decompression streams through ``ingest/zstd.py``.

The first line is the session header (``id``, ``createdAt`` ms, ``cwd``, and for a fork or
a subagent ``parentSession``, ``origin: "subagent"``, ``seedLength``: the events before
``seedLength`` are the parent's, copied, and are not indexed again). Every other line is
``{type, seq, time (ms), data}``; the mapping (from deja-vu's reader, verified against dsh
0.1.1-rc.2, and agentsview's, which pins the format in its tests):

* ``user/message``: ``data.source.kind == "user"`` is a person's prompt (in a subagent's
  session, the parent agent's: user/provider); any other source (``plugin``: the runtime
  context, skill catalogues) is injected text, ``meta``.
* ``assistant/message``: the complete reply: ``text`` blocks are ``assistant``, ``reasoning``
  blocks ``reasoning``, ``tool-call`` blocks ``tool_call``. Its streamed copies
  (``assistant/chunk`` deltas and block ends, packed ``text-chunks``/``reasoning-chunks``/
  ``tool-call-chunks`` rows) are indexed only for a step that never got its complete
  message (an interrupted run), and then once.
* ``tool/call`` (the same call as a ``tool-call`` block, indexed once) and ``tool/result``
  (nested ``tool-result`` blocks; ``isError``; no exit code is recorded).
* ``compaction/summary`` is ``meta``; ``session/title`` names the session (the newest wins;
  ``source.kind: "user"`` is a person's rename).
* A surface event whose ``surfaceOp`` is a ``replace`` rewrites messages already in the log
  (compaction, pruning): a copy, not indexed.

Resume: none. The seed product printed ``dsh --resume``, but deja-vu found no bundle that
takes it in dsh 0.1.1-rc.2 and no exact form could be pinned, so no command is printed.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    DeltaStream,
    EventCounter,
    SessionFacts,
    UnknownRecords,
    as_dict,
    compact_json,
    epoch,
    int_or_none,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import BadLine, decode_line, read_records
from voyager_sessions.core.model import Event, Kind, Origin, Session, TitleSource, session_id

PROVIDER = "dsh"
LABEL = "DeepSeek Harness"
COMPRESSED = "session.jsonl.zstd"
PLAIN = "session.jsonl"
_HOMES = ("dsh", "dsh.alt", "dsh.config")

#: Tools whose input is a shell command (the command is what a person searches for).
_SHELL_TOOLS = frozenset({"bash", "shell", "sh", "exec", "run_command", "run_shell_command", "terminal"})

#: Event types that carry nothing to index (lifecycle, settings, bookkeeping): known, skipped.
_SILENT = frozenset(
    {
        "turn/start",
        "step/start",
        "permission/preset",
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "plan/mode",
        "request/context",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title-llm-request",
        "subagent/descriptor",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "web/deepseek-search-llm-request",
    }
)
_PACKED = {"text-chunks": "text", "reasoning-chunks": "reasoning", "tool-call-chunks": None}
_ESCAPE = re.compile(r"(?:~[0-9A-Fa-f]{4})+")
#: What a read holds besides the event in hand, so that a crafted log cannot grow it without end:
#: steps streamed but not yet ended (the oldest is indexed as it stands past this many), the
#: characters one streamed block keeps (the index keeps 256 Ki of an event), and the call ids
#: remembered to index a call written twice once (the two copies sit next to each other).
MAX_OPEN_STREAMS = 256
MAX_STREAM_CHARS = 1 << 20
MAX_CALLS_KEPT = 1 << 16


def decode_segment(name: str) -> str:
    """A session directory name back to the harness's id: ``~XXXX`` escapes are UTF-16 code units."""

    def unescape(m: re.Match[str]) -> str:
        units = bytes.fromhex("".join(m.group(0)[i + 1 : i + 5] for i in range(0, len(m.group(0)), 5)))
        return units.decode("utf-16-be", "replace")

    return _ESCAPE.sub(unescape, name)


def _blocks(value: Any) -> list[dict[str, Any]]:
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def _texts(blocks: Any, kind: str = "text") -> str:
    return "\n".join(
        b["text"] for b in _blocks(blocks) if b.get("type") == kind and isinstance(b.get("text"), str) and b["text"]
    )


def _replaces(record: dict[str, Any]) -> bool:
    """A surface event that rewrites messages already in the log (``{"op": "replace", …}``): a copy."""
    op = record.get("surfaceOp")
    return isinstance(op, dict) or (isinstance(op, str) and op != "append")


def _scalar(value: Any) -> Any:
    """``value`` fit to be part of a dict key: a JSON scalar as it is, a list or an object (never a
    turn, step or index the harness writes, but a file may hold one) as its compact JSON."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else compact_json(value)


def _step_key(data: dict[str, Any]) -> tuple[Any, Any]:
    """The (turn, step) a record belongs to, as the key of its stream."""
    return _scalar(data.get("turn")), _scalar(data.get("step"))


class _Stream:
    """What one step (turn, step) streamed: kept only until its complete message arrives."""

    def __init__(self, ts: float | None) -> None:
        self.ts = ts
        self.blocks: dict[Any, dict[str, Any]] = {}

    def add(self, index: Any, kind: str, text: Any, ts: float | None, *, whole: bool = False) -> None:
        if not isinstance(text, str) or not text:
            return
        block = self.blocks.setdefault((_scalar(index), kind), {"parts": [], "whole": None, "size": 0})
        if whole:
            block["whole"] = text[:MAX_STREAM_CHARS]
        elif block["size"] < MAX_STREAM_CHARS:
            block["parts"].append(text[: MAX_STREAM_CHARS - block["size"]])
            block["size"] += len(block["parts"][-1])
        self.ts = ts or self.ts


class _DshRead:
    """One session log, from its header to its last line."""

    def __init__(self, source: Source) -> None:
        self.path = source.path
        self.facts = SessionFacts()
        self.counter: EventCounter | None = None
        self.sent: Session | None = None
        self.seed = 0
        self.subagent = False
        self.title: str | None = None
        self.title_kind: str | None = None
        # call id -> tool name, for every call indexed (FIFO in O(1): see _common.MAX_IDS_KEPT)
        self.calls: OrderedDict[str, str | None] = OrderedDict()
        self.streams: OrderedDict[tuple[Any, Any], _Stream] = OrderedDict()  # the oldest flushed first, in O(1)
        self.unknown = UnknownRecords(LABEL)
        self.first = True

    # -- the stream of records -------------------------------------------------------

    def run(self, cursor: Cursor | None) -> Iterator[Item]:
        if self.path.endswith(".zstd"):
            from voyager_sessions.ingest import zstd  # not at the top: every refresh imports this adapter (hints)

            if not zstd.available():
                yield zstd.missing_notice(self.path, LABEL, fatal=True)
                return
            records = self._zstd_records()
        else:
            records = self._plain_records()
        # The log is read whole, but only what is new is indexed again: DeltaStream holds no more
        # than a bounded prefix of the session's events while it checks what the last read indexed,
        # and streams the rest, so a log inflating to millions of events is never held.
        before = cursor.state.get("history") if cursor is not None else None
        delta: DeltaStream | None = None
        fatal = False
        for record in records:
            if isinstance(record, Notice):
                fatal = fatal or record.fatal
                yield record
                continue
            for item in self._record(record):
                if isinstance(item, Event):
                    if delta is None:
                        delta = DeltaStream(item.session, before)
                    yield from delta.add(item)
                else:
                    yield item
        if self.counter is None:
            if not fatal:
                yield Notice(source=self.path, reason=f"no session in it: no {LABEL} record Voyager knows")
            return
        if delta is None:
            delta = DeltaStream(self.counter.session, before)
        for key in list(self.streams):
            for ev in self._flush(key):
                yield from delta.add(ev)
        if (notice := self.unknown.notice(self.path)) is not None:
            yield notice
        final = self._session()
        if final != self.sent:
            yield final
        items, kept = delta.finish()
        yield from items
        if not fatal:
            yield Cursor(offset=0, next_seq=delta.count, tail_hash="", session=final.id, state={"history": kept})

    def _zstd_records(self) -> Iterator[Any]:
        from voyager_sessions.ingest import zstd

        for item in zstd.stream_lines(self.path):
            if isinstance(item, Notice):
                yield item
                continue
            line = item.data.strip()
            if not line:
                continue
            try:
                yield decode_line(line)
            except BadLine as exc:
                if item.complete:
                    yield Notice(source=self.path, reason=f"{exc}; line skipped", where=f"line {item.lineno}")

    def _plain_records(self) -> Iterator[Any]:
        for item in read_records(self.path):
            yield item if isinstance(item, Notice) else item.value

    def _record(self, record: Any) -> Iterator[Item]:
        if not isinstance(record, dict):
            self.unknown.saw(f"a JSON {type(record).__name__}")
            return
        rtype = record.get("type")
        if not isinstance(rtype, str):  # a list or object type would be unhashable below: unknown, named
            rtype = f"a {type(rtype).__name__} type" if rtype is not None else None
        if self.first:
            self.first = False
            yield from self._start(record if rtype == "session" else None)
            if rtype == "session":
                return
        elif rtype == "session":
            return  # a second header: nothing new to index
        seq = int_or_none(record.get("seq0" if rtype in _PACKED else "seq"))
        if self.seed and seq is not None and seq < self.seed:
            return  # copied from the parent session when this one was forked: indexed there
        data = as_dict(record.get("data"))
        ts = epoch(record.get("time0" if rtype in _PACKED else "time"))
        self.facts.observe_ts(ts)
        if rtype == "user/message":
            if not _replaces(record):
                yield from self._user(data, ts)
        elif rtype == "assistant/message":
            if not _replaces(record):
                yield from self._assistant(data, ts)
        elif rtype == "assistant/chunk":
            self._chunk(data, ts)
            yield from self._bound_streams()
        elif rtype in _PACKED:
            kind = _PACKED[rtype]
            if kind is not None:
                stream = self._stream(data, ts)
                for text in list_or_empty(data.get("texts")):
                    stream.add(data.get("index"), kind, text, ts)
                yield from self._bound_streams()
        elif rtype == "tool/call":
            yield from self._call(
                str_or_none(data.get("callId")), str_or_none(data.get("name")), data.get("arguments"), ts
            )
        elif rtype == "tool/result":
            if not _replaces(record):
                yield from self._result(data, ts)
        elif rtype == "compaction/summary":
            summary = data.get("summary")
            yield from self._emit("meta", "provider", _texts(summary) or _texts(summary, "reasoning"), ts)
        elif rtype == "session/title":
            title = str_or_none(data.get("title"))
            if title and title.strip():
                self.title, self.title_kind = title, str_or_none(as_dict(data.get("source")).get("kind"))
        elif rtype == "request/header":
            model = str_or_none(as_dict(as_dict(data.get("header")).get("config")).get("model"))
            self.facts.model = self.facts.model or model
        elif rtype == "step/end":
            yield from self._flush(_step_key(data))
        elif rtype == "turn/end":
            for key in [k for k in self.streams if k[0] == _scalar(data.get("turn"))]:
                yield from self._flush(key)
        elif rtype in _SILENT or record.get("ignorable") is True:
            return
        else:
            self.unknown.saw(rtype)

    def _start(self, header: dict[str, Any] | None) -> Iterator[Item]:
        folder = os.path.basename(os.path.dirname(self.path))
        native = str_or_none(header.get("id")) if header else None
        if header is None:
            yield Notice(
                source=self.path, where="line 1", reason="no session header; the session is named after its directory"
            )
        self.facts.native_id = native or decode_segment(folder)
        if header:
            self.facts.cwd = str_or_none(header.get("cwd"))
            self.facts.observe_ts(epoch(header.get("createdAt")))
            parent = str_or_none(header.get("parentSession"))
            self.facts.parent = session_id(PROVIDER, parent) if parent else None
            self.subagent = header.get("origin") == "subagent" or bool(
                parent and (int_or_none(header.get("delegationDepth")) or 0) > 0
            )
            self.seed = int_or_none(header.get("seedLength")) or 0
        self.counter = EventCounter(session_id(PROVIDER, self.facts.native_id), 0)
        self.sent = self._session()
        yield self.sent

    def _session(self) -> Session:
        sources: dict[str, TitleSource | None] = {"user": "user", "fallback": None}
        title_source = sources.get(self.title_kind or "", "agent") if self.title else None
        return self.facts.session(PROVIDER, title=self.title, title_source=title_source, resume=None, source=self.path)

    def _emit(self, kind: Kind, origin: Origin, text: str | None, ts: float | None, **extra: Any) -> Iterator[Event]:
        if self.counter is not None and (ev := self.counter.make(kind, origin, text, ts=ts, **extra)) is not None:
            yield ev

    # -- record kinds ----------------------------------------------------------------

    def _user(self, data: dict[str, Any], ts: float | None) -> Iterator[Event]:
        text = _texts(data.get("content"))
        if as_dict(data.get("source")).get("kind") == "user":
            yield from self._emit("user", "provider" if self.subagent else "human", text, ts)
        else:
            yield from self._emit("meta", "provider", text, ts)

    def _assistant(self, data: dict[str, Any], ts: float | None) -> Iterator[Event]:
        # The complete message supersedes what this step streamed.
        self.streams.pop(_step_key(data), None)
        message = as_dict(data.get("message"))
        self.facts.model = str_or_none(as_dict(message.get("source")).get("model")) or self.facts.model
        usage = as_dict(data.get("usage"))
        if usage:
            tokens_in = sum(
                int_or_none(usage.get(k)) or 0 for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
            )
            self.facts.tokens_in = (self.facts.tokens_in or 0) + tokens_in
            self.facts.tokens_out = (self.facts.tokens_out or 0) + (int_or_none(usage.get("outputTokens")) or 0)
        for block in _blocks(message.get("content")):
            btype = block.get("type")
            if btype == "text":
                yield from self._emit("assistant", "agent", str_or_none(block.get("text")), ts)
            elif btype == "reasoning":
                yield from self._emit("reasoning", "agent", str_or_none(block.get("text")), ts)
            elif btype == "tool-call":
                yield from self._call(
                    str_or_none(block.get("id")), str_or_none(block.get("name")), block.get("arguments"), ts
                )
            elif btype != "image":  # an image has no text to find
                self.unknown.saw(f"content block {btype}")

    def _call(self, call_id: str | None, name: str | None, arguments: Any, ts: float | None) -> Iterator[Event]:
        if call_id is not None and call_id in self.calls:
            return  # the same call, written as a message block and as a tool/call record
        if call_id is not None:
            self.calls[call_id] = name
            if len(self.calls) > MAX_CALLS_KEPT:
                del self.calls[next(iter(self.calls))]
        yield from self._emit(
            "tool_call",
            "agent",
            tool_call_text(name, arguments, _SHELL_TOOLS),
            ts,
            tool=name,
            call_id=call_id,
        )

    def _result(self, data: dict[str, Any], ts: float | None) -> Iterator[Event]:
        message = as_dict(data.get("message"))
        error = as_dict(data.get("error"))
        for block in _blocks(message.get("content")):
            if block.get("type") != "tool-result":
                self.unknown.saw(f"tool result block {block.get('type')}")
                continue
            call_id = str_or_none(block.get("toolCallId")) or str_or_none(as_dict(message.get("source")).get("callId"))
            text = _texts(block.get("content")) or _error_text(error)
            yield from self._emit(
                "tool_result",
                "tool",
                text,
                ts,
                tool=self.calls.get(call_id or ""),
                call_id=call_id,
                is_error=block.get("isError") is True or bool(error),
            )

    def _stream(self, data: dict[str, Any], ts: float | None) -> _Stream:
        key = _step_key(data)
        if key not in self.streams:
            self.streams[key] = _Stream(ts)
        return self.streams[key]

    def _chunk(self, data: dict[str, Any], ts: float | None) -> None:
        chunk = as_dict(data.get("chunk"))
        ctype = chunk.get("type")
        index = chunk.get("index")
        if ctype in ("text-delta", "reasoning-delta"):
            self._stream(data, ts).add(index, "text" if ctype == "text-delta" else "reasoning", chunk.get("text"), ts)
        elif ctype == "block-end":
            block = as_dict(chunk.get("block"))
            if block.get("type") in ("text", "reasoning"):
                self._stream(data, ts).add(index, block["type"], block.get("text"), ts, whole=True)

    def _bound_streams(self) -> Iterator[Event]:
        while len(self.streams) > MAX_OPEN_STREAMS:
            yield from self._flush(next(iter(self.streams)))

    def _flush(self, key: tuple[Any, Any]) -> Iterator[Event]:
        """A step that ended without its complete message: what it streamed, once (an interrupted run)."""
        stream = self.streams.pop(key, None)
        if stream is None:
            return
        order = sorted(
            stream.blocks.items(),
            key=lambda kv: (0, kv[0][0], "") if isinstance(kv[0][0], int) else (1, 0, repr(kv[0][0])),
        )
        for (_, kind), block in order:
            text = block["whole"] or "".join(block["parts"])
            yield from self._emit("reasoning" if kind == "reasoning" else "assistant", "agent", text, stream.ts)


def _error_text(error: dict[str, Any]) -> str:
    return ": ".join(str(error[k]) for k in ("name", "code", "message") if isinstance(error.get(k), str) and error[k])


class DshAdapter:
    """DeepSeek Harness session logs (``session.jsonl.zstd``) under its sessions roots."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        found = [manifest.agent_home(h, env) for h in _HOMES]
        return list(dict.fromkeys(p for p in found if p is not None))

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        compressed = 0
        roots = self.roots(env)
        if not env.get("VOYAGER_DSH_HOME"):
            # The harness may keep a project's sessions in the project (its companion probes
            # ./.dsh/sessions): looked for in the directories Voyager's indexed sessions ran in.
            # os.path.isdir: a cwd from a session file may be too long, hold a NUL or lie in an
            # unreadable folder; Path.is_dir raises for some of those.
            roots += [
                p for cwd in sorted(hints.cwds if hints else ()) if os.path.isdir(p := Path(cwd) / ".dsh" / "sessions")
            ]
        for root in dict.fromkeys(roots):
            for item in walk_files(
                root, COMPRESSED, PROVIDER, append_only=False, match=lambda n: n in (COMPRESSED, PLAIN)
            ):
                if isinstance(item, Source):
                    if item.path.endswith(".zstd"):
                        compressed += 1
                    elif os.path.exists(item.path + ".zstd"):
                        continue  # the same session in both encodings: the compressed log is the session
                yield item
            if compressed:  # zstd imported only when there is something to decompress (every refresh runs this)
                from voyager_sessions.ingest import zstd

                if not zstd.available():
                    yield zstd.missing_notice(str(root), LABEL, fatal=False, detail=f"{compressed} session logs found")
                    compressed = 0

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _DshRead(source).run(cursor)


ADAPTER = DshAdapter()
