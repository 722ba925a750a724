"""The Open Interpreter adapter: ``<config dir>/open-interpreter/conversations/*.json`` to Sessions and Events.

Open Interpreter (observed 0.4.3) writes one JSON file a conversation, rewritten whole after
each chat: an array of LMC messages ``{role, type, format?, content}``. The file holds
nothing but the messages, so what a session is comes from outside it:

* **Id.** Open Interpreter names the file after the first words of the first message and the
  local time it was started (``<words>__<%B_%d_%Y_%H-%M-%S>.json``) and never renames it
  (``interpreter --conversations`` reopens the file and rewrites it in place), so the file
  name without ``.json`` is the session's id: stable across rewrites.
* **Time.** The date in the name is when the conversation started (local time, as written);
  the file's mtime is when it last changed. Events carry no time (the messages have none).
* **No cwd, model, title or reasoning** are recorded; the title Voyager shows is the first prompt.

What a message becomes: ``user``/``message`` is a person's prompt (the only ``human``
text); ``assistant``/``message`` the reply; ``assistant``/``code`` a tool call whose tool
is its language (``shell``, ``python``…) and whose text is the code; ``computer``/``console``
output a tool result (Open Interpreter records no exit code); ``system`` messages meta.
Images and files a person attached, and the console's ``active_line`` markers, have no
text to find. Other kinds are named in a notice.

Resume: Open Interpreter has no resume by id (``interpreter --conversations`` opens a
picker), so sessions carry no resume command. A rewrite after a new turn re-indexes only
what it added (``reread_delta``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    document_items,
    join_text,
    reread_delta,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "open-interpreter"
LABEL = "Open Interpreter"
_HOMES = ("open-interpreter", "open-interpreter.mac")

#: The start time at the end of a conversation file's name (``strftime("%B_%d_%Y_%H-%M-%S")``).
_NAME_DATE = re.compile(r"__([A-Za-z]+_\d{1,2}_\d{4}_\d{1,2}-\d{2}-\d{2})$")
#: Console formats that carry no output (the line being run, shown live).
_QUIET_CONSOLE = frozenset({"active_line"})
#: Attachments: a path or base64 data, nothing a person would search for.
_ATTACHMENTS = frozenset({"image", "file", "audio"})


def homes(env: Mapping[str, str]) -> list[Path]:
    """The config dirs that may hold ``conversations/`` (Linux/XDG first, then macOS), without repeats."""
    return manifest.agent_homes(_HOMES, env)


def started_from_name(stem: str) -> float | None:
    """The local start time the file name ends with, as epoch seconds; None when the name has none.

    Open Interpreter writes the month's name in the locale it ran in; a name that is not English
    (or not a date) gives no time, and the file's mtime stands in.
    """
    m = _NAME_DATE.search(stem)
    if m is None:
        return None
    try:
        return datetime.strptime(m.group(1), "%B_%d_%Y_%H-%M-%S").timestamp()  # naive: local time, as written
    except (ValueError, OverflowError, OSError):
        return None


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list."""
    return content if isinstance(content, str) else join_text(content)


def message_events(counter: EventCounter, msg: Any, unknown: UnknownRecords) -> Iterator[Event]:
    """The events of one LMC message."""
    if not isinstance(msg, dict):
        unknown.saw(f"a JSON {type(msg).__name__} message")
        return
    # A role or type of the wrong JSON type (a list, an object) is no kind at all, not a crash.
    role, kind, fmt = (v if isinstance(v, str) else None for v in (msg.get("role"), msg.get("type"), msg.get("format")))
    text = _text(msg.get("content"))
    if kind in _ATTACHMENTS:
        return
    ev: Event | None
    if role == "user" and kind == "message":
        ev = counter.make("user", "human", text)
    elif role == "assistant" and kind == "message":
        ev = counter.make("assistant", "agent", text)
    elif role == "assistant" and kind == "code":
        ev = counter.make("tool_call", "agent", text, tool=fmt)
    elif role == "computer" and kind == "console":
        if fmt in _QUIET_CONSOLE:
            return
        ev = counter.make("tool_result", "tool", text)
    elif role == "computer" and kind in ("message", "confirmation"):
        ev = counter.make("meta", "provider", text)
    elif role == "system":
        ev = counter.make("meta", "provider", text)
    else:
        unknown.saw(f"{role}/{kind}" if role and kind else "a message without role/type")
        return
    if ev is not None:
        yield ev


def _session(source: Source, stem: str, sid: str) -> Session:
    started = started_from_name(stem)
    updated = source.fingerprint.mtime_ns / 1e9 if source.fingerprint.mtime_ns else None
    if started is not None and updated is not None and updated < started:
        updated = started
    return Session(
        id=sid,
        provider=PROVIDER,
        native_id=stem,
        started=started if started is not None else updated,
        updated=updated,
        source=source.path,
    )


def read_conversation(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    """One conversation file, read whole; only what changed since ``cursor`` is indexed again. A file larger than
    ``jsondoc.STREAM_JSON_BYTES`` is streamed, a message at a time (``document_items``)."""
    notices: list[Notice] = []
    doc = read_json_streamed(source.path, "", notices=notices)
    if isinstance(doc, Notice):
        yield doc
        return
    yield from notices
    if not isinstance(doc, (list, StreamedArray)):
        yield Notice(
            source=source.path,
            reason=f"a JSON {type(doc).__name__}, not a list of messages: not an Open "
            "Interpreter conversation Voyager knows; skipped",
            fatal=True,
        )
        return
    stem = Path(source.path).name.removesuffix(".json")
    sid = session_id(PROVIDER, stem)
    unknown = UnknownRecords(LABEL)
    counter = EventCounter(sid, 0)
    if isinstance(doc, StreamedArray):
        produced = (ev for msg in doc for ev in message_events(counter, msg, unknown))
        session = _session(source, stem, sid)
        before = (cursor.state if cursor is not None else {}).get("delta")
        yield from document_items(sid, lambda: session, produced, doc, before, unknown, source.path)
        return
    events = [ev for msg in doc for ev in message_events(counter, msg, unknown)]
    if not events:
        if (notice := unknown.notice(source.path)) is not None:
            yield notice
        return  # an empty conversation has nothing to find (the scan names a non-empty file that gave nothing)
    yield _session(source, stem, sid)
    items, delta = reread_delta(sid, events, (cursor.state if cursor is not None else {}).get("delta"))
    yield from items
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=len(events), tail_hash="", session=sid, state={"delta": delta})


class OpenInterpreterAdapter:
    """Open Interpreter's saved conversations, one session a file."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [home / "conversations" for home in homes(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in self.roots(env):
            # Only the folder itself: Open Interpreter writes no subfolders there.
            yield from walk_files(root, ".json", PROVIDER, append_only=False, skip_dir=lambda _name: True)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return read_conversation(source, cursor)


ADAPTER = OpenInterpreterAdapter()
