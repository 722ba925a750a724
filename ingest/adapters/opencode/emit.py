"""OpenCode's parts, content items and provider rows as Voyager Events: one mapper for every storage shape.

v1 ``part`` rows, JSON-tree part files, v2 ``session_part`` rows and v2 inline ``content``
items are the same vocabulary with a few renamed fields (``tool``/``name``,
``callID``/``id``, ``output``/``content``), so :class:`Emitter` serves all of them; the
readers only decide which rows belong to which message, in what order. The small value
helpers (times, error texts, JSON columns) live here because every reader needs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import UnknownRecords, as_dict
from voyager_sessions.ingest.adapters._common import int_or_none as _int
from voyager_sessions.ingest.adapters._common import str_or_none as _str
from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.jsonl import BadLine, decode_json, decode_line
from voyager_sessions.ingest.toolcall import report_pair, tool_call_text
from voyager_sessions.core.model import Event, Kind, Origin

# Part / content types that carry no searchable text (bookkeeping of the agent loop).
# They are known, so they are skipped silently rather than counted as unknown.
NOISE_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "compaction"})
# v2 message rows that carry no text (``idle`` marks the end of a run).
NOISE_MESSAGES = frozenset({"idle"})


def secs(ms: Any) -> float | None:
    """OpenCode stores epoch milliseconds; Voyager uses float seconds. NaN or an infinity (JSON.parse
    never writes one, a corrupt row may hold one) is no time."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return None
    return ms / 1000.0


def model_name(model: Any) -> str | None:
    """``provider/model`` (how OpenCode's own ``-m`` flag names a model) from the shapes it stores."""
    if isinstance(model, str):
        try:
            # decode_line, not json.loads: a lone surrogate (a cut emoji) is replaced, since the index
            # cannot take one.
            model = decode_line(model.encode("utf-8", "surrogatepass"))
        except BadLine:  # not JSON (or nested too deeply to be a model): the name as written
            return model or None
    m = as_dict(model)
    ident = _str(m.get("id")) or _str(m.get("modelID"))
    provider = _str(m.get("providerID"))
    if ident and provider:
        return f"{provider}/{ident}"
    return ident


def _text(value: Any) -> str | None:
    """Text worth an event: a string with something other than whitespace in it."""
    return value if isinstance(value, str) and value.strip() else None


# The title OpenCode gives a session before its title side call answers ("New session - " and an
# ISO time; "Child session - " for a subagent's). It names no session: it must not be indexed as a title.
_PLACEHOLDER_TITLE = re.compile(r"(new|child) session - \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", re.IGNORECASE)


def agent_title(value: Any) -> str | None:
    """A session's title as the agent named it (its title side call), or None while it is still the placeholder."""
    title = _str(value)
    if title is None or not title.strip() or _PLACEHOLDER_TITLE.fullmatch(title.strip()):
        return None
    return title


def is_summary(role: str, message: Mapping[str, Any]) -> bool:
    """Whether an assistant message is a compaction summary (``summary: true``, agent or mode ``compaction``).

    (A user message's ``summary`` is an object of diffs, not this flag.)
    """
    return role == "assistant" and (
        message.get("summary") is True or message.get("mode") == "compaction" or message.get("agent") == "compaction"
    )


def unwrap_prompt(text: str) -> str:
    """A prompt as the person typed it, without the quotes ``opencode run``/``kilo run`` add.

    ``run`` joins its arguments and wraps each one that holds a space in ``"…"``, escaping
    the quotes inside as ``\\"``. A prompt that is exactly one such argument (starts and ends
    with a quote, and every quote between is escaped) is unwrapped; anything else, such as
    two quoted arguments or a quote the person typed, is left as it is.
    """
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    inner = text[1:-1]
    if inner.replace('\\"', "").count('"'):
        return text
    return inner.replace('\\"', '"')


def error_text(err: Any) -> str | None:
    """``Name: message`` from OpenCode's error shapes: v1 ``{name, data:{message}}``, v2 ``{type, message}``, text."""
    if isinstance(err, str):
        return err or None
    e = as_dict(err)
    if not e:
        return None
    name = _str(e.get("name")) or _str(e.get("type"))
    message = _str(as_dict(e.get("data")).get("message")) or _str(e.get("message"))
    if name and message:
        return f"{name}: {message}"
    return message or name


def _tool_output(state: Mapping[str, Any]) -> str | None:
    """A finished tool's output: v1 keeps a string in ``output``, v2 a list of content blocks."""
    out = state.get("output")
    if isinstance(out, str):
        return out
    blocks = state.get("content")
    if isinstance(blocks, list):
        texts = []
        for b in blocks:
            b = as_dict(b)
            t = _str(b.get("text")) if b.get("type", "text") == "text" else _str(b.get("uri"))
            if t:
                texts.append(t)
        return "\n".join(texts)
    return None


_json_decode = decode_json  # msgspec: several times faster than json.loads on part rows


def loads(text: Any) -> dict[str, Any]:
    """Parse a JSON object column; ValueError when it is not one (the caller names the row)."""
    if isinstance(text, bytes):
        # The walk asks for JSON columns as their UTF-8 bytes (``Database.json_bytes``): parsed as they are, with
        # no text made of them first; what that refuses (invalid UTF-8, a lone surrogate escape) is read as before.
        try:
            value = _json_decode(text)
        except msgspec.DecodeError:
            text = text.decode("utf-8", "replace")
        else:
            if not isinstance(value, dict):
                raise ValueError(f"expected a JSON object, got {type(value).__name__}")
            return value
    if not isinstance(text, str):  # NULL or a number where JSON text belongs
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    try:
        value = _json_decode(text)
    except msgspec.DecodeError:
        # What the strict decoder refuses, the lenient one may read: lone surrogate escapes (a cut
        # emoji) are replaced. Bad JSON and absurd nesting stay a BadLine, the ValueError callers
        # catch to name the row.
        value = decode_line(text.encode("utf-8", "surrogatepass"))
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


class Ctx:
    """What reading one source accumulates: the records of kinds Voyager does not know, named once at the end."""

    def __init__(self, source: str, label: str) -> None:
        self.source = source
        self.unknown = UnknownRecords(label)

    def malformed(self, where: str, exc: Exception) -> Notice:
        return Notice(source=self.source, where=where, reason=f"malformed JSON, row skipped: {exc}")

    def summary(self) -> Iterator[Notice]:
        if (notice := self.unknown.notice(self.source)) is not None:
            yield notice


class Emitter:
    """Assigns ``seq`` and maps OpenCode's parts, content items and message rows to the Events of one session."""

    def __init__(self, sid: str, *, subagent: bool, ctx: Ctx) -> None:
        self.sid = sid
        self.subagent = subagent
        self.ctx = ctx
        self.seq = 0

    def _event(self, kind: Kind, origin: Origin, text: str, ts: float | None, **kw: Any) -> Event:
        ev = Event(session=self.sid, seq=self.seq, kind=kind, origin=origin, text=text, ts=ts, **kw)
        self.seq += 1
        return ev

    def user_text(self, text: Any, ts: float | None) -> Iterator[Event]:
        if text := _text(text):
            # A subagent's "user" turn is a prompt written by the parent agent, not a person.
            origin: Origin = "provider" if self.subagent else "human"
            if text := _text(unwrap_prompt(text)):
                yield self._event("user", origin, text, ts)

    def meta(self, text: Any, ts: float | None, *, is_error: bool = False) -> Iterator[Event]:
        if text := _text(text):
            yield self._event("meta", "provider", text, ts, is_error=is_error)

    def assistant_error(self, err: Any, ts: float | None) -> Iterator[Event]:
        text = error_text(err)
        if text:
            yield self._event("assistant", "provider", text, ts, is_error=True)

    def part(self, role: str, part: Mapping[str, Any], ts: float | None, *, summary: bool = False) -> Iterator[Event]:
        """One part / content item of a ``role`` message. Unknown types are counted, not guessed."""
        ptype = part.get("type")
        if ptype == "text":
            text = part.get("text")
            if part.get("synthetic") is True or summary:
                # Injected by OpenCode (file contents, reminders) or a compaction summary.
                yield from self.meta(text, ts)
            elif role == "user":
                yield from self.user_text(text, ts)
            elif text := _text(text):
                yield self._event("assistant", "agent", text, ts)
        elif ptype == "reasoning":
            if text := _text(part.get("text")):
                yield self._event("reasoning", "agent", text, ts)
        elif ptype == "tool":
            yield from self._tool(part, ts)
        elif ptype == "agent":
            yield from self.meta(f"agent: {part['name']}" if _str(part.get("name")) else None, ts)
        elif ptype == "subtask":
            yield from self.meta(_str(part.get("prompt")) or _str(part.get("description")), ts)
        elif ptype == "retry":
            yield from self.meta(error_text(part.get("error")), ts, is_error=True)
        elif ptype == "file":
            # Name the attachment; never index a data: URL's payload.
            src = as_dict(part.get("source"))
            name = _str(part.get("filename")) or _str(src.get("path"))
            url = _str(part.get("url"))
            if not name and url and not url.startswith("data:"):
                name = url
            yield from self.meta(f"file: {name}" if name else None, ts)
        elif isinstance(ptype, str) and ptype in NOISE_PARTS:  # a list or an object is no part type
            return
        else:
            self.ctx.unknown.saw(f"part:{ptype}")

    def _tool(self, part: Mapping[str, Any], ts: float | None) -> Iterator[Event]:
        state = as_dict(part.get("state"))
        tool = _str(part.get("tool")) or _str(part.get("name"))
        call_id = _str(part.get("callID")) or _str(part.get("id"))
        times = as_dict(state.get("time")) or as_dict(part.get("time"))
        start = secs(times.get("start")) or secs(times.get("created")) or ts
        end = secs(times.get("end")) or secs(times.get("completed")) or start
        yield self._event(
            "tool_call", "agent", tool_call_text(tool, state.get("input")), start, tool=tool, call_id=call_id
        )
        status = state.get("status")
        exit_code = _int(as_dict(state.get("metadata")).get("exit"))
        if status == "completed":
            out = _tool_output(state)
            # What the ``task`` tool returns is its subagent's report (docs/json.md): one kind/origin for all.
            kind, origin = report_pair(tool)
            yield self._event(kind, origin, out or "", end, tool=tool, call_id=call_id, exit_code=exit_code)
        elif status == "error":
            # The error text is the result; an exit code only if OpenCode recorded one.
            text = error_text(state.get("error")) or _tool_output(state) or ""
            yield self._event(
                "tool_result", "tool", text, end, tool=tool, call_id=call_id, exit_code=exit_code, is_error=True
            )
        # pending / running: the call happened, its result does not exist yet.

    def v2_row(self, mtype: str, data: Mapping[str, Any], ts: float | None) -> Iterator[Event]:
        """A ``session_message`` row of a type other than user/assistant (provider rows)."""
        if mtype in ("synthetic", "system"):
            yield from self.meta(data.get("text"), ts)
        elif mtype == "compaction":
            yield from self.meta(_str(data.get("summary")) or _str(data.get("text")), ts)
        elif mtype == "agent-switched":
            yield from self.meta(f"agent switched: {data['agent']}" if _str(data.get("agent")) else None, ts)
        elif mtype == "model-switched":
            name = model_name(data.get("model"))
            yield from self.meta(f"model switched: {name}" if name else None, ts)
        elif mtype == "shell":
            # A command the person ran with ``!`` in the TUI: a tool run they asked for.
            cmd = _str(data.get("command"))
            yield self._event("tool_call", "human", tool_call_text("shell", cmd), ts, tool="shell")
            status = data.get("status")
            if status in (None, "completed", "failed", "cancelled", "timed_out") and (
                "output" in data or "error" in data
            ):
                err = _str(data.get("error"))
                out = _str(data.get("output")) or ""
                text = "\n".join(t for t in (out, err) if t)
                yield self._event(
                    "tool_result",
                    "tool",
                    text,
                    ts,
                    tool="shell",
                    exit_code=_int(as_dict(data.get("metadata")).get("exit")),
                    is_error=bool(err) or status in ("failed", "timed_out"),
                )
        elif mtype in NOISE_MESSAGES:
            return
        else:
            self.ctx.unknown.saw(f"message:{mtype}")
