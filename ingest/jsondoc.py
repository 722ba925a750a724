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
``STREAM_JSON_BYTES`` is not: :func:`read_json_streamed` gives the adapters that know
where its bulk lies (a session's list of messages) that list as a :class:`StreamedArray`,
decoded one message at a time with ``ijson`` on each pass, and the document's few other
keys decoded in one pass of their own. Such a session is indexed whatever its size, in memory
bounded by its largest message, not by the file, provided the adapter does not hold the
messages either (it yields each message's events as they come, see ``DeltaStream``).
:func:`stream_end` is what every such adapter says after a pass (values too deep, a
document caught half-written). Every adapter keeping a session in one JSON document reads
it this way (Cline, Roo, Kilo, Gemini CLI's ``.json``, Copilot CLI's and VS Code's, Kiro's,
Vibe 1.x's, Continue's, Nanocoder's, Amp's); what is still read whole is a side file (an
index, a title, one event) that no agent writes anywhere near the cap.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

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


#: In a document that is nested too deeply to decode, arrays and objects deeper than this are read as
#: ``null``. No agent's session comes near it; the decoders' own limit (Python's recursion limit)
#: lies far beyond it, so what remains decodes.
MAX_DEPTH = 128

#: A JSON string (skipped whole: brackets inside it are text), or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def flatten_deep(data: bytes, limit: int = MAX_DEPTH) -> tuple[bytes, int]:
    """``data`` (JSON text) with every array or object nested deeper than ``limit`` replaced by ``null``,
    and how many were replaced. One pass over the text, linear in its size."""
    out: list[bytes] = []
    depth = kept_to = replaced = 0
    cut: int | None = None
    for m in _TOKEN.finditer(data):
        c = data[m.start()]
        if c == 0x22:  # '"': a string, brackets and all
            continue
        if c in (0x5B, 0x7B):  # '[' '{'
            depth += 1
            if depth == limit + 1 and cut is None:
                cut = m.start()
        else:
            if depth == limit + 1 and cut is not None:
                out += (data[kept_to:cut], b"null")
                kept_to, cut = m.end(), None
                replaced += 1
            depth -= 1
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


class _Builder:
    """One JSON value built from ``ijson.basic_parse`` events, arrays and objects deeper than ``MAX_DEPTH``
    read as ``null`` (ijson's own ``items`` pays the depth of every value in the prefix it names: a document
    nested 50,000 deep took gigabytes)."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.keys: list[Any] = []
        self.skip = 0  # depth inside a value too deep to keep
        self.skipped = 0
        self.value: Any = None
        self.done = False

    def _put(self, value: Any) -> None:
        if not self.stack:
            self.value, self.done = value, True
        elif isinstance(self.stack[-1], list):
            self.stack[-1].append(value)
        else:
            self.stack[-1][self.keys[-1]] = value

    def feed(self, event: str, value: Any) -> None:
        if self.skip:
            if event in ("start_map", "start_array"):
                self.skip += 1
            elif event in ("end_map", "end_array"):
                self.skip -= 1
                if not self.skip:
                    self._put(None)
            return
        if event in ("start_map", "start_array"):
            if len(self.stack) >= MAX_DEPTH:
                self.skip, self.skipped = 1, self.skipped + 1
                return
            self.stack.append({} if event == "start_map" else [])
            self.keys.append(None)
        elif event in ("end_map", "end_array"):
            self.keys.pop()
            self._put(self.stack.pop())
        elif event == "map_key":
            self.keys[-1] = value
        else:
            self._put(value)


def _values(path: str, key: str | None, *, array: bool, opener: Opener | None = None) -> Iterator[tuple[Any, int]]:
    """(value, values skipped as too deep) for: each item of the top-level array (``key`` None), each item of
    the array at top-level ``key`` (``array``), or the value of top-level ``key``. One streaming pass over
    the file at ``path``, or what ``opener`` opens."""
    import ijson  # only for documents too large to decode whole: the search path never imports it

    depth = 0
    top_key: Any = None
    inside = False  # within the array whose items are wanted
    builder: _Builder | None = None
    with (opener or (lambda: open_regular(path)))() as fh:
        for event, value in ijson.basic_parse(fh, use_float=True):
            if builder is not None:
                builder.feed(event, value)
                if builder.done:
                    yield builder.value, builder.skipped
                    builder = None
                    if not array:
                        return
                continue
            container = event in ("start_map", "start_array")
            wanted = (
                (key is None and depth == 1 and inside)
                or (key is not None and depth == 1 and top_key == key and not inside and not array)
                or (key is not None and depth == 2 and inside)
            )
            if wanted and event not in ("end_map", "end_array", "map_key"):
                builder = _Builder()
                builder.feed(event, value)
                if builder.done:
                    yield builder.value, 0
                    builder = None
                    if not array:
                        return
                continue
            if container:
                depth += 1
                if array and (
                    (key is None and depth == 1 and event == "start_array")
                    or (key is not None and depth == 2 and top_key == key and event == "start_array")
                ):
                    inside = True
            elif event in ("end_map", "end_array"):
                if inside and depth == (1 if key is None else 2):
                    inside = False
                depth -= 1
            elif event == "map_key" and depth == 1:
                top_key = value


class StreamedArray:
    """The items of the top-level array (``key`` None) or of the array at top-level ``key`` of the JSON file
    at ``path``, decoded one at a time each time it is iterated (the file is read again each pass).

    A document that turns out malformed, or vanishes, ends the iteration early: :attr:`error`
    then says why (the items before it were delivered). :attr:`too_deep` counts values nested
    more than ``MAX_DEPTH`` deep, read as ``null``.
    """

    def __init__(self, path: str, key: str | None, opener: Opener | None = None) -> None:
        self.path = path
        self.key = key
        #: What opens the document for a pass (None: the file at ``path``); it raises OSError when it cannot read.
        self.opener = opener
        self.error: str | None = None
        self.too_deep = 0

    def __iter__(self) -> Iterator[Any]:
        import ijson

        self.too_deep = 0
        try:
            for item, skipped in _values(self.path, self.key, array=True, opener=self.opener):
                self.too_deep += skipped
                yield item
        except OSError as exc:
            self.error = f"unreadable: {exc.strerror or exc}"
        except (ijson.JSONError, ValueError) as exc:
            self.error = f"malformed JSON: {' '.join(str(exc).split())[:200]}"  # ijson says it on several lines


def _streamed_values(path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values of the top-level ``keys`` of the JSON object at ``path`` (None for one absent, or not reached
    before the file turned out bad): one streaming pass, ended once every key is found (the few keys a session's
    header holds come before its messages, so that pass is short), arrays and objects nested more
    than ``MAX_DEPTH`` deep read as ``null``."""
    import ijson

    found: dict[str, Any] = dict.fromkeys(keys)
    wanted = set(keys)
    depth = 0
    key: Any = None
    builder: _Builder | None = None
    try:
        with open_regular(path) as fh:
            for event, value in ijson.basic_parse(fh, use_float=True):
                if builder is None and depth == 1:
                    if event == "map_key":
                        key = value
                        continue
                    if key in wanted and event not in ("end_map", "end_array"):
                        builder = _Builder()  # a wanted key's value starts here
                if builder is not None:
                    builder.feed(event, value)
                    if builder.done:
                        found[key], builder = builder.value, None
                        wanted.discard(key)
                        if not wanted:
                            break
                    continue
                if event in ("start_map", "start_array"):
                    depth += 1
                elif event in ("end_map", "end_array"):
                    depth -= 1
    except (OSError, ijson.JSONError, ValueError):
        pass  # what was found before stands; the pass over the array says what went wrong
    return found


def stream_end(items: Any, path: str) -> Iterator[Notice]:
    """What an adapter yields after a pass over ``items`` when it is a :class:`StreamedArray` (nothing for a
    list): the values read as ``null`` for their depth, then, if the pass ended early (the file caught
    half-rewritten, or gone), a fatal transient Notice, so what was read stands and the file is read
    again next scan. An adapter stops its read after that Notice."""
    if not isinstance(items, StreamedArray):
        return
    if items.too_deep:
        yield deep_notice(path, items.too_deep)
    if items.error is not None:
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
    except OSError as exc:
        return read_notice(name, exc, fatal=fatal)
    if size <= STREAM_JSON_BYTES:
        return read_json(name, fatal=fatal, notices=notices)
    if not array:
        return StreamedArray(name, None)
    doc: dict[str, Any] = _streamed_values(name, keys)
    doc[array] = StreamedArray(name, array)
    return doc
