"""Reading whole JSON documents: a session kept as one JSON file, or a folder of one-event JSON files.

Agents that rewrite a session file in place (Cline's ``*.messages.json``, Gemini's older
``session-*.json``, Vibe's chunks, OpenHands' per-event files) are read whole through
:func:`read_json`: a regular file only (never blocks), lenient about encodings (invalid
UTF-8 and lone UTF-16 surrogates become U+FFFD, as in the JSONL reader), refusing
documents beyond a size cap, and answering a :class:`~voyager_sessions.ingest.adapters.base.Notice`
instead of raising, so one broken file costs that file only. A value nested too deeply for
the decoders (what a hostile or buggy writer can leave in one message) costs that value
only: it is read as ``null``, and named, while the rest of the document is kept.

A document is decoded whole in a few times its size of memory, so one larger than
``STREAM_JSON_BYTES`` is not (nor a smaller one of so many small values that it would take more than
``WHOLE_COST``): :func:`read_json_streamed` gives the adapters that know
where its bulk lies (a session's list of messages) that list as a :class:`StreamedArray`,
whose items are taken one at a time by :mod:`~voyager_sessions.ingest.jsonstream` on each
pass (linear in the document's size, whatever its shape) and decoded as a whole document is,
and the document's few other keys in one pass of their own. Such a session is indexed whatever
its size, in memory bounded by its largest message, not by the file, provided the adapter
does not hold the messages either (it yields each message's events as they come, see
``DeltaStream``). :func:`stream_end` is what every such adapter says after a pass (values too
deep, strings cut, messages skipped, a document caught half-written). Every adapter keeping a
session in one JSON document reads it this way (Cline, Roo, Kilo, Gemini CLI's ``.json``,
Copilot CLI's and VS Code's, Kiro's, Vibe 1.x's, Continue's, Nanocoder's, Amp's); what is still
read whole is a side file (an index, a title, one event) that no agent writes anywhere near the cap.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from voyager_sessions.core.plural import count
from voyager_sessions.ingest import jsonstream
from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.files import open_regular, read_notice
from voyager_sessions.ingest.jsonl import BadLine, TooDeep, decode_line, env_cap

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import IO

    from _typeshed import SupportsRead

    #: How a streamed document is opened again for each pass (a file by default; a zip member for an export).
    #: Anything with ``read(n)`` does: ijson asks no more of it.
    Opener = Callable[[], AbstractContextManager[SupportsRead[bytes]]]

#: A JSON document larger than this is not read (named instead): no session file comes near it,
#: and it is decoded in memory whole. ``VOYAGER_MAX_JSON_BYTES`` changes it.
MAX_JSON_BYTES = 256 << 20


#: A document larger than this is read by :func:`read_json_streamed` one array item at a time.
STREAM_JSON_BYTES = 32 << 20

#: A document below ``STREAM_JSON_BYTES`` whose decoded form is estimated (:func:`costly`) past this is streamed
#: too: ten million ``[]`` are 30 MB of text and 800 MB of Python lists (a 16 MiB one peaked at 438 MB).
WHOLE_COST = 96 << 20


def costly(data: bytes) -> bool:
    """True when decoding ``data`` whole would take more than ``WHOLE_COST``: its bytes plus a Python object's
    worth (``jsonstream.VALUE_COST``) for each value, the values counted by their separators and closing brackets
    at C speed (a comma or colon inside a string counts too: an estimate erring on the side of streaming)."""
    if len(data) <= jsonstream.COUNTED_FROM:
        return False
    values = data.count(b",") + data.count(b":") + data.count(b"]") + data.count(b"}")
    return len(data) + jsonstream.VALUE_COST * values > WHOLE_COST


#: In a document that is nested too deeply to decode, arrays and objects deeper than this are read as
#: ``null``. No agent's session comes near it; the decoders' own limit (Python's recursion limit)
#: lies far beyond it, so what remains decodes.
MAX_DEPTH = 128

#: A JSON string (skipped whole: brackets inside it are text), or a run of opening or of closing brackets (a bracket
#: bomb is runs of millions: one match each, not one a bracket).
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]+|[\]}]+', re.S)


def flatten_deep(data: bytes, limit: int = MAX_DEPTH) -> tuple[bytes, int]:
    """``data`` (JSON text) with every array or object nested deeper than ``limit`` replaced by ``null``,
    and how many were replaced. One pass over the text, linear in its size."""
    out: list[bytes] = []
    depth = kept_to = replaced = 0
    cut: int | None = None
    for m in _TOKEN.finditer(data):
        start, end = m.span()
        c = data[start]
        if c == 0x22:  # '"': a string, brackets and all
            continue
        run = end - start
        if c in (0x5B, 0x7B):  # '[' '{'
            if depth < limit + 1 <= depth + run and cut is None:
                cut = start + (limit - depth)  # the bracket that opens level limit + 1
            depth += run
        else:
            if cut is not None and depth - run <= limit:
                # The bracket that closes level limit + 1 is in this run.
                closes_at = start + (depth - (limit + 1))
                out += (data[kept_to:cut], b"null")
                kept_to, cut = closes_at + 1, None
                replaced += 1
            depth -= run
    out.append(data[kept_to:])
    return b"".join(out), replaced


def decode_document(data: bytes, name: str, notices: list[Notice] | None = None) -> Any:
    """The JSON value in ``data`` (see :func:`~voyager_sessions.ingest.jsonl.decode_line`), with values
    nested deeper than ``MAX_DEPTH`` read as ``null`` when the whole is too deep to decode (a Notice
    naming them goes to ``notices``). Raises :class:`BadLine` when ``data`` is not JSON."""
    try:
        return decode_line(data)
    except TooDeep:
        flat, replaced = flatten_deep(data)
        value = decode_line(flat)  # TooDeep again only if the text is not JSON at all
        if notices is not None:
            notices.append(deep_notice(name, replaced))
        return value


def max_json_bytes() -> int:
    return env_cap("VOYAGER_MAX_JSON_BYTES", MAX_JSON_BYTES)


def capped_bytes(fh: IO[bytes]) -> bytes:
    """What is left in ``fh``, a JSON document about to be decoded whole by its own reader (a side index, one
    file of a tree): ValueError, after reading no more than the cap, past ``VOYAGER_MAX_JSON_BYTES``."""
    limit = max_json_bytes()
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit:,} bytes (VOYAGER_MAX_JSON_BYTES)")
    return data


def read_json(path: str | os.PathLike[str], *, fatal: bool = True, notices: list[Notice] | None = None) -> Any | Notice:
    """The JSON value in the file at ``path``, or a Notice saying why it could not be read.

    ``fatal`` is what the Notice says about the source: True when the file *is* the
    source (a session file), False when it is one piece of a larger source (one event
    file of a folder, a side file holding a title). ``notices`` collects what was skipped
    inside a document that was read (values nested too deeply).
    """
    name = os.fspath(path)
    try:
        with open_regular(name) as fh:
            size = os.fstat(fh.fileno()).st_size
            limit = max_json_bytes()
            if size > limit:
                return Notice(
                    source=name,
                    reason=f"{size:,} bytes: larger than {limit:,} (VOYAGER_MAX_JSON_BYTES); skipped",
                    fatal=fatal,
                )
            data = fh.read(limit + 1)
    except OSError as exc:
        return read_notice(name, exc, fatal=fatal)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        return Notice(source=name, reason="empty file: nothing to index yet", fatal=False)
    try:
        return decode_document(data.strip(), name, notices)
    except BadLine as exc:
        # A document rewritten in place may be caught half-written: worth a retry.
        return Notice(source=name, reason=f"{exc}; skipped", fatal=fatal, transient=True)


def read_json_object(
    path: str | os.PathLike[str], *, fatal: bool = True, notices: list[Notice] | None = None
) -> dict[str, Any] | Notice:
    """Like :func:`read_json`, for a document that must be a JSON object."""
    value = read_json(path, fatal=fatal, notices=notices)
    if isinstance(value, Notice) or isinstance(value, dict):
        return value
    return Notice(source=os.fspath(path), reason=f"a JSON {type(value).__name__}, not an object; skipped", fatal=fatal)


def sorted_files(folder: Path, suffix: str) -> list[Path]:
    """The regular files in ``folder`` whose names end with ``suffix``, in name order ([] if unreadable)."""
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.name.endswith(suffix) and e.is_file(follow_symlinks=False))
    except OSError:
        return []


class StreamedArray:
    """The items of the top-level array (``key`` None) or of the array at top-level ``key`` of the JSON file
    at ``path``, decoded one at a time each time it is iterated (the file is read again each pass, by
    :mod:`~voyager_sessions.ingest.jsonstream`, in time linear in its size).

    Each item is decoded as a whole document is (:func:`decode_document`). A document that turns out
    malformed, or vanishes, ends the iteration early: :attr:`error` then says why (the items before it
    were delivered). :attr:`stats` counts what a pass skipped: values nested more than ``MAX_DEPTH``
    deep (read as ``null``), strings cut at ``jsonstream.MAX_STRING_BYTES``, items too large to hold or
    not JSON (each costs itself only).
    """

    def __init__(self, path: str, key: str | None, opener: Opener | None = None) -> None:
        self.path = path
        self.key = key
        #: What opens the document for a pass (None: the file at ``path``); it raises OSError when it cannot read.
        self.opener = opener
        self.error: str | None = None
        #: The pass ended for a reason a later scan cannot change (a decompression cap): not read again until it changes.
        self.final = False
        self.stats = jsonstream.Stats()

    @property
    def too_deep(self) -> int:
        return self.stats.too_deep

    def __iter__(self) -> Iterator[Any]:
        self.stats = stats = jsonstream.Stats()
        self.error, self.final = None, False
        try:
            with (self.opener or (lambda: open_regular(self.path)))() as fh:
                for text in jsonstream.array_items(fh, self.key, stats):
                    try:
                        item = decode_document(text, self.path)
                    except BadLine as exc:
                        stats.bad += 1
                        stats.bad_reason = stats.bad_reason or str(exc)
                        continue
                    yield item
        except Capped as exc:
            self.error, self.final = str(exc), True
        except OSError as exc:
            self.error = f"unreadable: {exc.strerror or exc}"
        except jsonstream.Malformed as exc:
            self.error = f"malformed JSON: {exc}"


class Capped(OSError):
    """A stream cut at a cap that a later read would meet again (a zip member inflating past its bound)."""


def _streamed_values(path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values of the top-level ``keys`` of the JSON object at ``path`` (None for one absent, or not reached
    before the file turned out bad): one streaming pass, ended once every key is found (the few keys a session's
    header holds come before its messages, so that pass is short), each decoded as a whole document is."""
    found: dict[str, Any] = dict.fromkeys(keys)
    try:
        with open_regular(path) as fh:
            for name, text in jsonstream.top_values(fh, keys, jsonstream.Stats()):
                try:
                    found[name] = decode_document(text, path)
                except BadLine:
                    pass
    except (OSError, jsonstream.Malformed):
        pass  # what was found before stands; the pass over the array says what went wrong
    return found


def stream_end(items: Any, path: str) -> Iterator[Notice]:
    """What an adapter yields after a pass over ``items`` when it is a :class:`StreamedArray` (nothing for a
    list): what the pass skipped (values too deep, strings cut, items too large or not JSON), then, if it
    ended early, a fatal Notice: transient when the file was caught half-rewritten, or gone (what was read
    stands and the file is read again next scan), not when it met a cap. An adapter stops its read after
    that Notice."""
    if not isinstance(items, StreamedArray):
        return
    stats = items.stats
    if stats.too_deep:
        yield deep_notice(path, stats.too_deep)
    if stats.cut_strings:
        yield Notice(
            source=path,
            reason=f"{count(stats.cut_strings, 'string')} longer than {jsonstream.MAX_STRING_BYTES:,} bytes cut there",
        )
    if stats.too_large:
        yield Notice(
            source=path,
            reason=f"{count(stats.too_large, 'item')} too large to hold (over "
            f"{jsonstream.MAX_PIECE_COST >> 20} MiB decoded) skipped",
        )
    if stats.bad:
        yield Notice(source=path, reason=f"{count(stats.bad, 'item')} not JSON skipped ({stats.bad_reason})")
    if items.error is not None:
        if items.final:
            yield Notice(source=path, reason=f"{items.error}; the rest is not read", fatal=True)
        else:
            yield Notice(source=path, reason=f"{items.error}; read again next scan", fatal=True, transient=True)


def deep_notice(path: str, replaced: int) -> Notice:
    """The Notice for ``replaced`` values of the document at ``path`` read as ``null``, nested too deeply."""
    return Notice(
        source=path,
        reason=f"{replaced} value{'s' if replaced != 1 else ''} nested more than "
        f"{MAX_DEPTH} deep skipped (read as null)",
    )


def read_json_streamed(
    path: str | os.PathLike[str],
    array: str,
    keys: tuple[str, ...] = (),
    *,
    fatal: bool = True,
    notices: list[Notice] | None = None,
) -> Any | Notice:
    """Like :func:`read_json`, but a file larger than ``STREAM_JSON_BYTES`` is never decoded whole.

    ``array`` is where the bulk of the document lies: ``""`` for a document that is one array,
    else the top-level key of an object holding it. Past the threshold that array is a
    :class:`StreamedArray` and, for an object, only ``keys`` (and ``array``) are in the dict
    returned; below it, the document is read whole as :func:`read_json` does.
    ``VOYAGER_MAX_JSON_BYTES`` bounds only what is decoded whole.
    """
    name = os.fspath(path)
    try:
        with open_regular(name) as fh:
            size = os.fstat(fh.fileno()).st_size
            dense = jsonstream.COUNTED_FROM < size <= STREAM_JSON_BYTES and costly(fh.read(STREAM_JSON_BYTES + 1))
    except OSError as exc:
        return read_notice(name, exc, fatal=fatal)
    if size <= STREAM_JSON_BYTES and not dense:
        return read_json(name, fatal=fatal, notices=notices)
    if not array:
        return StreamedArray(name, None)
    doc: dict[str, Any] = _streamed_values(name, keys)
    doc[array] = StreamedArray(name, array)
    return doc
