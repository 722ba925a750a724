"""A session kept as a folder of one-JSON-object-per-event files: listing them, fingerprinting them, reading on.

Some agents (OpenHands: ``events/event-00042-<uuid>.json``; its V0: ``events/42.json``)
write each event of a session to a file of its own, numbered in order, never rewritten.
Such a folder is not append-only as a file is, but it grows the same way, so a re-read
can start after the last file read before. :func:`event_files` lists the files in
their number order (reading no content); :func:`event_folder_fingerprint` stats only
what changes when the folder does (a file added or removed touches its directory; the
newest file may still be being written); :func:`read_event_folder` streams a session
from such a folder: the session, then, when the ``Cursor``'s record of the files read
before is intact (how many, the name of the last, the event seq after them), a
``Partial`` and only the files after them, else every file. A file that cannot be read
(still being written, say) stops that record: files after it are read too, but read
again next time, with the same seqs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec

from voyager_sessions.ingest.adapters._common import EventCounter, SessionFacts, UnknownRecords
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Item, Notice, Partial, Source
from voyager_sessions.ingest.files import folder_fingerprint
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.core.model import Event, Session


class EventFile(NamedTuple):
    """One event file: the agent's own number for it, and where it is."""

    number: int
    path: Path


def event_files(folder: Path, pattern: re.Pattern[str]) -> list[EventFile]:
    """The regular files in ``folder`` whose names match ``pattern`` (its group 1: the number), in number order."""
    found: list[EventFile] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                m = pattern.fullmatch(entry.name)
                if m and entry.is_file():
                    found.append(EventFile(int(m.group(1)), Path(entry.path)))
    except OSError:
        return []
    found.sort(key=lambda f: (f.number, f.path.name))
    return found


def event_folder_fingerprint(
    folder: Path, side_files: Iterable[Path], events_dir: Path, files: list[EventFile]
) -> Fingerprint:
    """One stat fingerprint for a session folder: ``files.folder_fingerprint`` of its side files, its events
    directory and newest event file.

    Adding or removing an event file changes the directory; the newest file is stat'ed
    because it may be caught half-written; ``wal_size`` carries the number of event files.
    Stat'ing every file would cost a syscall per event per scan for nothing: event files
    are written once.
    """
    fp = folder_fingerprint(folder, [*side_files, events_dir, *(f.path for f in files[-1:])])
    return msgspec.structs.replace(fp, wal_size=len(files))


class EventFolderProgress:
    """Which files of a session's folder are indexed, as ``Cursor.state`` keeps it between reads.

    ``files``: how many files (from the first, in number order) were read whole;
    ``last_name``: the name of the last of them (a re-read checks it is still in its
    place); ``next_seq``: the event seq that follows them.
    """

    def __init__(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        self.prior_files: int = files if isinstance(files := state.get("files"), int) else 0
        self.prior_name: str | None = name if isinstance(name := state.get("last_name"), str) else None
        self.prior_seq: int = seq if isinstance(seq := state.get("next_seq"), int) else 0
        self.files = 0
        self.last_name: str | None = None
        self.next_seq = 0
        self.broken = False

    def start(self, files: list[EventFile]) -> int:
        """How many of ``files`` are already indexed (0: read them all, from seq 0)."""
        n = self.prior_files
        if n <= 0 or n > len(files) or files[n - 1].path.name != self.prior_name or self.prior_seq < 0:
            return 0
        self.files, self.last_name, self.next_seq = n, self.prior_name, self.prior_seq
        return n

    def done(self, f: EventFile, next_seq: int) -> None:
        """``f`` was read whole and its events numbered up to ``next_seq``: the record grows, unless broken."""
        if not self.broken:
            self.files += 1
            self.last_name = f.path.name
            self.next_seq = next_seq

    def failed(self) -> None:
        """A file could not be read: the record stops before it (the next read starts there)."""
        self.broken = True

    def state(self) -> dict[str, Any]:
        return {"files": self.files, "last_name": self.last_name, "next_seq": self.next_seq}


class EventMapper(Protocol):
    """Turns one event file's JSON object into the events it holds, numbered by its counter."""

    def events(self, doc: dict[str, Any]) -> Iterator[Event]: ...


def read_event_folder(
    source: Source,
    cursor: Cursor | None,
    files: list[EventFile],
    facts: SessionFacts,
    make_session: Callable[[SessionFacts], Session],
    make_mapper: Callable[[EventCounter], EventMapper],
    unknown: UnknownRecords,
) -> Iterator[Item]:
    """Stream one session kept as ``files``: the Session, a ``Partial`` and the unseen files (or every file), the
    Session again if the events widened its times, the ``unknown`` notice, and a Cursor recording the files read.

    ``facts`` describes the session from its side files; ``make_session`` turns them into a Session.
    """
    state = cursor.state if cursor is not None else {}
    progress = EventFolderProgress(state)
    start = progress.start(files)
    if start:  # the files already read set the session's times: carry them on
        for key in ("started", "updated"):
            if isinstance(state.get(key), (int, float)) and not isinstance(state.get(key), bool):
                facts.observe_ts(float(state[key]))
    first = make_session(facts)
    yield first
    if start:
        yield Partial(session=first.id, from_seq=progress.next_seq)
    counter = EventCounter(first.id, progress.next_seq)
    mapper = make_mapper(counter)
    for f in files[start:]:
        doc = read_json_object(f.path, fatal=False)
        if isinstance(doc, Notice):
            progress.failed()
            yield doc
            continue
        for ev in mapper.events(doc):
            facts.observe_ts(ev.ts)
            yield ev
        progress.done(f, counter.seq)
    final = make_session(facts)
    if final != first:
        yield final
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    out = progress.state()
    out.update({k: v for k, v in (("started", facts.started), ("updated", facts.updated)) if v is not None})
    yield Cursor(offset=0, next_seq=progress.next_seq, tail_hash="", session=first.id, state=out)
