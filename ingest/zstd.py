"""Reading zstd-compressed session data: a file of frames as lines, or one blob, both with a cap.

Two agents keep their sessions zstd-compressed: DeepSeek Harness writes its JSONL log as
consecutive zstd frames (one line a frame, or several), and Zed stores each thread as a
zstd-compressed JSON blob in SQLite. This module is the one place that decompresses: the
adapters ask for lines (:func:`stream_lines`) or a document (:func:`decompress_blob`) and
never see a codec.

zstd is a regular dependency: ``zstandard`` (the maintained binding of the reference C
library) below Python 3.14, the standard library's ``compression.zstd`` from 3.14 on (used
first wherever it is present). A default install reads both agents. An install without
either (installed with ``--no-deps``, or a 3.14 interpreter built without zstd) leaves
:func:`available` False, and :func:`missing_notice` says what to install, so a store Voyager
cannot read is named, never silently empty.

Hostile input is bounded: a frame may not ask for a window larger than 128 MiB (the
reference decoder's own default limit), compressed input is fed half a kilobyte at a time so
one call can never inflate to more than a few tens of MiB, a line longer than the JSONL
line cap is counted and skipped without being held, and decompressed output past a total
cap ends the read with a notice, so a zstd bomb costs bounded time and memory.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any, NamedTuple

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.files import open_regular, read_notice
from voyager_sessions.ingest.jsondoc import max_json_bytes
from voyager_sessions.ingest.jsonl import env_cap, max_line_bytes

#: The largest window a frame may ask for (2**27 = 128 MiB, libzstd's default decoding limit).
WINDOW_LOG_MAX = 27
#: Decompressed bytes one file may produce before the read stops (``VOYAGER_MAX_ZSTD_BYTES``).
MAX_STREAM_BYTES = 1 << 30
#: Compressed bytes handed to the decoder per call: with zstd's best ratio (an RLE block of
#: 128 KiB from 4 bytes) one call yields at most ~16 MiB, whatever the input.
_FEED = 1 << 9
_OUT = 1 << 20
_READ = 1 << 16

_BLANK_RUN = re.compile(rb"\n+")

#: What to install when no implementation is found: the package a default install brings (the old
#: ``voyager-sessions[zstd]`` extra is empty now, so naming it would not help).
INSTALL_HINT = "zstandard"


class ZstdError(ValueError):
    """zstd data that could not be decompressed: damaged, truncated or over a cap (the message says which)."""


class ZstdUnavailable(RuntimeError):
    """No zstd implementation is installed."""


def _load_backend() -> tuple[str, Any] | None:
    """The first usable implementation: the standard library's (3.14+), else ``zstandard``."""
    if sys.version_info >= (3, 14):  # (a 3.14 built without libzstd has no compression.zstd either)
        try:
            from compression import zstd as stdlib_zstd
        except ImportError:
            pass
        else:
            return "compression.zstd", stdlib_zstd
    try:
        import zstandard
    except ImportError:
        return None
    return "zstandard", zstandard


_BACKEND = _load_backend()


def backend() -> str | None:
    """The name of the implementation in use (``compression.zstd`` or ``zstandard``), or None."""
    return _BACKEND[0] if _BACKEND else None


def available() -> bool:
    """True when zstd data can be read."""
    return _BACKEND is not None


def use_backend(name: str | None, module: Any = None) -> None:
    """Switch implementation (tests: the stdlib API through a backport, or none at all)."""
    global _BACKEND
    _BACKEND = None if name is None else (name, module)


def install_hint(label: str) -> str:
    """The one sentence every zstd-compressed store shows while no implementation is installed."""
    return f"no zstd implementation installed (an incomplete install): `pip install {INSTALL_HINT}` to read {label} sessions"


def missing_notice(source: str, label: str, *, fatal: bool, detail: str = "") -> Notice:
    """The Notice for a store Voyager cannot decompress yet.

    Transient: once zstd is installed, the next scan reads the source even though it did
    not change.
    """
    return Notice(
        source=source, reason=install_hint(label) + (f" ({detail})" if detail else ""), fatal=fatal, transient=True
    )


def max_stream_bytes() -> int:
    return env_cap("VOYAGER_MAX_ZSTD_BYTES", MAX_STREAM_BYTES)


class _Frames:
    """Decompresses consecutive zstd frames fed piece by piece, whichever implementation is installed.

    Both implementations decode one frame per decoder object and hand back what follows
    the frame as ``unused_data``; a new decoder takes over there. ``pending`` is True while
    a frame has started and not ended: at the end of the input that is a torn frame.
    """

    def __init__(self) -> None:
        if _BACKEND is None:
            raise ZstdUnavailable(install_hint("these"))
        self.name, self.mod = _BACKEND
        self.error: type[BaseException] = self.mod.ZstdError
        self.frames = 0
        self.pending = False
        # zstandard's context is reused for every frame (a log may hold one frame per line, and
        # a context costs far more to make than to reset); the stdlib's decoder is one frame's.
        self._ctx = self.mod.ZstdDecompressor(max_window_size=1 << WINDOW_LOG_MAX) if self.name == "zstandard" else None
        self._options = (
            None if self._ctx is not None else {self.mod.DecompressionParameter.window_log_max: WINDOW_LOG_MAX}
        )
        self._dec = self._new()

    def _new(self) -> Any:
        if self._ctx is not None:
            return self._ctx.decompressobj()
        return self.mod.ZstdDecompressor(options=self._options)

    def _decompress(self, data: bytes) -> Iterator[bytes]:
        """What ``data`` decodes to in the current frame. The standard library's decoder takes an
        output limit, so it is drained a mebibyte at a time; ``zstandard``'s is bounded by the
        small input it is handed."""
        try:
            if self.name == "zstandard":
                out = self._dec.decompress(data)
                if out:
                    yield out
                return
            out = self._dec.decompress(data, max_length=_OUT)
            while True:
                if out:
                    yield out
                if self._dec.eof or self._dec.needs_input:
                    return
                out = self._dec.decompress(b"", max_length=_OUT)
        except (self.error, EOFError, ValueError) as exc:
            raise ZstdError(f"damaged zstd data: {exc}") from None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decompress ``data`` (any length), half a kilobyte at a time; raises :class:`ZstdError` on damage."""
        view = memoryview(data)
        while view:
            piece, view = view[:_FEED], view[_FEED:]
            self.pending = True
            yield from self._decompress(bytes(piece))
            while self._dec.eof:  # a frame ended inside this piece: a new decoder takes the rest
                self.frames += 1
                self.pending = False
                rest = self._dec.unused_data
                self._dec = self._new()
                if not rest:
                    break
                self.pending = True
                yield from self._decompress(rest)


def decompress_blob(data: bytes, *, limit: int | None = None) -> bytes:
    """The content of one zstd blob (one or more frames), at most ``limit`` bytes (default: the JSON cap,
    ``jsondoc.max_json_bytes``: a blob is one JSON document).

    Raises :class:`ZstdUnavailable` without an implementation and :class:`ZstdError` for
    data that is damaged, truncated or would inflate past the cap (it stops there: a bomb
    never gets the memory it asks for).
    """
    cap = max_json_bytes() if limit is None else limit
    frames = _Frames()
    out = bytearray()
    for piece in frames.feed(bytes(data)):
        out += piece
        if len(out) > cap:
            raise ZstdError(f"decompresses to more than {cap:,} bytes (VOYAGER_MAX_JSON_BYTES)")
    if frames.pending or not frames.frames:
        raise ZstdError("empty or truncated zstd data: no complete last frame")
    return bytes(out)


class Line(NamedTuple):
    """One line of decompressed text (without its newline) and its 1-based number; ``complete``
    is False for a last line that has no newline yet."""

    data: bytes
    lineno: int
    complete: bool


def stream_lines(path: str, *, limit: int | None = None) -> Iterator[Line | Notice]:
    """The lines of the zstd file at ``path``, decompressed as a stream, with Notices for what was skipped.

    Blank lines are counted, not yielded. Memory stays within one line (at most the JSONL
    line cap) plus a chunk, whatever the file holds. A damaged frame ends the read there (what came before is kept); a last
    frame still being written is named, and its complete lines are yielded. Raises
    :class:`ZstdUnavailable` when no implementation is installed.
    """
    cap = max_stream_bytes() if limit is None else limit
    line_cap = max_line_bytes()
    frames = _Frames()
    try:
        fh = open_regular(path)
    except OSError as exc:
        yield read_notice(path, exc, what="open")
        return
    lineno = 0
    total = 0
    consumed = 0
    pending: list[bytes] = []
    pending_len = 0
    oversize = False
    with fh:
        while True:
            try:
                chunk = fh.read(_READ)
            except OSError as exc:
                yield Notice(source=path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                return
            if not chunk:
                break
            try:
                for out in frames.feed(chunk):
                    total += len(out)
                    if total > cap:
                        yield Notice(
                            source=path,
                            reason=f"decompresses to more than {cap:,} bytes "
                            "(VOYAGER_MAX_ZSTD_BYTES); the rest is not read",
                            where=f"line {lineno + 1}",
                        )
                        return
                    # Walked with find, not split: a chunk of a bomb can hold millions of newlines.
                    start = 0
                    while (end := out.find(b"\n", start)) >= 0:
                        lineno += 1
                        length = pending_len + end - start
                        if oversize or length > line_cap:
                            yield Notice(
                                source=path,
                                where=f"line {lineno}",
                                reason=f"line of {length:,} bytes skipped (longer than {line_cap:,}: "
                                "VOYAGER_MAX_LINE_BYTES)",
                            )
                        elif length:
                            piece = out[start:end]
                            yield Line(b"".join(pending) + piece if pending else piece, lineno, True)
                        pending, pending_len, oversize = [], 0, False
                        start = end + 1
                        if (run := _BLANK_RUN.match(out, start)) is not None:  # blank lines: counted, not walked
                            lineno += run.end() - start
                            start = run.end()
                    tail = out[start:]
                    if tail:
                        pending_len += len(tail)
                        if not oversize:
                            pending.append(tail)
                            if pending_len > line_cap:
                                pending, oversize = [], True  # counted on, not held
            except ZstdError as exc:
                yield Notice(
                    source=path,
                    where=f"compressed byte {consumed:,}, after line {lineno}",
                    reason=f"{exc}; the rest of the file is not read",
                )
                return
            consumed += len(chunk)
    if frames.pending:
        yield Notice(
            source=path,
            where=f"after line {lineno}",
            reason="last zstd frame is incomplete (still being written?); read again when the file changes",
        )
    if pending_len:
        if oversize:
            yield Notice(
                source=path,
                where=f"line {lineno + 1}",
                reason=f"line of {pending_len:,} bytes skipped (longer than {line_cap:,}: VOYAGER_MAX_LINE_BYTES)",
            )
        else:
            yield Line(b"".join(pending), lineno + 1, False)
