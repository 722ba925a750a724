"""How far a long scan has got: counted as it goes, committed with the index, read by any process.

A first index of a big history takes a while; it commits early and then regularly (see
:mod:`.run`), so whatever has been committed is searchable at once. What a search then
needs to say — that the index is still being built, and how far — is recorded here:

* :class:`Tally` counts, inside the scan, the sources and bytes of its plan and the
  sessions they hold, and says :class:`ScanProgress` to the scan's ``progress`` callback
  after every source (the terminal's progress bar);
* at each commit of a scan that has not read its whole plan, :class:`Indexing` (what the
  commit holds: sessions whose every event is searchable, sessions whose prompts and
  replies are, sessions known) is written to ``state.db``'s ``meta`` table in the same
  transaction as the state rows, so it always describes exactly what a reader sees; the
  scan that finishes the plan deletes it in its last commit;
* :func:`read` gives any process (a search, the picker, the web page, ``voyager scan``
  waiting for another scan) the committed record and whether the scan that wrote it is
  still running.

Sessions are counted from the sessions table and the plan: a source not read yet counts
for the sessions its state row named (or one, when it is new), so ``sessions_total``
grows when a new source turns out to hold several (a database of many sessions).
"""

from __future__ import annotations

import os
import time
from typing import Literal

import msgspec

#: The ``meta`` key of the committed record (absent when the index holds everything a scan found).
META_KEY = "indexing"

#: What a long scan is doing: reading everything (``all``), what people and agents wrote first (``words``),
#: then the tool output it held back (``tools``).
Phase = Literal["all", "words", "tools"]


class Indexing(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the last commit of a scan that has not finished its plan holds (``state.db`` meta ``indexing``)."""

    pid: int
    started: float
    updated: float
    phase: Phase = "all"
    #: Sessions whose every event is searchable.
    sessions_done: int = 0
    #: Sessions whose prompts and replies are searchable (their tool output may still be to come).
    sessions_words: int = 0
    #: Sessions known: in the index, or in a source the scan has yet to read.
    sessions_total: int = 0
    sources_done: int = 0
    sources_total: int = 0
    bytes_done: int = 0
    bytes_total: int = 0
    #: When the phase began (the tools phase starts once every source's words are in).
    phase_started: float = 0.0


class ScanProgress(msgspec.Struct, kw_only=True):
    """What a scan's ``progress`` callback is told after each source: enough for a bar with a rate and time left."""

    phase: Phase
    sources_done: int
    sources_total: int
    bytes_done: int
    bytes_total: int
    sessions_done: int
    sessions_total: int
    events: int
    #: Seconds since the scan started reading, and since its phase began.
    seconds: float
    phase_seconds: float = 0.0
    #: The tools phase: sessions whose tool output is in the index, of those whose output was held back.
    tools_done: int = 0
    tools_total: int = 0


_decode = msgspec.json.Decoder(Indexing).decode
encode = msgspec.json.encode


def decode(raw: str | None) -> Indexing | None:
    """The committed record from its ``meta`` value, or None (none, or written by a Voyager that wrote another)."""
    if not raw:
        return None
    try:
        return _decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def alive(pid: int) -> bool:
    """True when process ``pid`` exists (a scan killed mid-way leaves its record behind with a dead pid)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process under that pid: not our scan
        return False
    except OSError:
        return False
    return True


def building(record: Indexing, lock_path: os.PathLike[str] | str) -> bool:
    """True when a scan is building the index ``record`` describes: its writer, or the last taker of the lock, lives."""
    if alive(record.pid):
        return True
    pid = holder(lock_path)
    return pid is not None and pid != record.pid and alive(pid)


def holder(lock_path: os.PathLike[str] | str) -> int | None:
    """The pid the data dir's writer lock names (the last process that took it), or None."""
    try:
        with open(lock_path, "rb") as fh:
            return int(fh.read(32).decode().strip() or 0) or None
    except (OSError, ValueError):
        return None


class Tally:
    """A scan's counts of its plan as it reads it: sources, bytes, sessions, events; and when it started.

    Two session counts: those of the plan (what the progress bar shows: read so far, and
    all of them, a source not read yet counting for the sessions its state row named, or
    one when it is new) and those of the index (what a commit holds: the sessions table,
    plus one for each new source not read yet).
    """

    def __init__(self) -> None:
        self.started = time.time()
        self.t0 = time.monotonic()
        self._phase: Phase = "all"
        self.phase_t0 = self.t0
        self.phase_started = self.started
        self.sources_total = 0
        self.sources_done = 0
        self.bytes_total = 0
        self.bytes_done = 0
        #: Sessions the sources read so far held, and those the sources not read yet stand for.
        self.sessions_read = 0
        self.sessions_unread = 0
        #: New sources (no state row) not read yet: a session each, not in the sessions table.
        self.new_unread = 0
        #: Sessions whose tool output waits in the spool (their words are in the index).
        self.waiting_tools = 0
        #: Sessions whose tool output was held back, and of those the ones whose output is in the index.
        self.tools_total = 0
        self.tools_done = 0
        self.events = 0

    @property
    def phase(self) -> Phase:
        return self._phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        if phase != self._phase:
            self._phase = phase
            self.phase_t0 = time.monotonic()
            self.phase_started = time.time()

    def planned(self, sources: int, nbytes: int, expected_sessions: int, new_sources: int) -> None:
        """A plan (or a second one, for sources found through hints) was made: its size."""
        self.sources_total += sources
        self.bytes_total += nbytes
        self.sessions_unread += expected_sessions
        self.new_unread += new_sources

    def read_one(self, nbytes: int, expected_sessions: int, sessions: int, new_source: bool) -> None:
        """A source of ``nbytes`` that stood for ``expected_sessions`` was read: it held ``sessions``."""
        self.sources_done += 1
        self.bytes_done += nbytes
        self.sessions_read += sessions
        self.sessions_unread = max(0, self.sessions_unread - expected_sessions)
        if new_source:
            self.new_unread = max(0, self.new_unread - 1)

    def now(self, events: int) -> ScanProgress:
        """What the progress bar shows after a source."""
        self.events = events
        return ScanProgress(
            phase=self.phase,
            sources_done=self.sources_done,
            sources_total=self.sources_total,
            bytes_done=self.bytes_done,
            bytes_total=self.bytes_total,
            sessions_done=self.sessions_read,
            sessions_total=self.sessions_read + self.sessions_unread,
            events=events,
            seconds=time.monotonic() - self.t0,
            phase_seconds=time.monotonic() - self.phase_t0,
            tools_done=self.tools_done,
            tools_total=self.tools_total,
        )

    def record(self, sessions_in_table: int) -> Indexing:
        """What a commit that leaves the plan unfinished holds, as the ``meta`` record."""
        return Indexing(
            pid=os.getpid(),
            started=self.started,
            updated=time.time(),
            phase=self.phase,
            sessions_done=max(0, sessions_in_table - self.waiting_tools),
            sessions_words=sessions_in_table,
            sessions_total=sessions_in_table + self.new_unread,
            sources_done=self.sources_done,
            sources_total=self.sources_total,
            bytes_done=self.bytes_done,
            bytes_total=self.bytes_total,
            phase_started=self.phase_started,
        )
