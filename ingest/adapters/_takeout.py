"""Parsing a Google Takeout "My Activity" page of Gemini Apps into sessions, for the ``gemini-apps`` adapter.

Kept apart from the adapter (:mod:`.gemini_apps`, whose docstring describes the page) so that a refresh,
which imports every adapter that finds its stores through hints, does not pay for the HTML parser: this
module is imported only when a page is read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from typing import Any

from voyager_sessions.ingest.adapters import _exports
from voyager_sessions.ingest.adapters._common import EventCounter
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.sqlite import SessionSignatures, digest
from voyager_sessions.core.model import Session, session_id

PROVIDER = "gemini-apps"
_BLOCKS = frozenset(
    {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "li", "tr", "td", "th", "table", "ul", "ol"}
)
_HIDDEN = frozenset({"script", "style", "template", "noscript"})
_VOID = frozenset({"br", "img", "hr", "meta", "link", "input", "wbr", "col", "area", "base", "source"})
_STAMP = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+(\d{1,2}),\s+(\d{4}),\s+(\d{1,2}):(\d\d):(\d\d)\s*(AM|PM)\s+(\S+)",
    re.I,
)
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_ZONES = {"UTC": 0, "GMT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7}
_GMT = re.compile(r"\AGMT([+-])(\d{1,2})(?::(\d\d))?\Z")
#: What one record may hold at most (a page of hostile nesting or one enormous cell is cut there).
MAX_CELL_CHARS = 8 << 20


def stamp(text: str) -> tuple[str, float | None] | None:
    """The timestamp a record's header shows (as written) and its epoch seconds (None for a zone not known)."""
    m = _STAMP.search(" ".join(text.replace("\u202f", " ").replace("\u00a0", " ").split()))
    if m is None:
        return None
    month, day, year, hour, minute, second, half, zone = m.groups()
    zone = zone.upper()
    offset: float | None = _ZONES.get(zone)
    if offset is None and (g := _GMT.match(zone)):
        offset = (1 if g[1] == "+" else -1) * (int(g[2]) + int(g[3] or 0) / 60)
    h = int(hour) % 12 + (12 if half.upper() == "PM" else 0)
    if offset is None:
        return m.group(0), None
    try:
        dt = datetime(
            int(year),
            _MONTHS[month.lower()],
            int(day),
            h,
            int(minute),
            int(second),
            tzinfo=timezone(timedelta(hours=offset)),
        )
    except ValueError:
        return m.group(0), None
    return m.group(0), dt.timestamp()


def _clean(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line).strip()


class _Cell:
    """One ``outer-cell`` as the parser walks it: its header's text and product, its content's blocks."""

    def __init__(self) -> None:
        self.header: list[str] = []
        self.heading: str | None = None
        self.label: str | None = None
        self.blocks: list[list[str]] = []
        self.size = 0


class ActivityParser(HTMLParser):
    """A My Activity page, fed in chunks; :attr:`done` collects each complete ``outer-cell``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None]] = []  # (tag, region: "cell", "header", "content" or None)
        self.cell: _Cell | None = None
        self.region: str | None = None
        self.region_depth = 0
        self.content_seen = False
        self.hidden = 0
        self.heading_depth: int | None = None
        self.heading: list[str] = []
        self.label_depth: int | None = None
        self.label: list[str] = []
        self.done: list[_Cell] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").lower().split())
        if tag in _HIDDEN:
            self.hidden += 1
        marked = None
        if self.cell is None and "outer-cell" in classes:
            self.cell, marked = _Cell(), "cell"
        elif self.cell is not None and self.region is None and "header-cell" in classes:
            marked = self.region = "header"
        elif self.cell is not None and self.region is None and "content-cell" in classes and not self.content_seen:
            marked = self.region = "content"
            self.content_seen = True
        if tag in _VOID:
            self._text("\n")
            return
        self.stack.append((tag, marked))
        depth = len(self.stack)
        if marked in ("header", "content"):
            self.region_depth = depth
        elif self.region == "content" and depth == self.region_depth + 1 and self.cell is not None:
            self.cell.blocks.append([])  # a block directly in the content cell: prompt first, then the answer
        if self.region == "header" and self.cell is not None:
            if tag[:1] == "h" and tag[1:].isdigit() and self.cell.heading is None:
                self.heading_depth, self.heading = depth, []
            elif tag == "p" and self.cell.label is None and self.cell.heading is not None:
                self.label_depth, self.label = depth, []
        if tag in _BLOCKS:
            self._text("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in _VOID:
            return
        if tag in _BLOCKS:
            self._text("\n")
        # Close up to the matching open tag (HTML leaves some unclosed); a stray end tag changes nothing.
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                break
        else:
            return
        while len(self.stack) > i:
            depth = len(self.stack)
            _, marked = self.stack.pop()
            cell = self.cell
            if cell is not None and depth == self.heading_depth:
                cell.heading, self.heading_depth = _clean("".join(self.heading)), None
            if cell is not None and depth == self.label_depth:
                cell.label, self.label_depth = _clean("".join(self.label)), None
            if marked in ("header", "content"):
                self.region = None
            elif marked == "cell" and cell is not None:
                self.done.append(cell)
                self.cell, self.region, self.content_seen = None, None, False

    def handle_data(self, data: str) -> None:
        self._text(data)

    def _text(self, text: str) -> None:
        cell = self.cell
        if cell is None or self.hidden or self.region is None or cell.size > MAX_CELL_CHARS:
            return
        cell.size += len(text)
        if self.region == "header":
            cell.header.append(text)
            if self.heading_depth is not None:
                self.heading.append(text)
            if self.label_depth is not None:
                self.label.append(text)
        elif cell.blocks:
            cell.blocks[-1].append(text)
        elif text.strip():
            cell.blocks.append([text])


def exchanges(source: str, opener: Callable[[], Any]) -> Iterator[tuple[str, str, str, float | None] | Notice]:
    """(native id, prompt, answer, time) of every ``Prompted`` Gemini Apps record of one page; a Notice for the rest."""
    parser = ActivityParser()
    skipped: dict[str, int] = {}
    seen: dict[str, int] = {}
    try:
        with opener() as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                parser.feed(chunk.decode("utf-8", "replace"))
                yield from _complete(parser, skipped, seen)
        parser.close()
    except OSError as exc:
        yield Notice(source=source, reason=f"cannot read: {exc.strerror or exc}", fatal=True, transient=True)
        return
    yield from _complete(parser, skipped, seen)
    if skipped:
        kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(skipped.items(), key=lambda kv: -kv[1])[:5])
        yield Notice(
            source=source, reason=f"{sum(skipped.values())} activity record(s) that are no prompt skipped ({kinds})"
        )


def _complete(
    parser: ActivityParser, skipped: dict[str, int], seen: dict[str, int]
) -> Iterator[tuple[str, str, str, float | None]]:
    done, parser.done = parser.done, []
    for cell in done:
        if (cell.heading or "").lower() != "gemini apps":
            continue  # another product's activity in the same page
        label = (cell.label or "").strip()
        when = stamp("".join(cell.header))
        blocks = [
            b for b in (_clean("".join(parts)) for parts in cell.blocks) if b and (when is None or b != _clean(when[0]))
        ]
        if label.lower() != "prompted" or not blocks:
            key = label[:40] or "record without a label"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        prompt, answer = blocks[0], "\n\n".join(blocks[1:])
        # The page gives an exchange no id: its time and prompt name it (a repeat at the same second counted on).
        base = f"{when[0] if when else ''}\0{prompt}"
        seen[base] = seen.get(base, 0) + 1
        native = hashlib.blake2b(f"{base}\0{seen[base]}".encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
        yield native, prompt, answer, when[1] if when else None


def read_takeout(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    signatures = SessionSignatures(cursor)
    try:
        pieces = _exports.pieces(source.path)
    except OSError as exc:
        yield Notice(source=source.path, reason=f"{exc}; skipped", fatal=True)
        return
    complete = True
    for where, opener in pieces:
        for found in exchanges(where, opener):
            if isinstance(found, Notice):
                complete = complete and not found.fatal
                yield found if len(pieces) == 1 or not found.fatal else Notice(source=where, reason=found.reason)
                continue
            native, prompt, answer, ts = found
            sid = session_id(PROVIDER, native)
            sig = digest(prompt, answer, ts)
            if signatures.same(native, sig):
                yield Unchanged(session=sid)
                continue
            signatures.record(native, sig)
            counter = EventCounter(sid, 0)
            yield Session(
                id=sid, provider=PROVIDER, native_id=native, started=ts, updated=ts, resume=None, source=source.path
            )
            for kind, origin, text in (("user", "human", prompt), ("assistant", "agent", answer)):
                if (ev := counter.make(kind, origin, text, ts=ts)) is not None:  # type: ignore[arg-type]
                    yield ev
    if complete:
        yield signatures.cursor()
