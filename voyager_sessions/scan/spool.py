"""Tool output held back while a long scan indexes what people and agents wrote first.

A first index of a big history is searchable while it is built (it commits early and
then regularly), and what a person looks for first is what was said — prompts, replies,
reasoning — not the tool output that is most of the bytes. So a long scan runs in two
phases over one read of each source: its *words* phase sends every event but tool calls
and tool results (:data:`HELD_KINDS`) to the index and writes those, already prepared,
to a spool file in the data dir (:class:`Spool`); its *tools* phase then reads the spool
back into the index. Each source is read once; the spool costs a msgpack encoding and a
file write and read of the events it holds. With worker processes reading, the writer reads
frames back whenever it would otherwise wait for them (:attr:`Spool.pending`,
:meth:`Spool.next_frame`): words still come first, and no core idles.

:class:`PhasedIndex` stands between a source's read and the index during the words phase.
Deletions go straight to the index, and are remembered: a held event is dropped when its
session's documents (from its ``seq`` on) were deleted after it was held — the same
session read again from another source, a tail re-read, a source gone — exactly as the
deletion would have removed it had it been indexed at once. Tantivy applies a deletion
to the documents added before it, so without this a held event would come back.

The spool is the scan's alone (the writer lock), private (0600, in the 0700 data dir),
removed when the tools phase has read it, and by the next scan if the process died. Its
size is bounded (``SPOOL_MAX_BYTES``): a scan that fills it drains it (the tools of the
sources read so far) and goes on with the words of the next ones. What the state rows
say while a source's tool output waits is the scan's business (:mod:`.run`): a crash
then costs a re-read, never a loss or a duplicate.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.core.paths import open_private
from voyager_sessions.search.prepare import PreparedEvent

#: The kinds the words phase holds back: what tools did (people look for what was said first).
HELD_KINDS = frozenset({"tool_call", "tool_result"})

#: A spool grows to at most this many bytes before the scan drains it (``VOYAGER_SPOOL_MAX_BYTES``).
SPOOL_MAX_BYTES = 512 << 20

_HEADER = struct.Struct("<IqB")  # payload length, source number, codec
_MSGPACK, _PICKLE = 0, 1
_encode = msgspec.msgpack.Encoder().encode
_decode_events = msgspec.msgpack.Decoder(list[PreparedEvent]).decode


def spool_max_bytes() -> int:
    try:
        return max(1 << 20, int(os.environ.get("VOYAGER_SPOOL_MAX_BYTES", SPOOL_MAX_BYTES)))
    except ValueError:
        return SPOOL_MAX_BYTES


def clear(folder: Path) -> None:
    """Remove spools a scan that died left behind (the caller holds the writer lock: none is in use)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith("scan-spool"):
            try:
                os.unlink(folder / name)
            except OSError:
                pass


class Spool:
    """An append-only file of prepared tool events, a frame per batch, tagged with the source they came from."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = open_private(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        #: Events held so far: an event's position is how many were held before it.
        self.held = 0
        #: Bytes in the file, and where the next frame to read starts (frames are read while others are written).
        self.bytes = 0
        self._read_at = 0
        #: The position of the first event of the next frame to read.
        self._read_events = 0
        #: session -> [(events held when it was deleted, from which seq)]
        self._deletes: dict[str, list[tuple[int, int]]] = {}

    def hold(self, source: int, events: list[PreparedEvent]) -> None:
        """Write ``events`` (read from source number ``source``) to the end of the spool."""
        try:
            payload, codec = _encode(events), _MSGPACK
        except Exception:  # a lone surrogate in a tool name, say: keep it exactly
            import pickle

            payload, codec = pickle.dumps(events, protocol=pickle.HIGHEST_PROTOCOL), _PICKLE
        frame = _HEADER.pack(len(payload), source, codec) + payload
        written = 0
        while written < len(frame):
            written += os.pwrite(self._fd, memoryview(frame)[written:], self.bytes + written)
        self.held += len(events)
        self.bytes += len(frame)

    def deleted(self, session: str, from_seq: int) -> None:
        """``session``'s documents from ``from_seq`` on were deleted now: the held ones too."""
        self._deletes.setdefault(session, []).append((self.held, from_seq))

    @property
    def pending(self) -> bool:
        """True while some frame is written and not read yet."""
        return self._read_at < self.bytes

    def next_frame(self) -> tuple[int, list[PreparedEvent]] | None:
        """The oldest frame not read yet: (source number, its events less those deleted since they were held)."""
        if self._read_at >= self.bytes:
            return None
        head = os.pread(self._fd, _HEADER.size, self._read_at)
        size, source, codec = _HEADER.unpack(head)
        payload = os.pread(self._fd, size, self._read_at + _HEADER.size)
        self._read_at += _HEADER.size + size
        if codec == _MSGPACK:
            events = _decode_events(payload)
        else:
            import pickle

            events = pickle.loads(payload)  # noqa: S301 - written by this scan a moment ago, in its private dir
        at = self._read_events
        self._read_events += len(events)
        deletes = self._deletes
        if deletes:
            kept = []
            for i, ev in enumerate(events, start=at):
                gone = deletes.get(ev.session)
                if gone is None or not any(when > i and ev.seq >= seq for when, seq in gone):
                    kept.append(ev)
            events = kept
        return source, events

    def frames(self) -> Iterator[tuple[int, list[PreparedEvent]]]:
        """Every frame not read yet, in the order written."""
        while (frame := self.next_frame()) is not None:
            yield frame

    def reset(self) -> None:
        """Empty the file once every frame is read (positions and deletions go on counting)."""
        assert not self.pending
        os.ftruncate(self._fd, 0)
        self.bytes = self._read_at = 0

    def close(self) -> None:
        """Close and remove the file."""
        try:
            os.close(self._fd)
        finally:
            try:
                os.unlink(self.path)
            except OSError:
                pass


class PhasedIndex:
    """The index as a source's read sees it in the words phase: held kinds go to the spool, the rest through.

    ``source`` is the number of the source being read (set by the scan before each one);
    :attr:`held` counts, per source number, the events held back.
    """

    def __init__(self, index: Any, spool: Spool) -> None:
        self.index = index
        self.spool = spool
        self.source = 0
        self.held: dict[int, int] = {}
        #: Frames written per source number (the scan counts those it reads back).
        self.frames: dict[int, int] = {}
        #: Per source number, the latest stamp its events may count as (what its file's modification time
        #: proves, ``source_read.source_horizon``): the held ones are indexed with it when read back.
        self.horizons: dict[int, int | None] = {}

    def add_prepared(self, events: Iterable[PreparedEvent], horizon_ms: int | None = None) -> int:
        said: list[PreparedEvent] = []
        held: list[PreparedEvent] = []
        for ev in events:
            (held if ev.kind in HELD_KINDS else said).append(ev)
        n = len(said) + len(held)
        if held:
            self.horizons[self.source] = horizon_ms
            self.spool.hold(self.source, held)
            self.held[self.source] = self.held.get(self.source, 0) + len(held)
            self.frames[self.source] = self.frames.get(self.source, 0) + 1
        if said:
            self.index.add_prepared(said, horizon_ms)
        return n

    def delete_session(self, session_id: str, *, from_seq: int | None = None, keep_checkpoint: bool = True) -> None:
        self.spool.deleted(session_id, max(0, from_seq or 0))
        self.index.delete_session(session_id, from_seq=from_seq, keep_checkpoint=keep_checkpoint)

    def delete_sessions(
        self, session_ids: Collection[str], *, keep_checkpoint: bool = True, titles: bool = False
    ) -> None:
        for session_id in session_ids:
            self.spool.deleted(session_id, 0)
        self.index.delete_sessions(session_ids, keep_checkpoint=keep_checkpoint, titles=titles)

    def add_events(self, events: Any) -> int:
        added: int = self.index.add_events(events)
        return added  # titles, checkpoints: never a held kind

    def delete_title(self, session_id: str) -> None:
        self.index.delete_title(session_id)

    def delete_checkpoint(self, session_id: str) -> None:
        self.index.delete_checkpoint(session_id)
