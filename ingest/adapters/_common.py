"""Helpers every adapter shares: times, text, session facts, event numbering, cursors, unknown records.

Agents describe a session piecemeal (the id on one line, the model on another, the
title in a side file), so adapters share the same small machinery: parse ISO-8601 and
epoch stamps without choking on provider quirks (``parse_ts``, ``epoch``), join text
blocks, render a command readably, build a resume command with every word quoted
(``resume_in``), accumulate what is known about the session as records stream past
(``SessionFacts``, small enough to live in a ``Cursor``), read an OpenAI-style ``tool_calls``
list (``openai_tool_calls``), number events (``EventCounter``, which also files every subagent's
report by the one rule of ``toolcall``; ``SessionEvents`` for a session mapped whole), read side files
once per change rather than once per source (``cached_by_stat``), count records
of kinds the adapter does not know so that a format change is reported, never
silent (``UnknownRecords``), the read loop of an append-only JSONL session
(``JsonlSessionRead``), a notice for a session index whose sessions are all missing
(``index_without_sessions``; ``json_sessions`` finds the session files beside such an index), a
session document with its list of messages (``doc_with_list``), the read of a database holding many sessions
(``read_database``, ``changed_sessions``; ``json_column`` for JSON kept in a column), and what a whole re-read of a session
rewritten in place must yield so that an added turn costs what it adds
(``reread_delta``, ``reread_end``; ``DeltaStream`` when the session is streamed, not held). Nothing here knows an agent's format.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
import shlex
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source, Unchanged
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json, read_json_streamed, stream_end
from voyager_sessions.ingest.jsonl import Record, cursor_after, decode_json, decode_line, read_records
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, open_store, unreadable
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, is_subagent_tool, report_pair
from voyager_sessions.core.model import Event, Kind, Origin, Session, TitleSource, session_id

_FRACTION = re.compile(r"\.(\d+)")
#: Python 3.11's fromisoformat reads ``Z`` and any fraction length itself: the fast path.
_NATIVE_ISO = sys.version_info >= (3, 11)
_encode = msgspec.json.encode


def parse_ts(value: Any, *, naive: Literal["utc", "local"] = "utc") -> float | None:
    """Epoch seconds from an ISO-8601 string (``Z`` or offset, any fraction length); ``None`` if unusable.

    Python 3.10's ``fromisoformat`` accepts neither ``Z`` nor fractions other than 3 or
    6 digits, both of which providers write, so the string is normalised first. A
    stamp without a zone is taken as UTC (what most agents mean), or as this machine's
    local time with ``naive="local"`` for agents that write ``datetime.now().isoformat()``
    (OpenHands): sessions are read on the machine that wrote them.
    """
    if not isinstance(value, str) or not value:
        return None
    if _NATIVE_ISO:
        # The fast path (a stamp on every line of most agents' files): no call that is not needed.
        try:
            dt = _fromisoformat(value)
        except ValueError:
            pass
        else:
            ts = (dt if dt.tzinfo is not None else _aware(dt, naive)).timestamp()
            return ts if 0.0 <= ts <= _LATEST else None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    m = _FRACTION.search(text)
    if m and len(m.group(1)) != 6:
        digits = (m.group(1) + "000000")[:6]
        text = text[: m.start(1)] + digits + text[m.end(1) :]
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return _plausible(_aware(dt, naive).timestamp())


def _aware(dt: datetime, naive: str) -> datetime:
    """``dt`` with a zone: its own, else UTC, else (``naive="local"``) the local zone at that date."""
    if dt.tzinfo is not None:
        return dt
    if naive == "local":
        try:
            return dt.astimezone()  # a naive datetime is local time to astimezone()
        except (OverflowError, OSError, ValueError):
            pass
    return dt.replace(tzinfo=timezone.utc)


#: The last second of year 9999: a later stamp is corruption.
_LATEST = 253402300799.0
_fromisoformat = datetime.fromisoformat


def _plausible(ts: float) -> float | None:
    """A time between 1970 and 9999, or None: anything else is a corrupt stamp, not a date to show."""
    return ts if 0.0 <= ts <= _LATEST else None


def epoch(value: Any) -> float | None:
    """Epoch seconds from a number in seconds or milliseconds (or an ISO string); None if unusable.

    Agents write epoch seconds (float), epoch milliseconds (int) or ISO text; a number
    beyond year 5138 in seconds is taken as milliseconds.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        ts = float(value)
        if ts > 1e11:
            ts /= 1000.0
        return _plausible(ts)
    return parse_ts(value)


def join_text(blocks: Any, types: Iterable[str] = ("text",), sep: str = "\n") -> str:
    """Join the ``text`` of every block whose ``type`` is in ``types``; images and the rest are skipped."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return ""
    wanted = tuple(types)
    parts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") in wanted and isinstance(b.get("text"), str) and b["text"]
    ]
    return sep.join(parts)


def compact_json(value: Any) -> str:
    """Compact JSON of ``value`` with non-ASCII kept as is (so CJK input stays searchable)."""
    try:
        return _encode(value).decode("utf-8")
    except (TypeError, msgspec.EncodeError):
        return str(value)


def render_argv(argv: list[Any]) -> str:
    """A shell command for an argv list: the script of ``bash -lc <script>``, else a quoted join.

    Agents wrap every command in a login shell; the script is what the model wrote and
    what a person would search for.
    """
    parts = [str(a) for a in argv]
    if len(parts) == 3 and os.path.basename(parts[0]) in {"bash", "sh", "zsh"} and parts[1] in {"-lc", "-c"}:
        return parts[2]
    return shlex.join(parts)


class Opt(NamedTuple):
    """An option of a resume command whose value comes from the agent's files: ``--session VALUE``."""

    flag: str
    value: str


class Arg(NamedTuple):
    """An operand of a resume command that comes from the agent's files: an id, or (``path``) a file or folder."""

    value: str
    path: bool = False


def opt(flag: str, value: str) -> Opt:
    """``flag`` with ``value`` (a session id, a path, a name read from the agent's files) as its value."""
    return Opt(flag, value)


def arg(value: str) -> Arg:
    """``value`` (read from the agent's files) as an operand: ``codex resume <id>``."""
    return Arg(value)


def path_arg(value: str) -> Arg:
    """The path ``value`` (read from the agent's files) as an operand: ``opencode <dir>``."""
    return Arg(value, path=True)


def _absolute(path: str) -> bool:
    return path.startswith("/") or bool(_WINDOWS_ABSOLUTE.match(path))


_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]|\\\\")


def resume_in(cwd: str | None, *argv: str | Opt | Arg) -> str | None:
    """The shell command ``argv`` with every word quoted, run in ``cwd`` when it is known (``cd <cwd> && …``);
    None when the session's data cannot be handed to the agent as data.

    Plain strings are the words the adapter's code writes (the program, its subcommands and options); what
    comes from the agent's files is passed as :func:`opt`, :func:`arg` or :func:`path_arg`, and is never
    read as an option, whatever it holds: a value that begins with ``-`` is attached (``--resume=VALUE``,
    which every option parser reads as the option's value), an operand that does is put after ``--``
    (the end of options for every parser), a path is written ``./-x``, and a relative path always
    ``./`` (never a subcommand's name). Where no such form exists (a short option, ``-r VALUE``: some parsers
    read ``-rVALUE`` as a cluster of flags) the session has no command: :func:`voyager_sessions.api.resume.why_none`
    says why. A word with a NUL cannot be an argument at all. And a plain word (a string the adapter
    passed unmarked) that begins with ``-`` must be an option some manifest row's ``resume`` cell declares
    (``manifest.foreign_option``), so an id passed plain by mistake still cannot be an option.

    Session ids and paths come from the agent's files and may hold any shell metacharacter, so every word
    is quoted; most agents look a session up among those of the directory they run in, hence the ``cd``.
    """
    words: list[str] = []
    operands = False  # a ``--`` is written: every later word is an operand
    for word in argv:
        if isinstance(word, str):
            if operands and word.startswith("-"):
                return None
            words.append(word)
            continue
        value = word.value
        if not value or "\0" in value:
            return None
        if isinstance(word, Opt):
            if operands:
                return None  # past ``--`` no option is read
            if not value.startswith("-"):
                words += [word.flag, value]
            elif word.flag.startswith("--"):
                words.append(f"{word.flag}={value}")
            else:
                return None
        elif word.path:
            words.append(value if _absolute(value) else "./" + value)
        else:
            if value.startswith("-") and not operands:
                words.append("--")
                operands = True
            words.append(value)
    if not words or manifest.foreign_option(words) is not None:
        return None
    command = shlex.join(words)
    if not cwd:
        return command
    if "\0" in cwd:
        return None
    return f"cd {shlex.quote(cwd if not cwd.startswith('-') else './' + cwd)} && {command}"


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a field of the wrong type reads as absent."""
    return value if isinstance(value, dict) else {}


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None`` (providers write ``""`` for "unknown")."""
    return value if isinstance(value, str) and value else None


def list_or_empty(value: Any) -> list[Any]:
    """``value`` if it is a list, else ``[]``: what a loop over a file's array may walk (``x or ()``
    is not enough: a number or ``true`` where the array belongs cannot be iterated)."""
    return value if isinstance(value, list) else []


def int_or_none(value: Any) -> int | None:
    """``value`` if it is an int that fits in 64 bits (and not a bool, which JSON decoders also give as
    int), else ``None``. A count or an exit code beyond 64 bits is corruption, and neither the index
    nor the encoders that keep a read's state can hold it."""
    if isinstance(value, int) and not isinstance(value, bool) and -(1 << 63) <= value < (1 << 63):
        return value
    return None


class ToolCall(NamedTuple):
    """One call of an OpenAI-style ``tool_calls`` list, as :func:`openai_tool_calls` reads it."""

    #: The tool's name (the call's own ``name``, else its ``function.name``), or None.
    name: str | None
    #: The arguments as written: a JSON string, an object, or anything else (``toolcall.tool_call_text`` reads
    #: them all); None when the call has none.
    arguments: Any
    #: The call's ``id`` (what the tool's result names as its ``tool_call_id``), or None.
    id: str | None
    #: The call's object itself, for what an agent adds to the shape (another id key, say).
    raw: dict[str, Any]


def openai_tool_calls(calls: Any, unknown: UnknownRecords | None = None) -> Iterator[ToolCall]:
    """The calls of an OpenAI-style ``tool_calls`` list (``[{"id", "type": "function", "function": {"name",
    "arguments"}}]``, and the flat ``{"id", "name", "arguments"}`` some agents write), in order.

    The one reading of the shape a dozen agents keep (they record the chat-completions messages they sent):
    the name is the call's ``name`` or else ``function.name``; the arguments the call's ``arguments`` when it
    has that key, else ``function.arguments``, as written; the id is ``id``. A value that is not a list holds
    no call; an entry that is not an object names no tool and holds no argument (nothing to find): it is
    skipped, and counted in ``unknown`` (as ``tool_call:not-object``) when one is given.
    """
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            if unknown is not None:
                unknown.saw("tool_call:not-object")
            continue
        fn = call.get("function")
        fn = fn if isinstance(fn, dict) else {}
        name = str_or_none(call.get("name")) or str_or_none(fn.get("name"))
        arguments = call["arguments"] if "arguments" in call else fn.get("arguments")
        yield ToolCall(name, arguments, str_or_none(call.get("id")), call)


_RELEASE = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]{1,20})?")


def release(value: Any) -> str | None:
    """``value`` when it is an agent's release number (``2.1.328``, ``v0.4.3``, ``1.0.0-beta.2``), else None:
    what a Session's ``agent_version`` may hold. Anything else a file puts there (a format number, a
    hostile string) is no version to compare."""
    if isinstance(value, str) and len(value) <= 40 and _RELEASE.fullmatch(value.strip()):
        return value.strip()
    return None


class SessionFacts:
    """What is known so far about the session in one source, updated as lines stream by.

    It round-trips through ``Cursor.state`` (``to_state``/``from_state``) so a resumed
    read can describe the session without re-reading the head of the file.
    """

    _FIELDS = (
        "native_id",
        "parent",
        "line_title",
        "user_title",
        "cwd",
        "git_branch",
        "git_repo",
        "model",
        "started",
        "updated",
        "tokens_in",
        "tokens_out",
        "agent_version",
    )

    def __init__(self) -> None:
        self.native_id: str | None = None
        self.parent: str | None = None
        #: A title found in the file itself (Claude ``summary`` lines); a side index wins over it.
        self.line_title: str | None = None
        #: A title the person set (a rename), found in the file itself: it wins over every other.
        self.user_title: str | None = None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.git_repo: str | None = None
        self.model: str | None = None
        self.started: float | None = None
        self.updated: float | None = None
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        #: The agent's version as the records name it (the latest seen: a session resumed by a newer release).
        self.agent_version: str | None = None

    def observe_ts(self, ts: float | None) -> None:
        """Widen [started, updated] to include ``ts``; lines are not guaranteed to be in time order."""
        if ts is None:
            return
        if self.started is None or ts < self.started:
            self.started = ts
        if self.updated is None or ts > self.updated:
            self.updated = ts

    def observe_place(self, cwd: Any, branch: Any) -> None:
        """The first working directory records name (the session's), and the latest git branch (a session can
        switch branches); what is not a non-empty string is no information."""
        if self.cwd is None:
            self.cwd = str_or_none(cwd)
        self.git_branch = str_or_none(branch) or self.git_branch

    def to_state(self) -> dict[str, Any]:
        return {k: v for k in self._FIELDS if (v := getattr(self, k)) is not None}

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> SessionFacts:
        facts = cls()
        for key in cls._FIELDS:
            if state and key in state:
                setattr(facts, key, state[key])
        return facts

    def session(
        self,
        provider: str,
        *,
        title: str | None,
        resume: str | None,
        source: str,
        title_source: TitleSource | None = None,
    ) -> Session:
        assert self.native_id is not None
        return Session(
            id=session_id(provider, self.native_id),
            provider=provider,
            native_id=self.native_id,
            title=title,
            title_source=title_source if title else None,
            cwd=self.cwd,
            git_branch=self.git_branch,
            git_repo=self.git_repo,
            model=self.model,
            started=self.started,
            updated=self.updated,
            parent=self.parent,
            resume=resume,
            source=source,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            agent_version=self.agent_version,
        )


class EventCounter:
    """Numbers the events of one session in stream order, from the cursor's ``next_seq``.

    Every event an adapter makes passes here, so this is also where the one rule for a subagent's report
    (docs/json.md, "Tool calls and subagent reports") reaches every adapter: a tool result the adapter filed
    as tool output (origin ``tool``) that answers a call starting a subagent — its ``tool`` is such a tool,
    or its ``call_id`` is that of such a call made through this counter (or an earlier read's: a
    ``JsonlSessionRead`` keeps them in its cursor) — is the subagent's report, ``toolcall.SUBAGENT_REPORT``.
    An adapter that knows a result only acknowledges a background launch says so (:meth:`launched`)
    before it files that result, with no subagent tool named.
    """

    #: Pending subagent calls kept at most (a cursor stays small; their results usually follow at once).
    AGENT_CALLS_KEPT = 32

    def __init__(self, session: str, start: int, agent_calls: Any = None) -> None:
        self.session = session
        self.seq = start
        #: The ids of calls that started a subagent whose result has not come yet, oldest first.
        self.agent_calls: OrderedDict[str, None] = OrderedDict.fromkeys(  # FIFO in O(1): see MAX_IDS_KEPT
            [c for c in list_or_empty(agent_calls) if isinstance(c, str)][-self.AGENT_CALLS_KEPT :]
        )

    def launched(self, call_id: str | None) -> None:
        """The result of ``call_id`` only acknowledges a subagent started in the background: not its report."""
        if call_id is not None:
            self.agent_calls.pop(call_id, None)

    def make(self, kind: Kind, origin: Origin, text: str | None, **extra: Any) -> Event | None:
        """An Event, or ``None`` for empty text: an empty message has nothing to find."""
        if not text or text.isspace():  # (not ``strip()``: that copies the whole text to see if anything is left)
            return None
        if kind == "tool_call" or kind == "tool_result":
            kind, origin = self._report_rule(kind, origin, extra)
        event = Event(session=self.session, seq=self.seq, kind=kind, origin=origin, text=text, **extra)
        self.seq += 1
        return event

    def _report_rule(self, kind: Kind, origin: Origin, extra: dict[str, Any]) -> tuple[Kind, Origin]:
        call_id = extra.get("call_id")
        if kind == "tool_call":
            if isinstance(call_id, str) and is_subagent_tool(extra.get("tool")):
                self.agent_calls[call_id] = None
                if len(self.agent_calls) > self.AGENT_CALLS_KEPT:
                    del self.agent_calls[next(iter(self.agent_calls))]
            return kind, origin
        if call_id is not None and call_id in self.agent_calls:
            del self.agent_calls[call_id]
            return SUBAGENT_REPORT if origin == "tool" else (kind, origin)
        return report_pair(extra.get("tool")) if origin == "tool" else (kind, origin)


class SessionEvents:
    """One session's events as its messages are mapped, for an adapter that reads a whole session at once.

    What such mappers share: events numbered from 0 (empty text dropped, see ``EventCounter``),
    the tool each call id named (a result need not repeat it), and whether the session is a
    subagent's, whose prompts are the parent agent's (origin ``provider``), not a person's.
    """

    def __init__(self, sid: str, subagent: bool, unknown: UnknownRecords) -> None:
        self.counter = EventCounter(sid, 0)
        self.subagent = subagent
        self.unknown = unknown
        self.tools: dict[str, str | None] = {}

    def emit(self, kind: Kind, origin: Origin, text: str | None, ts: float | None, **extra: Any) -> Iterator[Event]:
        if (ev := self.counter.make(kind, origin, text, ts=ts, **extra)) is not None:
            yield ev

    def text(self, role: Any, text: str | None, ts: float | None, *, meta: bool = False) -> Iterator[Event]:
        """A message's text: ``meta`` (context the person never typed) as meta, else a prompt or the reply."""
        if meta:
            yield from self.emit("meta", "provider", text, ts)
        elif role == "user":
            yield from self.emit("user", "provider" if self.subagent else "human", text, ts)
        else:
            yield from self.emit("assistant", "agent", text, ts)


class ReadProgress:
    """Tracks the last *complete* record and the seq/state that go with it, to build the final Cursor.

    A last line without its newline is still being written: its events are yielded (so
    a finished file loses nothing) but the cursor stays before it, with the seq and
    state as they were, so the next scan reads it again and gets the same seqs.
    """

    def __init__(self, path: str, cursor: Cursor | None) -> None:
        self.path = path
        self.cursor = cursor
        self.last: Record | None = None
        self.seq = cursor.next_seq if cursor else 0
        #: What the cursor keeps, or a callable that makes it (evaluated by :meth:`freeze`, only once it matters).
        self.state: dict[str, Any] | Callable[[], dict[str, Any]] = dict(cursor.state) if cursor else {}
        self.fatal = False

    def commit(self, record: Record, seq: int, state: dict[str, Any] | Callable[[], dict[str, Any]]) -> None:
        """Record progress after a complete record. ``state`` may be a callable: it is then
        evaluated only once it matters (at the end, or before an incomplete record), which
        keeps a per-line dict build off the hot path."""
        self.last = record
        self.seq = seq
        self.state = state

    def freeze(self) -> dict[str, Any]:
        """Evaluate a pending state now: the record about to be processed is incomplete and must not leak into it."""
        if callable(self.state):
            self.state = self.state()
        return self.state

    def final(self, session: str | None) -> Cursor | None:
        """The Cursor to yield last, or ``None`` after a fatal notice (the source could not be read)."""
        if self.fatal:
            return None
        if self.last is None:
            if self.cursor is not None:
                # Nothing new and complete: stay exactly where we were.
                return msgspec.structs.replace(self.cursor, session=session or self.cursor.session)
            return cursor_after(self.path, None, next_seq=0, session=session, state=self.freeze())
        state = dict(self.freeze())
        state["line"] = self.last.lineno
        return cursor_after(self.path, self.last, next_seq=self.seq, session=session, state=state)

    def first_lineno(self) -> int:
        return int(self.freeze().get("line", 0)) + 1 if self.cursor else 1


_T = TypeVar("_T")
_stat_cache: dict[str, tuple[tuple[int, int, int], Any]] = {}


def cached_by_stat(path: str, load: Callable[[str], _T], default: _T) -> _T:
    """``load(path)``, memoised until the file's size, mtime or inode changes; ``default`` if unreadable.

    Side indexes (Claude's ``sessions-index.json``, Codex's ``session_index.jsonl``)
    are shared by many sources; reading one per source would make a scan quadratic.
    """
    try:
        st = os.stat(path)
    except OSError:
        _stat_cache.pop(path, None)
        return default
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    hit = _stat_cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        value = load(path)
    except (OSError, ValueError, msgspec.DecodeError):
        value = default
    _stat_cache[path] = (key, value)
    return value


def index_without_sessions(index: str | os.PathLike[str], label: str) -> Iterator[Notice]:
    """Never silently empty: a Notice when the agent's session index (a JSON list, ``sessions.json``) names
    sessions but discovery found not one session file beside it (moved, renamed, or a new layout)."""
    path = os.fspath(index)
    if not os.path.isfile(path):
        return
    listed = read_json(path, fatal=False)
    count = len(listed) if isinstance(listed, list) else 0
    if count:
        yield Notice(
            source=path,
            reason=f"the {label} session index lists {count} session{'s' if count != 1 else ''} "
            "but no session file was found beside it; nothing indexed",
        )


def json_sessions(root: Path, provider: str, index: str, label: str) -> Iterator[Source | Notice]:
    """The ``*.json`` session files in ``root`` (rewritten whole, so never append-only) but the session index
    ``index`` beside them; when there is not one, :func:`index_without_sessions` says so if the index lists any.

    Continue and Nanocoder keep their sessions this way (one file each and a ``sessions.json`` listing them).
    """
    found = False
    for item in walk_files(
        root, ".json", provider, append_only=False, match=lambda name: name.endswith(".json") and name != index
    ):
        found = found or isinstance(item, Source)
        yield item
    if not found:
        yield from index_without_sessions(root / index, label)


def doc_with_list(
    path: str | os.PathLike[str], key: str, what: str, keys: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[Any] | StreamedArray] | Notice:
    """The JSON object in the session file at ``path`` and its list under ``key`` (the messages), or a fatal
    Notice when the file is not such an object: ``what`` names the file in it ("a Continue session file").

    A file larger than ``jsondoc.STREAM_JSON_BYTES`` is not decoded whole: the list is a ``StreamedArray``
    and the dict holds only ``keys`` besides it (see :func:`document_items` for what to do with it)."""
    doc = read_json_streamed(path, key, keys)
    if isinstance(doc, Notice):
        return doc
    if not isinstance(doc, dict):
        return Notice(source=os.fspath(path), reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)
    listed = doc.get(key)
    if not isinstance(listed, (list, StreamedArray)):
        return Notice(source=os.fspath(path), reason=f"no '{key}' list: not {what}; skipped", fatal=True)
    return doc, listed


class JsonlSessionRead:
    """The read loop every JSONL adapter shares: one file is one session, resumable from a Cursor.

    Subclasses name their ``provider``, call :meth:`_start` first thing in ``__init__`` (or
    set ``path``, ``cursor``, ``progress``, ``counter`` and ``sent`` themselves), and
    provide ``_session()`` (the Session as known so far) and ``_record(record)`` (the
    items one decoded line yields); ``_state()`` (what the cursor must carry to resume)
    is the session's facts unless they override it. :meth:`_begin` fixes the session's
    id when the file first names it. This loop owns the order of things: the Session
    first when resuming, notices passed through, progress committed only after complete
    lines (and frozen before a half-written one), the final Session if it changed, then
    the Cursor.
    """

    #: The provider whose ids the sessions get.
    provider: ClassVar[str]
    path: str
    cursor: Cursor | None
    progress: ReadProgress
    counter: EventCounter | None
    sent: Session | None
    facts: SessionFacts
    #: Records of kinds the adapter does not know, named in one notice at the end (set by :meth:`_start`).
    unknown: UnknownRecords
    #: How a line is decoded: ``jsonl.decode_line``, or a ``jsonl.typed_decoder`` for the fields the adapter reads.
    decode: Callable[[bytes], Any] = staticmethod(decode_line)

    def _start(self, path: str, cursor: Cursor | None, label: str) -> dict[str, Any]:
        """What every read starts from: the file, the cursor and progress from it, the session's facts as the
        cursor kept them (with their counter when the cursor knows the session's id), unknown kinds counted
        under ``label``. Returns the cursor's state, for what else the subclass kept in it."""
        state = cursor.state if cursor else {}
        self.path = path
        self.cursor = cursor
        self.progress = ReadProgress(path, cursor)
        self.facts = SessionFacts.from_state(state)
        self.counter = None
        self.sent = None
        self.unknown = UnknownRecords(label)
        if self.facts.native_id is not None:
            self._identify(self.facts.native_id)
        return state

    def _identify(self, native_id: str) -> None:
        """Fix the session's id, and number its events from where the cursor left off (with the subagent calls
        whose results had not come yet)."""
        self.facts.native_id = native_id
        saved = as_dict(self.cursor.state).get("agent_calls") if self.cursor else None
        self.counter = EventCounter(session_id(self.provider, native_id), self.progress.seq, saved)

    def _cursor_state(self) -> dict[str, Any]:
        """What the cursor keeps: the adapter's ``_state()``, and the subagent calls still waiting for a result."""
        state = self._state()
        if self.counter is not None and self.counter.agent_calls:
            state = {**state, "agent_calls": list(self.counter.agent_calls)}
        return state

    def _begin(self, native_id: str) -> Session:
        """Fix the session's id at the first record that names it; returns the Session to yield first."""
        self._identify(native_id)
        self.sent = self._session()
        return self.sent

    def _numbered(self, drafts: Iterable[Any], name_id: str) -> Iterator[Item]:
        """The Events of ``drafts`` (``(kind, origin, text, fields)``; a Session among them passes through).

        A draft without text makes no event. The first one with text begins the session
        under ``name_id`` (what the file's name says) when no record named it before.
        """
        for draft in drafts:
            if isinstance(draft, Session):
                yield draft
                continue
            kind, origin, text, fields = draft
            if not isinstance(text, str) or not text or text.isspace():
                continue
            if self.counter is None:
                yield self._begin(name_id)
            assert self.counter is not None
            event = self.counter.make(kind, origin, text, **fields)
            if event is not None:
                yield event

    def _session(self) -> Session:
        raise NotImplementedError

    def _state(self) -> dict[str, Any]:
        return self.facts.to_state()

    def _record(self, record: Record) -> Iterator[Any]:
        raise NotImplementedError

    def run(self) -> Iterator[Any]:
        if self.counter is not None:
            # Resuming: describe the session from the cursor, not by re-reading the head.
            self.sent = self._session()
            yield self.sent
        offset = self.cursor.offset if self.cursor else 0
        progress, record, state = self.progress, self._record, self._cursor_state  # looked up once, not every line
        for item in read_records(self.path, offset, progress.first_lineno(), decode=self.decode):
            if isinstance(item, Notice):
                if item.fatal:
                    progress.fatal = True
                yield item
                continue
            if not item.complete:
                progress.freeze()  # the cursor's state must not include a half-written line
                yield from record(item)
                continue
            yield from record(item)
            counter = self.counter
            progress.commit(item, counter.seq if counter else progress.seq, state)
        if self.progress.fatal:
            return
        if (notice := self.unknown.notice(self.path)) is not None:
            yield notice
        if self.counter is not None:
            final = self._session()
            if final != self.sent:
                yield final
        cursor = self.progress.final(self.counter.session if self.counter else None)
        if cursor is not None:
            yield cursor


#: What a read of a provider database does with it once open: the connection, its tables' columns and
#: the per-session signatures (``SessionSignatures``) to check and record; it yields the sessions' items.
DatabaseBody = Callable[[sqlite3.Connection, dict[str, frozenset[str]], SessionSignatures], Iterator[Item]]


def read_database(
    path: str, label: str, required: dict[str, frozenset[str]], cursor: Cursor | None, body: DatabaseBody
) -> Iterator[Item]:
    """The read of a provider database that holds many sessions, the same for every such adapter.

    The database is opened read-only as one snapshot (``open_store``: a fatal Notice when it
    cannot be, or lacks the ``required`` tables); ``body`` yields the items, with the
    signatures the last read left in ``cursor``; then comes the Cursor that carries this
    read's. A database error part way (a corrupt page, a file cut short) ends the read with
    one Notice and no Cursor, so the next scan reads it again. The connection is closed
    however the read ends.
    """
    opened = open_store(path, label, required)
    if isinstance(opened, Notice):
        yield opened
        return
    conn, schema = opened
    signatures = SessionSignatures(cursor)
    try:
        yield from body(conn, schema, signatures)
    except sqlite3.DatabaseError as exc:
        yield unreadable(path, exc)
        return
    finally:
        conn.close()
    yield signatures.cursor()


def changed_sessions(
    provider: str,
    rows: Iterable[sqlite3.Row],
    sigs: Mapping[str, list[Any]],
    signatures: SessionSignatures,
    read: Callable[[sqlite3.Row], Iterator[Item]],
) -> Iterator[Item]:
    """Each session row of a provider database (its ``id`` the native id) read by ``read``, unless unchanged.

    ``sigs`` maps a session to what its messages look like now (counts, rowids, sizes); a row
    with no entry has no message and nothing to find. The row's own columns and that entry
    make its signature: when the last read (``signatures``) saw the same, it is ``Unchanged``.
    """
    for row in rows:
        native = row["id"]
        if not isinstance(native, str) or not native or native not in sigs:
            continue  # a session with no message has nothing to find
        sig = [digest(*row), *sigs[native]]
        if signatures.same(native, sig):
            yield Unchanged(session=session_id(provider, native))
            continue
        signatures.record(native, sig)
        yield from read(row)


def json_column(value: Any) -> Any:
    """The JSON a database column holds as text or as a blob, decoded; None when it holds none (or bad JSON)."""
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    if not isinstance(value, (bytes, bytearray)):
        return None
    try:
        return decode_json(bytes(value))
    except (msgspec.DecodeError, RecursionError):
        return None


class UnknownRecords:
    """Counts the records of kinds an adapter does not know, to name them in one notice at the end of a read.

    An agent that changes its format must not make its sessions vanish silently: what
    the adapter skips because it does not recognise it is reported (``voyager scan`` on
    stderr and in ``--json``, ``voyager doctor``), with the agent's version when the
    files say it.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.counts: dict[str, int] = {}
        self.version: str | None = None

    def saw(self, kind: Any) -> None:
        # A kind is named from the file itself: a hostile one must not make the notice huge.
        key = kind[:60] if isinstance(kind, str) and kind else repr(kind)[:40]
        self.counts[key] = self.counts.get(key, 0) + 1

    def notice(self, source: str) -> Notice | None:
        """One Notice naming what was skipped, or None when every record was known."""
        if not self.counts:
            return None
        total = sum(self.counts.values())
        kinds = ", ".join(
            f"{k} ×{n}" if n > 1 else k for k, n in sorted(self.counts.items(), key=lambda kv: -kv[1])[:5]
        )
        who = f"{self.label} {self.version}" if self.version else self.label
        return Notice(
            source=source,
            reason=f"{total} record{'s' if total != 1 else ''} of a kind Voyager does not know "
            f"skipped ({kinds}); written by {who}",
        )


_encode_event = msgspec.msgpack.Encoder().encode


def reread_delta(session: str, events: list[Event], before: Any) -> tuple[list[Any], list[Any]]:
    """What a whole re-read of one session yields, given what the last read of it indexed.

    A session kept in a file rewritten in place (or replayed from a log whose snapshots
    replace history) is read whole again when it changes, but most changes only add a
    turn at the end. ``before`` is the ``[count, digest]`` this function returned for the
    session last time (the adapter keeps it in the Cursor's ``state``). When the first
    ``count`` events hash the same now, the items are ``Partial`` and only the events that
    follow (or ``Unchanged`` when none follow), so the index pays for what was added;
    otherwise every event, and the scan replaces the session. ``events`` must be numbered
    from 0 in order. Returns the items and the ``[count, digest]`` to keep for next time.
    """
    known: int | None = None
    if isinstance(before, (list, tuple)) and len(before) == 2 and isinstance(before[1], str):
        known = int_or_none(before[0])
    digest = hashlib.blake2b(digest_size=12)
    prefix = digest.hexdigest() if known == 0 else None
    for i, ev in enumerate(events, start=1):
        digest.update(_encode_event(ev))
        if i == known:
            prefix = digest.hexdigest()
    now = [len(events), digest.hexdigest()]
    if known is None or prefix is None or prefix != before[1]:
        return list(events), now
    if known == len(events):
        return [Unchanged(session=session)], now
    return [Partial(session=session, from_seq=known), *events[known:]], now


def document_items(
    sid: str,
    session: Callable[[], Session],
    events: Iterable[Event],
    messages: list[Any] | StreamedArray,
    before: Any,
    unknown: UnknownRecords,
    source: str,
) -> Iterator[Item]:
    """What a whole read of one session document yields, its ``events`` produced lazily from its ``messages``.

    Decoded whole (``messages`` a list): the events are gathered, then ``session()`` (which may
    depend on what they told) and :func:`reread_end`. Streamed (a ``StreamedArray``, a large
    file): nothing is held; ``session()`` first, each event as it comes through a
    :class:`DeltaStream`, how the pass ended (:func:`~voyager_sessions.ingest.jsondoc.stream_end`:
    a file cut short stops there, to be read again), and ``session()`` again if the events
    changed it. The events and the last Session are the same both ways.
    """
    if not isinstance(messages, StreamedArray):
        held = list(events)
        yield session()
        yield from reread_end(sid, held, before, unknown, source)
        return
    first = session()
    yield first
    delta = DeltaStream(sid, before)
    for ev in events:
        yield from delta.add(ev)
    ended = list(stream_end(messages, source))
    yield from ended
    if any(n.fatal for n in ended):
        return
    items, now = delta.finish()
    yield from items
    if (notice := unknown.notice(source)) is not None:
        yield notice
    if (last := session()) != first:
        yield last
    yield Cursor(offset=0, next_seq=0, tail_hash="", session=sid, state={"delta": now})


def reread_end(session: str, events: list[Event], before: Any, unknown: UnknownRecords, source: str) -> Iterator[Item]:
    """The end of a whole re-read of one session file: :func:`reread_delta`'s items for ``events``, the notice of
    records ``unknown`` counted, and the Cursor keeping the ``[count, digest]`` for the next read's ``before``."""
    items, now = reread_delta(session, events, before)
    yield from items
    if (notice := unknown.notice(source)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=0, tail_hash="", session=session, state={"delta": now})


#: Ids of messages remembered at most to drop a message a session document writes twice (a copy sits near its
#: original, so the oldest can go); bounds what a read of a crafted document holds. Such a FIFO is an
#: ``OrderedDict``: a plain dict whose oldest key is deleted as ``next(iter(d))`` leaves a dummy slot that every
#: later ``next(iter(d))`` walks over, so each deletion costs up to the table's size (a 64 MiB Cline session of
#: 360,000 short messages took 20 s to read, quadratic; 400,000 insertions 25 s in a dict, 0.3 s in an OrderedDict).
MAX_IDS_KEPT = 1 << 16


class DeltaStream:
    """:func:`reread_delta` for a session read as a stream: events go out as they come, not at its end.

    ``reread_delta`` needs the whole session in hand; a log replayed record by record (and a
    crafted one inflating to millions of events) must not be held. Here, with nothing known of
    the last read (``before`` unusable) every event is yielded at once; otherwise the first
    ``count`` events are held until the digest of that prefix says whether they are unchanged
    (then dropped: ``Partial`` and what follows, or ``Unchanged``) or not (then yielded, and
    the scan replaces the session). The hold is bounded (``HOLD_EVENTS``, ``HOLD_CHARS``): past
    it the held events are yielded and the session replaced whole, which costs index work,
    never memory. ``add`` returns the items to yield now; ``finish`` the last ones and the
    ``[count, digest]`` to keep, exactly what ``reread_delta`` would have returned.
    """

    #: Events (and characters of their text) held at most while the prefix is being compared.
    HOLD_EVENTS = 4096
    HOLD_CHARS = 8 << 20

    def __init__(self, session: str, before: Any) -> None:
        self.session = session
        self.known: int | None = None
        self.expect = ""
        if isinstance(before, (list, tuple)) and len(before) == 2 and isinstance(before[1], str):
            self.known = int_or_none(before[0])
            self.expect = before[1]
        self.digest = hashlib.blake2b(digest_size=12)
        self.count = 0
        self.held: list[Event] = []
        self.held_chars = 0
        # "hold": comparing the prefix; "all": every event goes out; "tail": the prefix matched.
        self.mode = "all" if self.known is None or self.known < 0 else "hold"
        self.partial_sent = False
        if self.mode == "hold" and self.known == 0:
            self.mode = "tail" if self.digest.hexdigest() == self.expect else "all"

    def add(self, ev: Event) -> list[Any]:
        self.digest.update(_encode_event(ev))
        self.count += 1
        if self.mode == "all":
            return [ev]
        if self.mode == "tail":
            if self.partial_sent:
                return [ev]
            self.partial_sent = True
            return [Partial(session=self.session, from_seq=self.known or 0), ev]
        self.held.append(ev)
        self.held_chars += len(ev.text)
        if self.count == self.known:
            self.mode = "tail" if self.digest.hexdigest() == self.expect else "all"
            out: list[Any] = [] if self.mode == "tail" else self.held
            self.held, self.held_chars = [], 0
            return out
        if len(self.held) > self.HOLD_EVENTS or self.held_chars > self.HOLD_CHARS:
            return self._release()
        return []

    def _release(self) -> list[Any]:
        self.mode = "all"
        out, self.held, self.held_chars = self.held, [], 0
        return out

    def finish(self) -> tuple[list[Any], list[Any]]:
        """The items still to yield at the end of the session, and the ``[count, digest]`` to keep."""
        now = [self.count, self.digest.hexdigest()]
        if self.mode == "hold":  # fewer events than before: the session is replaced whole
            return self._release(), now
        if self.mode == "tail" and not self.partial_sent:
            return [Unchanged(session=self.session)], now
        return [], now
