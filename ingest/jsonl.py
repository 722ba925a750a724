"""Reading append-only JSONL session files: complete lines, byte offsets, bad lines named.

Claude Code and Codex append one JSON object a line. ``read_records`` streams the
decoded objects with the byte offsets the pipeline needs to resume later, and turns
everything that is not a good record into a ``Notice``: a malformed line, a file that
is not text at all, a file that vanished. A last line without its newline is still
being written by the agent: it is decoded if it already parses (so a finished file
that lacks a final newline loses nothing) but it is never counted as consumed, so the
next scan reads it again and the pipeline replaces what it produced.

``decode_line`` (that lenient decoding of one line) and ``decode_json`` (the strict one for JSON kept
inside a record) live in ``jsonvalue``, below this module and ``jsonstream``; they are named here too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from voyager_sessions.core.digest import blake2b
from voyager_sessions.ingest.adapters.base import Cursor, Notice
from voyager_sessions.ingest.files import open_regular, read_notice

# Named here too, for the readers that take them with the lines (their home is jsonvalue).
from voyager_sessions.ingest.jsonvalue import BadLine as BadLine
from voyager_sessions.ingest.jsonvalue import TooDeep as TooDeep
from voyager_sessions.ingest.jsonvalue import decode_json as decode_json
from voyager_sessions.ingest.jsonvalue import decode_line as decode_line
from voyager_sessions.ingest.jsonvalue import scrub_surrogates as scrub_surrogates

_CHUNK = 1 << 20
#: Name at most this many bad lines per file; the rest are counted in one summary notice.
MAX_NAMED_BAD_LINES = 5
#: A line longer than this is skipped (named) without being held in memory: no event's
#: indexed text can come near it (the per-event cap is 256 Ki characters), and a JSON
#: decoder needs the whole line at once. ``VOYAGER_MAX_LINE_BYTES`` changes it.
MAX_LINE_BYTES = 64 << 20
_BOM = b"\xef\xbb\xbf"


def env_cap(var: str, default: int) -> int:
    """A size cap in bytes: ``default``, or the environment variable ``var`` when set to a number
    (at least 64 KiB: a cap set absurdly low would skip every session)."""
    try:
        return max(1 << 16, int(os.environ.get(var, default)))
    except ValueError:
        return default


def max_line_bytes() -> int:
    return env_cap("VOYAGER_MAX_LINE_BYTES", MAX_LINE_BYTES)


def typed_decoder(shape: Any, fit: Callable[[Any], Any] | None = None) -> Callable[[bytes], Any]:
    """A ``decode_line`` that first tries msgspec's decoder typed as ``shape``.

    A typed decode skips the fields ``shape`` does not name without building them (a Claude
    Code line repeats its tool output in ``toolUseResult``, which nothing reads). ``shape``
    may be a ``TypedDict`` of ``Any`` (the typed decode then gives the same dict of the fields
    it names) or a ``msgspec.Struct`` (no dict is built at all, and the reader reads attributes).
    A line that is not of that shape, and every line msgspec refuses, goes through
    ``decode_line`` as before, then through ``fit``, which must make of that value what the
    reader would have made of it (for a Struct: the same Struct, a value of the wrong type
    read as absent); so what an adapter sees of a bad line does not change.
    """
    typed = msgspec.json.Decoder(shape).decode

    def decode(line: bytes) -> Any:
        try:
            return typed(line)
        except RecursionError:
            raise BadLine("nested too deeply") from None
        except msgspec.DecodeError:  # a ValidationError (another shape) too
            value = decode_line(line)
            return value if fit is None else fit(value)

    return decode


class Record(msgspec.Struct, frozen=True):
    """One decoded JSON object and where its line sits in the file."""

    value: Any
    start: int
    end: int
    complete: bool
    lineno: int
    #: The line's bytes as read (without its newline): a cursor after it hashes them without reading them again.
    raw: bytes | None = None


def line_hash(line: bytes) -> str:
    """A short, stable hash of one line, used to detect that a file was rewritten."""
    return blake2b(line, digest_size=12).hexdigest()


def _read_span(path: str, start: int, end: int) -> bytes | None:
    """Bytes ``[start, end)`` of ``path`` (fewer if it is shorter now); None if it cannot be read."""
    try:
        with open_regular(path) as fh:
            fh.seek(start)
            return fh.read(end - start)
    except OSError:
        return None


def tail_matches(path: str, start: int, end: int, expected: str) -> bool:
    """True if bytes ``[start, end)`` of ``path`` still hash to ``expected`` (the prefix is unchanged)."""
    data = _read_span(path, start, end)
    return data is not None and len(data) == end - start and line_hash(data.rstrip(b"\n")) == expected


def read_records(
    path: str, offset: int = 0, first_lineno: int = 1, *, decode: Callable[[bytes], Any] = decode_line
) -> Iterator[Record | Notice]:
    """Yield every JSON object in ``path`` from byte ``offset``, with Notices for what had to be skipped.

    The file is opened read-only (a regular file only: never a FIFO that could block)
    and read in 1 MiB chunks, in linear time whatever the line lengths; memory stays
    within one line (at most ``MAX_LINE_BYTES``) plus a chunk. Each line stands alone:
    a NUL byte, a byte-order mark, deep nesting or broken JSON costs that line only.
    ``decode`` turns a line into its value (``decode_line``, or a ``typed_decoder``).
    """
    bad = 0
    lineno = first_lineno - 1
    limit = max_line_bytes()
    try:
        fh = open_regular(path)
    except OSError as exc:
        yield read_notice(path, exc, what="open")
        return
    with fh:
        try:
            fh.seek(offset)
        except OSError as exc:
            yield Notice(source=path, reason=f"cannot seek: {exc}", fatal=True, transient=True)
            return
        pos = offset
        pending: list[bytes] = []  # the start of a line that continues in the next chunk
        pending_len = 0
        oversize = False
        at_start = offset == 0
        leftover = b""  # what followed a long line's newline in the read that found it
        while True:
            try:
                chunk, leftover = (leftover, b"") if leftover else (fh.read(_CHUNK), b"")
            except OSError as exc:
                yield Notice(source=path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                return
            if not chunk:
                break
            pieces = chunk.split(b"\n")
            tail = pieces.pop()  # what follows the chunk's last newline: the next line's start
            for piece in pieces:
                lineno += 1
                start = pos
                length = pending_len + len(piece)
                pos += length + 1
                if oversize or length > limit:
                    bad += 1
                    if bad <= MAX_NAMED_BAD_LINES:
                        yield Notice(
                            source=path,
                            reason=f"line of {length:,} bytes skipped (longer than {limit:,}: VOYAGER_MAX_LINE_BYTES)",
                            where=f"line {lineno}",
                        )
                else:
                    line = raw = b"".join(pending) + piece if pending else piece
                    if at_start and line.startswith(_BOM):
                        line = line[len(_BOM) :]
                    # An object's line is decoded as it is (no stripped copy of every line): a decoder
                    # takes nothing but the object between its braces, so stripping would change nothing.
                    stripped = line if line.startswith(b"{") and line.endswith(b"}") else line.strip()
                    if stripped:
                        try:
                            value = decode(stripped)
                        except BadLine as exc:
                            bad += 1
                            if bad <= MAX_NAMED_BAD_LINES:
                                yield Notice(source=path, reason=f"{exc}; line skipped", where=f"line {lineno}")
                        else:
                            yield Record(value, start, pos, True, lineno, raw)
                at_start = False
                if pending_len or pending or oversize:
                    pending, pending_len, oversize = [], 0, False
            if tail:
                if not oversize:
                    pending.append(tail)
                    pending_len += len(tail)
                    if pending_len > limit:
                        pending, oversize = [], True  # counted on, not held: the line is skipped at its end
                else:
                    pending_len += len(tail)
            if pending_len > LONG_LINE and not oversize:
                # A long line is read from here by the streamed walk (jsonstream): never held whole, its
                # strings past jsonstream.MAX_STRING_BYTES cut, in memory bounded whatever it holds.
                lineno += 1
                rest = _LineRest(pending, fh, limit)
                pending, pending_len = [], 0
                try:
                    outcome: Any = _walk_line(rest, decode, at_start)
                except OSError as exc:
                    yield Notice(source=path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                    return
                at_start = False
                if not rest.newline:  # the file ended first: an unterminated last line, as below
                    if isinstance(outcome, BadLine) or rest.length > limit:
                        yield Notice(
                            source=path,
                            reason="last line is incomplete (no newline yet); left for the next scan",
                            where=f"line {lineno}",
                        )
                    else:
                        yield Record(value=outcome, start=pos, end=pos + rest.length, complete=False, lineno=lineno)
                    break
                start = pos
                pos += rest.length + 1
                leftover = rest.after
                if rest.length > limit or isinstance(outcome, BadLine):
                    bad += 1
                    if bad <= MAX_NAMED_BAD_LINES:
                        reason = (
                            f"line of {rest.length:,} bytes skipped (longer than {limit:,}: VOYAGER_MAX_LINE_BYTES)"
                            if rest.length > limit
                            else f"{outcome}; line skipped"
                        )
                        yield Notice(source=path, reason=reason, where=f"line {lineno}")
                else:
                    yield Record(outcome, start, pos, True, lineno)
        if pending_len:
            # A last line without its newline: still being written, or the file's unterminated end.
            lineno += 1
            line = b"".join(pending)
            if at_start and line.startswith(_BOM):
                line = line[len(_BOM) :]
            try:
                if oversize or not line.strip():
                    raise BadLine("too long" if oversize else "blank")
                value = decode(line.strip())
            except BadLine as exc:
                if "NUL" in str(exc):  # no newline will make it JSON
                    yield Notice(source=path, reason=f"{exc}; line skipped", where=f"line {lineno}")
                else:
                    yield Notice(
                        source=path,
                        reason="last line is incomplete (no newline yet); left for the next scan",
                        where=f"line {lineno}",
                    )
            else:
                yield Record(value=value, start=pos, end=pos + pending_len, complete=False, lineno=lineno)
    if offset == 0 and pos == 0 and not pending_len:
        yield Notice(source=path, reason="empty file: nothing to index yet")
    if bad > MAX_NAMED_BAD_LINES:
        yield Notice(source=path, reason=f"{bad} lines skipped in all ({bad - MAX_NAMED_BAD_LINES} not named)")


def cursor_after(
    path: str, record: Record | None, *, next_seq: int, session: str | None, state: dict[str, Any] | None = None
):
    """The Cursor to resume ``path`` after ``record`` (the last *complete* record consumed).

    ``None`` record means nothing complete was consumed: resume from the start.
    """
    if record is None:
        return Cursor(offset=0, next_seq=0, tail_hash="", tail_start=0, session=session, state=state or {})
    # The line as read when it was (a file rewritten since shows at the next scan, when the hash is checked).
    data = record.raw if record.raw is not None else _read_span(path, record.start, record.end) or b""
    return Cursor(
        offset=record.end,
        next_seq=next_seq,
        tail_hash=line_hash(data.rstrip(b"\n")),
        tail_start=record.start,
        session=session,
        state=state or {},
    )


#: A line longer than this is read by the streamed walk rather than decoded whole (see ``read_records``).
LONG_LINE = 8 << 20


class _LineRest:
    """The rest of one long line as a stream: the pieces already read, then the file up to the next newline.

    ``length`` counts the line's bytes served; ``newline`` says the line ended (``after`` then holds what
    followed the newline in that read); past ``limit`` bytes it stops serving (the line is too long, and the
    rest of it is only counted, never held, until its newline)."""

    def __init__(self, pending: list[bytes], fh: Any, limit: int) -> None:
        self.queue = list(pending)
        self.fh = fh
        self.limit = limit
        self.length = 0
        self.newline = False
        self.after = b""

    def read(self, n: int = -1) -> bytes:
        while True:
            if self.queue:
                data = self.queue.pop(0)
            elif self.newline:
                return b""
            else:
                data = self.fh.read(_CHUNK)
                if not data:
                    return b""
                cut = data.find(b"\n")
                if cut >= 0:
                    data, self.after, self.newline = data[:cut], data[cut + 1 :], True
            self.length += len(data)
            if self.length > self.limit:
                self.drain()
                return b""
            if data:
                return data

    def drain(self) -> None:
        """Count the rest of the line without keeping it."""
        self.queue = []
        while not self.newline:
            data = self.fh.read(_CHUNK)
            if not data:
                return
            cut = data.find(b"\n")
            if cut >= 0:
                self.length += cut
                self.after, self.newline = data[cut + 1 :], True
            else:
                self.length += len(data)


def _walk_line(rest: _LineRest, decode: Callable[[bytes], Any], at_start: bool) -> Any:
    """The value of the long line ``rest`` serves, decoded by ``decode`` from the walk's text of it (strings cut,
    values too deep read as null), or the BadLine saying why it is none. The line is consumed to its end."""
    from voyager_sessions.ingest import jsonstream

    if at_start and rest.queue and rest.queue[0].startswith(_BOM):
        rest.queue[0] = rest.queue[0][len(_BOM) :]
    try:
        text = jsonstream.one_value(rest, jsonstream.Stats())
        if text is None:
            return BadLine(f"a value too large to hold (over {jsonstream.MAX_PIECE_COST >> 20} MiB decoded)")
        return decode(text)
    except jsonstream.Malformed as exc:
        return BadLine(f"malformed JSON: {exc}")
    except BadLine as exc:
        return exc
    finally:
        rest.drain()
