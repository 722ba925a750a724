"""Walking a JSON document too large to decode whole: its big array's items one at a time, linear and bounded.

Owns the text-level reading of the documents ``jsondoc`` streams (past ``STREAM_JSON_BYTES``): the
raw bytes of each item of the top-level array, or of the array at one top-level key
(:func:`array_items`), and of the values of a few other top-level keys (:func:`top_values`).
``jsondoc`` decodes each piece with the decoder a whole document gets, so a streamed
message is the message a whole read gives.

The walk reads a window at a time and looks only at what delimits values: brackets, and
strings (found by ``bytes.find`` and a check of the backslashes before each quote, C speed
whatever the string holds). Every byte is looked at a bounded number of times, so the time
is linear in the document's size for every shape: a string or number that spans two reads
is never read again from its start. (ijson's yajl backend did that: a 96 MB string took 37 s,
a 1 MB one a few; it also stopped the whole document at the first invalid UTF-8 byte or
integer past 64 bits, which the whole-document decoder reads on.)

Memory is bounded by what one piece may cost, never by the document:

* a string longer than :data:`MAX_STRING_BYTES` is cut there (at a character and escape
  boundary), the rest of it skipped unread; more than the per-event cap of any string is
  never indexed anyway;
* arrays and objects nested more than :data:`MAX_DEPTH` deep inside a piece are read as
  ``null`` (counted), their text skipped without being held;
* a piece whose decoded form would pass :data:`MAX_PIECE_COST` (its bytes plus a Python
  object's worth for each value, so ten million ``{}`` count for what they would take) is
  skipped whole, counted: it is never held, and the items after it are read.

A document that ends before its structure closes (caught half-written) or is not JSON
where the walk needs it to be raises :class:`Malformed` after the pieces before.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Protocol

import msgspec

from voyager_sessions.ingest.jsonvalue import BadLine, decode_line

#: Bytes read at a time.
WINDOW = 64 << 10
#: A string of a streamed piece longer than this (bytes of its JSON text) is cut to it.
MAX_STRING_BYTES = 8 << 20
#: Arrays and objects nested deeper than this inside one piece are read as ``null`` (``jsondoc.MAX_DEPTH``).
MAX_DEPTH = 128
#: What a value is counted for beside its bytes: about a small Python object and its slot in a container.
VALUE_COST = 48
#: A piece (one item, one header value) estimated to take more than this decoded is skipped whole.
MAX_PIECE_COST = 48 << 20
#: Below this many bytes a piece cannot cost much more than its size (its values are counted past it).
COUNTED_FROM = 1 << 20
#: How many levels of arrays and objects too large for the window a skip descends into, item by item (each
#: item then skipped at C speed), before it walks what is left (a bracket bomb goes no deeper).
SKIP_DESCENT = 8
#: A scalar (a number, ``true`` …) longer than this is not one: the piece holding it is malformed.
MAX_SCALAR_BYTES = 4096

_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
#: Inside a value: what changes the depth, or starts a string (whose end ``string_end`` finds at C speed: a regex
#: would look at each of its characters, ~50 instructions a byte).
_DELIM = re.compile(rb'[\[\]{}"]')
_WS = re.compile(rb"[ \t\r\n]*")
#: The rest of a scalar: anything up to a delimiter.
_SCALAR = re.compile(rb'[^ \t\r\n,:\[\]{}"]*')
#: An escaped high surrogate (the first half of a character beyond the BMP) ending the text.
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\Z")


class Readable(Protocol):
    """What the walk reads from: a binary file, a zip member, the rest of a long JSONL line."""

    def read(self, n: int = -1, /) -> bytes: ...


class Malformed(ValueError):
    """The document is not JSON where the walk needs it to be, or ends before its structure closes."""


class Stats:
    """What a walk skipped, for the notices: values too deep, strings cut, pieces too large or not JSON."""

    __slots__ = ("bad", "bad_reason", "cut_strings", "too_deep", "too_large")

    def __init__(self) -> None:
        self.too_deep = 0
        self.cut_strings = 0
        self.too_large = 0
        self.bad = 0
        self.bad_reason = ""


def string_end(buf: bytes, pos: int, escaped: bool) -> tuple[int, bool]:
    """Where the JSON string whose content continues at ``buf[pos]`` closes: (index of its closing quote, False),
    or (-1, whether the last byte of ``buf`` leaves an escape open) when it does not close in ``buf``.
    ``escaped``: the byte at ``pos`` is escaped (the previous window ended on an open escape).

    The usual string (no backslash before its first quote) costs two ``find``s. Otherwise the text
    up to a candidate quote is rewritten with every escaped backslash and escaped quote made
    neutral (same length, two C-level passes), so the first quote left is the closing one; a
    candidate that was escaped doubles the span looked at, so escape-dense text stays linear.
    """
    n = len(buf)
    if escaped:
        if pos >= n:
            return -1, True
        pos += 1
    q = buf.find(b'"', pos)
    if q >= 0 and buf.find(b"\\", pos, q) < 0:
        return q, False
    span = (q + 1 - pos) if q >= 0 else n - pos
    while True:
        end = min(n, pos + max(span, 64))
        seg = buf[pos:end].replace(b"\\\\", b"__").replace(b'\\"', b"__")
        i = seg.find(b'"')
        if i >= 0:
            return pos + i, False
        open_escape = seg.endswith(b"\\")
        if end >= n:
            return -1, open_escape
        pos = end + 1 if open_escape else end
        if pos >= n:
            return -1, open_escape and pos > n
        span *= 2


def clean_end(s: bytes | bytearray) -> int:
    """The length of the longest prefix of ``s`` (a JSON string's text, cut anywhere) that ends neither inside
    an escape, nor between the two escaped halves of one character, nor inside a UTF-8 character."""
    n = len(s)
    while True:
        k = s.rfind(b"\\", max(0, n - 6), n)
        if k < 0 or _escape_run(s, k) % 2 == 0:
            break  # no escape starts in the last 6 bytes: none is open
        need = 6 if s[k + 1 : k + 2] == b"u" else 2
        if n - k >= need and not _HIGH_SURROGATE.match(s, k, n):
            break
        n = k  # incomplete, or the first half of a character whose second half is cut: look again before it
    i = n - 1
    while i >= max(0, n - 4) and s[i] & 0xC0 == 0x80:
        i -= 1
    if 0 <= i and s[i] >= 0xC0:
        width = 2 if s[i] < 0xE0 else 3 if s[i] < 0xF0 else 4
        if n - i < width:
            n = i
    return n


def _escape_run(s: bytes | bytearray, k: int) -> int:
    """How many backslashes end at ``s[k]`` (odd: ``s[k]`` starts an escape)."""
    j = k
    while j > 0 and s[j - 1] == _BACKSLASH and k - j < 64:
        j -= 1
    if k - j < 64:
        return k - j + 1
    head = bytes(s[: k + 1])  # a long run of backslashes: counted at C speed
    return len(head) - len(head.rstrip(b"\\"))


class _Walk:
    """A window over a binary stream and the piece being captured from it."""

    def __init__(self, fh: Readable, stats: Stats) -> None:
        self.fh = fh
        self.stats = stats
        self.buf = b""
        self.pos = 0
        self.eof = False
        #: The piece being captured (None: the walk is skipping); bytes before ``mark`` in ``buf`` are in it.
        self.out: bytearray | None = None
        self.mark = 0
        self.cost = 0
        self.dropped = False  # the piece passed its cost: the rest of it is skipped
        self._skipped_depth = 0
        # Where ``_skip_brackets`` last declined (the value may end before): walked token by token up to there.
        self._walk_buf = b""
        self._walk_until = 0

    # -- the window ------------------------------------------------------------------

    def more(self) -> bool:
        """Read the next window (the current one is consumed); False at the end of the stream."""
        if self.eof:
            return False
        self._copy(len(self.buf))
        data = self.fh.read(WINDOW)
        if not data:
            self.eof = True
            return False
        self.buf, self.pos, self.mark = data, 0, 0
        return True

    def _copy(self, upto: int) -> None:
        """Move ``buf[mark:upto]`` into the piece being captured."""
        if self.out is not None and upto > self.mark:
            self.out += self.buf[self.mark : upto]
            mark = self.mark
            self.cost += upto - mark
            if len(self.out) > COUNTED_FROM:
                # Each value costs an object, counted by the comma after it (or the bracket closing it).
                buf = self.buf
                self.cost += VALUE_COST * (buf.count(b",", mark, upto) + buf.count(b"]", mark, upto))
            if self.cost > MAX_PIECE_COST:
                self._drop()
        self.mark = upto

    def _drop(self) -> None:
        self.out = None
        self.dropped = True

    def peek(self) -> int | None:
        """The next byte that is not whitespace (not consumed), or None at the end of the stream."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return None

    def expect(self, allowed: bytes) -> int:
        """Consume the next non-whitespace byte, which must be one of ``allowed``."""
        c = self.peek()
        if c is None:
            raise Malformed("the document ends early (cut short, or still being written)")
        if c not in allowed:
            raise Malformed(f"unexpected {bytes([c])!r} at byte {self.fh_offset()}")
        self.pos += 1
        return c

    def fh_offset(self) -> str:
        tell = getattr(self.fh, "tell", None)
        try:
            return f"{tell() - len(self.buf) + self.pos:,}" if tell is not None else "?"
        except (OSError, ValueError):
            return "?"

    # -- values ----------------------------------------------------------------------

    def piece(self) -> bytes | None:
        """Consume the next value and return its text (long strings cut, deep values ``null``), or None when it
        was skipped as too costly."""
        self.peek()
        self.out, self.mark, self.cost, self.dropped = bytearray(), self.pos, 0, False
        try:
            self.value()
            self._copy(self.pos)
            out = self.out
        finally:
            self.out = None
        if self.dropped or out is None:
            self.stats.too_large += 1
            return None
        return bytes(out)

    def skip(self, depth: int = 0) -> None:
        """Consume the next value without keeping it: at C speed where it lies whole in the window (msgspec's
        skipping decoder), else item by item or member by member, down to ``SKIP_DESCENT`` levels, then walked."""
        self.out = None
        c = self.peek()
        end = _value_end(self)
        if end is not None:
            self.pos = end
        elif c == ord("[") and depth < SKIP_DESCENT:
            self.pos += 1
            if self.peek() == ord("]"):
                self.pos += 1
                return
            while True:
                self.skip(depth + 1)
                if self.expect(b",]") == ord("]"):
                    return
        elif c == ord("{") and depth < SKIP_DESCENT:
            self.pos += 1
            if self.peek() == ord("}"):
                self.pos += 1
                return
            while True:
                self.expect(b'"')
                self.string()
                self.expect(b":")
                self.skip(depth + 1)
                if self.expect(b",}") == ord("}"):
                    return
        else:
            self.value()

    def value(self) -> None:
        c = self.peek()
        if c is None:
            raise Malformed("the document ends early (cut short, or still being written)")
        if c == _QUOTE:
            self.pos += 1
            self.string()
        elif c in _OPEN:
            self.container()
        elif c in _CLOSE or c in b",:":
            raise Malformed(f"unexpected {bytes([c])!r} at byte {self.fh_offset()}")
        else:
            self.scalar()

    def scalar(self) -> None:
        length = 0
        while True:
            end = _SCALAR.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            length += end - self.pos
            self.pos = end
            if length > MAX_SCALAR_BYTES:
                raise Malformed(f"a value of more than {MAX_SCALAR_BYTES:,} bytes that is not a string")
            if end < len(self.buf) or not self.more():
                return

    def string(self) -> None:
        """Consume a string whose opening quote was just consumed; cut it past ``MAX_STRING_BYTES`` when captured."""
        start = self.pos  # of its text in the current window
        length = 0  # its text's bytes in earlier windows
        escaped = False
        cut = False
        while True:
            end, escaped = string_end(self.buf, self.pos, escaped)
            stop = end if end >= 0 else len(self.buf)
            if self.out is not None and not cut:
                if length + stop - start > MAX_STRING_BYTES:
                    self._cut(start, MAX_STRING_BYTES - length)
                    cut = True
                    if self.out is None:  # the cut itself passed the piece's cost
                        cut = False
            if cut:
                self.mark = stop  # the rest of its text is not kept (its closing quote is)
            if end >= 0:
                self.pos = end + 1
                return
            length += len(self.buf) - start
            self.pos = len(self.buf)
            if not self.more():
                raise Malformed("the document ends inside a string (cut short, or still being written)")
            start = 0

    def _cut(self, start: int, keep: int) -> None:
        """Keep ``keep`` more bytes of the string whose text continues at ``buf[start]``, cut cleanly."""
        assert self.out is not None
        self._copy(start + max(0, keep))
        if self.out is None:
            return
        # The string's text so far ends the piece: drop an escape or a character left half-copied.
        del self.out[clean_end(self.out) :]
        self.stats.cut_strings += 1

    def container(self) -> None:
        """Consume the array or object at ``pos`` (its opening bracket)."""
        depth = 0
        kept: bytearray | None = None  # the piece, set aside while a container too deep to keep is skipped
        search = _DELIM.search
        while True:
            buf = self.buf
            if self.out is None and depth and (self.buf is not self._walk_buf or self.pos >= self._walk_until):
                self._skip_brackets(depth - (MAX_DEPTH if kept is not None else 0))
                depth += self._skipped_depth
                buf = self.buf
            m = search(buf, self.pos)
            if m is None:
                self.pos = len(buf)
                if not self.more():
                    raise Malformed("the document ends early (cut short, or still being written)")
                continue
            i = m.start()
            c = buf[i]
            if c == _QUOTE:
                q = buf.find(b'"', i + 1)
                if q >= 0 and buf.find(b"\\", i + 1, q) < 0:
                    self.pos = q + 1  # the usual string: no escape before its end
                else:
                    self.pos = i + 1
                    self.string()
                continue
            self.pos = i + 1
            if c in _OPEN:
                depth += 1
                if depth == MAX_DEPTH + 1 and self.out is not None:
                    self._copy(i)
                    if self.out is not None:
                        self.out += b"null"
                        kept, self.out = self.out, None
                        self.stats.too_deep += 1
                continue
            if kept is not None and depth == MAX_DEPTH + 1:
                self.out, kept = kept, None
                self.mark = i + 1  # its text was skipped: ``null`` stands for it
            depth -= 1
            if depth == 0:
                return

    def _skip_brackets(self, above: int) -> None:
        """Skip, at C speed, the text before the next string that cannot close the value being skipped: its
        brackets are counted, not visited (a bracket bomb inflated from a zip is a billion of them). ``above``:
        how many closing brackets end it. Leaves the depth change in ``_skipped_depth``."""
        self._skipped_depth = 0
        while True:
            buf, pos = self.buf, self.pos
            q = buf.find(b'"', pos)
            end = q if q >= 0 else len(buf)
            closes = buf.count(b"]", pos, end) + buf.count(b"}", pos, end)
            if closes >= above:
                self._walk_buf, self._walk_until = buf, end  # it may end here: visited bracket by bracket
                return
            change = buf.count(b"[", pos, end) + buf.count(b"{", pos, end) - closes
            self._skipped_depth += change
            above += change
            self.pos = end
            if q >= 0 or not self.more():
                return


def _key(raw: bytes) -> object:
    try:
        return decode_line(raw)
    except BadLine:
        return None


def array_items(fh: Readable, key: str | None, stats: Stats) -> Iterator[bytes]:
    """The text of each item of the top-level array (``key`` None) or of the array at top-level ``key`` of the JSON
    document ``fh`` holds; nothing when there is no such array. Items skipped (see the module docstring) are
    counted in ``stats``. Raises :class:`Malformed` where the document stops being JSON."""
    walk = _Walk(fh, stats)
    first = walk.peek()
    if first is None:
        raise Malformed("empty document")
    if key is None:
        if first != ord("["):
            return
        walk.pos += 1
        yield from _items(walk)
        return
    if first != ord("{"):
        return
    walk.pos += 1
    for name in _members(walk):
        if name == key and walk.peek() == ord("["):
            walk.pos += 1
            yield from _items(walk)
        else:
            walk.skip()


def top_values(fh: Readable, keys: Collection[str], stats: Stats) -> Iterator[tuple[str, bytes]]:
    """(key, text of its value) for each of the top-level ``keys`` of the JSON object ``fh`` holds, in document
    order, until every one was found (the first of a key written twice). Raises :class:`Malformed`."""
    walk = _Walk(fh, stats)
    if walk.peek() != ord("{"):
        return
    walk.pos += 1
    wanted = set(keys)
    for name in _members(walk):
        if isinstance(name, str) and name in wanted:
            wanted.discard(name)
            text = walk.piece()
            if text is not None:
                yield name, text
            if not wanted:
                return
        else:
            walk.skip()


def _members(walk: _Walk) -> Iterator[object]:
    """The keys of the object whose ``{`` was just consumed; the caller consumes each one's value."""
    if walk.peek() == ord("}"):
        walk.pos += 1
        return
    while True:
        walk.expect(b'"')
        walk.pos -= 1
        name = walk.piece()
        walk.expect(b":")
        yield _key(name) if name is not None else None
        if walk.expect(b",}") == ord("}"):
            return


def _items(walk: _Walk) -> Iterator[bytes]:
    """The text of each item of the array whose ``[`` was just consumed (pieces too costly left out).

    An item that lies whole in the window is found by msgspec's skipping decoder (``msgspec.Raw``: it
    checks the value's structure and says where it ends, at C speed); one that the window cuts, or that
    msgspec cannot follow (nested too deeply), is walked.
    """
    if walk.peek() == ord("]"):
        walk.pos += 1
        return
    small = False  # the last item was small: try the next ones as a batch
    while True:
        if small and (batch := _batch_in_window(walk)):
            yield from batch
            continue
        text = _whole_in_window(walk)
        if text is None:
            text = walk.piece()
        if text is not None:
            small = len(text) < SMALL_ITEM
            yield text
        if walk.expect(b",]") == ord("]"):
            return


_skip = msgspec.json.Decoder(msgspec.Raw).decode
_split = msgspec.json.Decoder(list[msgspec.Raw]).decode
#: Items shorter than this are split from the window in batches (one call costs a few microseconds: the items'
#: own size beside it, for longer ones a batch's search for its end costs more than it saves).
SMALL_ITEM = 512
#: The end of an item followed by the next one's start: where a batch of items may end.
_BETWEEN = re.compile(rb"[}\]][ \t\r\n]*,[ \t\r\n]*[\[{]")


def _batch_in_window(walk: _Walk) -> list[bytes] | None:
    """The texts of the items from ``walk.pos`` up to the last one the window holds whole, split by one msgspec call
    (many small items cost one call, not one each), consumed up to the comma after the last; None (nothing
    consumed) when that does not work out: the items are then taken one at a time.

    The batch ends at the last ``}`` (or ``]``) that a comma and another item's start follow. One inside a string
    cannot pass for it: the batch would end inside that string, and msgspec refuses it.
    """
    c = walk.peek()
    if c is None or c not in _OPEN:
        return None
    buf, pos = walk.buf, walk.pos
    tail = max(pos, len(buf) - 4096)
    last = None
    for m in _BETWEEN.finditer(buf, tail):
        last = m
    if last is None or last.start() - pos < 1024:
        return None  # few items here: one at a time
    end = last.start() + 1
    try:
        items = _split(b"[" + buf[pos:end] + b"]")
    except (msgspec.DecodeError, RecursionError):
        return None
    walk.pos = buf.index(b",", end) + 1
    return [bytes(item) for item in items]


_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _whole_in_window(walk: _Walk) -> bytes | None:
    """The text of the value at ``walk.pos`` (after whitespace), consumed, when it ends inside the window with
    a separator after it; else None, nothing consumed."""
    end = _value_end(walk)
    if end is None:
        return None
    pos, walk.pos = walk.pos, end
    return walk.buf[pos:end]


def _value_end(walk: _Walk) -> int | None:
    """Where the array or object at ``walk.pos`` (after whitespace) ends (the separator after it, whitespace
    before that) when it lies whole in the window, found by msgspec at C speed; else None."""
    c = walk.peek()
    if c is None or c not in _OPEN:
        return None
    pos = walk.pos
    try:
        _skip(memoryview(walk.buf)[pos:])
    except msgspec.DecodeError as exc:
        m = _TRAILING.search(str(exc))
        if m is None:
            return None  # cut by the window, or not JSON: the walk finds out which
        return pos + int(m.group(1)) - 1  # msgspec names the byte after the separator, counting from 1
    except RecursionError:
        return None
    return None  # it runs to the window's end: a number could go on in the next one


def one_value(fh: Readable, stats: Stats) -> bytes | None:
    """The text of the one JSON value ``fh`` holds (a long JSONL line), strings cut and deep values ``null`` as
    for an item, or None when it is too costly to hold. Raises :class:`Malformed`, also for anything but
    whitespace after it."""
    walk = _Walk(fh, stats)
    text = walk.piece()
    if walk.peek() is not None:
        raise Malformed(f"unexpected {bytes([walk.buf[walk.pos]])!r} after the value")
    return text
