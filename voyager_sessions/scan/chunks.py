"""One source's item stream in prepared chunks, and the bytes a chunk travels in between processes.

A read is the adapter's stream of items (Session, Event, Cursor, Notice, Unchanged,
Partial) with its events prepared for the index (``search.prepare``), cut into chunks of
about ``PREPARE_BATCH_CHARS`` characters of event text or ``CHUNK_EVENTS`` events, in
stream order. The scan consumes the same chunks whether the read ran in its own process
or on a worker (:mod:`.workers`), so the writer does identical work either way, and the
memory a read holds beside the adapter's own is one chunk.

On the wire a chunk is one msgpack message (:class:`Chunk`): the events as
``PreparedEvent`` arrays, the few other items in lists of their own type, and ``order``
saying how they interleave. Text msgpack cannot carry (a lone surrogate from an
undecodable file name) falls back to pickle for that one message: both ends are this
program.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import msgspec

from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source, Unchanged
from voyager_sessions.core.model import Event, Session
from voyager_sessions.search.prepare import PREPARE_BATCH_CHARS, PreparedEvent, max_event_chars, prepare_events

#: An item of a prepared chunk: the adapter's stream (``ingest.adapters.base.Item``) with its events prepared.
Prepared = PreparedEvent | Session | Cursor | Notice | Unchanged | Partial

#: A chunk closes after this many events even when their text is short.
CHUNK_EVENTS = 2048

#: One byte a non-event item in ``Chunk.order``; events are ``E``.
_CODES: dict[type, int] = {
    Session: ord("S"),
    Cursor: ord("C"),
    Notice: ord("N"),
    Unchanged: ord("U"),
    Partial: ord("P"),
}
_EVENT = ord("E")


class AdapterFailed(Exception):
    """The adapter raised while reading a source: ``reason`` says so in the words a Notice uses."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkerLost(Exception):
    """The worker process reading a source died before finishing it (see :mod:`.workers`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def failure_reason(exc: BaseException) -> str:
    """How a source's failure is named when its adapter raised ``exc`` (one wording, in-process or on a worker)."""
    return f"adapter error: {type(exc).__name__}: {exc}"


def prepared_chunks(items: Iterable[Item], cap: int | None = None) -> Iterator[list[Prepared]]:
    """The items of ``items`` in order, events replaced by ``PreparedEvent``s, in chunks.

    When the adapter raises, the items it yielded before are still delivered (the reader
    keeps what was read), then :class:`AdapterFailed` is raised; a ``VoyagerError`` is
    not the source's fault and propagates as it is.
    """
    cap = max_event_chars() if cap is None else cap
    chunk: list[Any] = []
    events: list[int] = []  # positions of the chunk's events, prepared when it closes
    size = 0
    failure: str | None = None
    try:
        for item in items:
            if type(item) is Event:
                events.append(len(chunk))
                size += min(len(item.text), cap)
                chunk.append(item)
                if size >= PREPARE_BATCH_CHARS or len(events) >= CHUNK_EVENTS:
                    yield _close(chunk, events, cap)
                    chunk, events, size = [], [], 0
            else:
                chunk.append(item)
    except VoyagerError:
        raise
    except Exception as exc:  # an adapter bug costs its source, never the scan
        failure = failure_reason(exc)
    if chunk:
        yield _close(chunk, events, cap)
    if failure is not None:
        raise AdapterFailed(failure)


def _close(chunk: list[Any], events: list[int], cap: int) -> list[Any]:
    if events:
        for i, p in zip(events, prepare_events([chunk[i] for i in events], cap)):
            chunk[i] = p
    return chunk


# -- the wire -----------------------------------------------------------------------


class Chunk(msgspec.Struct, array_like=True, gc=False):
    """A chunk of one job's stream as it crosses a pipe; ``end`` on the last, with ``error`` if the adapter raised."""

    job: int
    order: bytes
    events: list[PreparedEvent] = []
    sessions: list[Session] = []
    cursors: list[Cursor] = []
    notices: list[Notice] = []
    unchanged: list[Unchanged] = []
    partials: list[Partial] = []
    end: bool = False
    error: str | None = None
    #: Not the source's fault (a ``VoyagerError`` on the worker): the scan stops with it.
    abort: str | None = None

    def items(self) -> list[Prepared]:
        if len(self.order) == len(self.events):
            return list(self.events)  # the common case: nothing but events
        lists: dict[int, Iterator[Prepared]] = {
            _EVENT: iter(self.events),
            _CODES[Session]: iter(self.sessions),
            _CODES[Cursor]: iter(self.cursors),
            _CODES[Notice]: iter(self.notices),
            _CODES[Unchanged]: iter(self.unchanged),
            _CODES[Partial]: iter(self.partials),
        }
        return [next(lists[code]) for code in self.order]


class Job(msgspec.Struct, array_like=True, frozen=True):
    """What a worker is asked to read: one source, from a cursor or from its start."""

    id: int
    source: Source
    cursor: Cursor | None = None


def chunk_of(
    job: int, items: list[Prepared], *, end: bool = False, error: str | None = None, abort: str | None = None
) -> Chunk:
    events: list[PreparedEvent] = []
    by_code: dict[int, list[Any]] = {code: [] for code in _CODES.values()}
    order = bytearray()
    for item in items:
        if type(item) is PreparedEvent:
            events.append(item)
            order.append(_EVENT)
        else:
            code = _CODES[type(item)]
            by_code[code].append(item)
            order.append(code)
    return Chunk(
        job=job,
        order=bytes(order),
        events=events,
        sessions=by_code[_CODES[Session]],
        cursors=by_code[_CODES[Cursor]],
        notices=by_code[_CODES[Notice]],
        unchanged=by_code[_CODES[Unchanged]],
        partials=by_code[_CODES[Partial]],
        end=end,
        error=error,
        abort=abort,
    )


_MSGPACK = b"M"
_PICKLE = b"P"
_encoder = msgspec.msgpack.Encoder()
_chunk_decoder = msgspec.msgpack.Decoder(Chunk)
_jobs_decoder = msgspec.msgpack.Decoder(list[Job])


def encode(value: Chunk | Job) -> bytes:
    """``value`` as bytes for a pipe: msgpack, or pickle for text msgpack cannot hold."""
    try:
        return _MSGPACK + _encoder.encode(value)
    except Exception:  # a lone surrogate (an undecodable file name), an int past 64 bits: keep it exactly
        import pickle

        return _PICKLE + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def encode_jobs(jobs: list[Job]) -> bytes:
    """A batch of jobs as bytes for a pipe (as :func:`encode`)."""
    try:
        return _MSGPACK + _encoder.encode(jobs)
    except Exception:  # text msgpack cannot hold: keep it exactly
        import pickle

        return _PICKLE + pickle.dumps(jobs, protocol=pickle.HIGHEST_PROTOCOL)


def decode_chunk(data: bytes) -> Chunk:
    return _decode(data, _chunk_decoder)


def decode_jobs(data: bytes) -> list[Job]:
    return _decode(data, _jobs_decoder)


_T = TypeVar("_T")


def _decode(data: bytes, decoder: msgspec.msgpack.Decoder[_T]) -> _T:
    body = memoryview(data)[1:]
    if data[:1] == _PICKLE:
        import pickle

        pickled: _T = pickle.loads(body)  # noqa: S301 - written by this program's own worker, never read from disk
        return pickled
    return decoder.decode(body)
