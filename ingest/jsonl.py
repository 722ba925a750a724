"""Reading append-only JSONL session files: complete lines, byte offsets, bad lines named.

Claude Code and Codex append one JSON object a line. ``read_records`` streams the
decoded objects with the byte offsets the pipeline needs to resume later, and turns
everything that is not a good record into a ``Notice``: a malformed line, a file that
is not text at all, a file that vanished. A last line without its newline is still
being written by the agent: it is decoded if it already parses (so a finished file
that lacks a final newline loses nothing) but it is never counted as consumed, so the
next scan reads it again and the pipeline replaces what it produced.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters.base import Cursor, Notice

_CHUNK = 1 << 20
#: Name at most this many bad lines per file; the rest are counted in one summary notice.
MAX_NAMED_BAD_LINES = 5

_decode = msgspec.json.Decoder().decode


def _decode_lenient(line: bytes):
    """Decode one line; a line that is JSON but not valid UTF-8 keeps its text, with U+FFFD where bytes were bad."""
    try:
        return _decode(line)
    except msgspec.DecodeError:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return _decode(line.decode("utf-8", "replace"))
        raise


class Record(msgspec.Struct, frozen=True):
    """One decoded JSON object and where its line sits in the file."""

    value: Any
    start: int
    end: int
    complete: bool
    lineno: int


def line_hash(line: bytes) -> str:
    """A short, stable hash of one line, used to detect that a file was rewritten."""
    return hashlib.blake2b(line, digest_size=12).hexdigest()


def _read_span(path: str, start: int, end: int) -> bytes | None:
    """Bytes ``[start, end)`` of ``path`` (fewer if it is shorter now); None if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            return fh.read(end - start)
    except OSError:
        return None


def tail_matches(path: str, start: int, end: int, expected: str) -> bool:
    """True if bytes ``[start, end)`` of ``path`` still hash to ``expected`` (the prefix is unchanged)."""
    data = _read_span(path, start, end)
    return data is not None and len(data) == end - start and line_hash(data.rstrip(b"\n")) == expected


def read_records(path: str, offset: int = 0, first_lineno: int = 1) -> Iterator[Record | Notice]:
    """Yield every JSON object in ``path`` from byte ``offset``, with Notices for what had to be skipped.

    The file is opened read-only and read in 1 MiB chunks, so memory stays flat on a
    file of any size.
    """
    bad = 0
    lineno = first_lineno - 1
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        yield Notice(source=path, reason="vanished before it could be read", fatal=True, transient=True)
        return
    except OSError as exc:
        yield Notice(source=path, reason=f"cannot open: {exc.strerror or exc}", fatal=True, transient=True)
        return
    with fh:
        try:
            fh.seek(offset)
        except OSError as exc:
            yield Notice(source=path, reason=f"cannot seek: {exc}", fatal=True, transient=True)
            return
        pos = offset
        buf = b""
        first = True
        while True:
            try:
                chunk = fh.read(_CHUNK)
            except OSError as exc:
                yield Notice(source=path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                return
            if first and chunk:
                first = False
                if b"\x00" in chunk[:8192]:
                    yield Notice(source=path, reason="binary data, not a JSONL text file", where=f"byte {offset}", fatal=True)
                    return
            if not chunk:
                break
            buf += chunk
            lines = buf.split(b"\n")
            buf = lines.pop()
            for line in lines:
                lineno += 1
                start = pos
                pos += len(line) + 1
                stripped = line.strip()
                if not stripped:
                    continue
                try:
                    value = _decode_lenient(stripped)
                except (msgspec.DecodeError, UnicodeDecodeError) as exc:
                    bad += 1
                    if bad <= MAX_NAMED_BAD_LINES:
                        yield Notice(source=path, reason=f"malformed JSON skipped: {_short(exc)}", where=f"line {lineno}")
                    continue
                yield Record(value=value, start=start, end=pos, complete=True, lineno=lineno)
        if buf.strip():
            lineno += 1
            try:
                value = _decode_lenient(buf.strip())
            except (msgspec.DecodeError, UnicodeDecodeError):
                yield Notice(source=path, reason="last line is incomplete (no newline yet); left for the next scan", where=f"line {lineno}")
            else:
                yield Record(value=value, start=pos, end=pos + len(buf), complete=False, lineno=lineno)
    if bad > MAX_NAMED_BAD_LINES:
        yield Notice(source=path, reason=f"{bad} malformed JSON lines skipped in all ({bad - MAX_NAMED_BAD_LINES} not named)")


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."


def cursor_after(path: str, record: Record | None, *, next_seq: int, session: str | None, state: dict[str, Any] | None = None):
    """The Cursor to resume ``path`` after ``record`` (the last *complete* record consumed).

    ``None`` record means nothing complete was consumed: resume from the start.
    """
    if record is None:
        return Cursor(offset=0, next_seq=0, tail_hash="", tail_start=0, session=session, state=state or {})
    data = _read_span(path, record.start, record.end) or b""
    return Cursor(
        offset=record.end,
        next_seq=next_seq,
        tail_hash=line_hash(data.rstrip(b"\n")),
        tail_start=record.start,
        session=session,
        state=state or {},
    )
