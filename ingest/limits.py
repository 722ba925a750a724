"""The per-source caps: how many events, and how much of their text, one read of one source may index.

Every other bound in ``ingest`` is on bytes (a line, a JSON document, what a zstd file may
inflate to). Bytes do not bound events: a 97 KiB zstd file inflating to its 1 GiB cap of
short valid lines is millions of events, minutes of indexing and, where a format makes an
adapter hold a session, gigabytes. :func:`bounded` wraps an adapter's stream (the scan
reads every source through it) and stops the read once the source has yielded more than
``VOYAGER_MAX_SOURCE_EVENTS`` events or ``VOYAGER_MAX_SOURCE_CHARS`` characters of event
text, with one notice naming the source and the cap. What came before is indexed; the rest
is not, and the source is read again only when it changes. The defaults are far above any
session a person has produced (a heavy agent's longest sessions hold tens of thousands of
events), so only a crafted or runaway file meets them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from voyager_sessions.ingest.adapters.base import Item, Notice, Source
from voyager_sessions.core.model import Event

#: Events one source may yield in one read (``VOYAGER_MAX_SOURCE_EVENTS``).
MAX_SOURCE_EVENTS = 1_000_000
#: Characters of event text one source may yield in one read (``VOYAGER_MAX_SOURCE_CHARS``).
MAX_SOURCE_CHARS = 1 << 30
#: The least either cap can be set to: a cap set absurdly low would cut every session short.
_FLOOR = 1000


def _cap(var: str, default: int) -> int:
    try:
        return max(_FLOOR, int(os.environ.get(var, default)))
    except ValueError:
        return default


def max_source_events() -> int:
    return _cap("VOYAGER_MAX_SOURCE_EVENTS", MAX_SOURCE_EVENTS)


def max_source_chars() -> int:
    return _cap("VOYAGER_MAX_SOURCE_CHARS", MAX_SOURCE_CHARS)


def bounded(source: Source, items: Iterable[Item]) -> Iterator[Item]:
    """``items`` (one read of ``source``) until it passes a per-source cap, then one notice, and the read is closed."""
    max_events, max_chars = max_source_events(), max_source_chars()
    events = chars = 0
    stream = iter(items)
    try:
        for item in stream:
            if type(item) is Event:
                events += 1
                chars += len(item.text)
                if events > max_events or chars > max_chars:
                    cap = (
                        f"{max_events:,} events (VOYAGER_MAX_SOURCE_EVENTS)"
                        if events > max_events
                        else f"{max_chars:,} characters of text (VOYAGER_MAX_SOURCE_CHARS)"
                    )
                    yield Notice(
                        source=source.path,
                        where=f"event {events:,}",
                        reason=f"more than {cap} in one source; the rest is not indexed",
                    )
                    return
            yield item
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # the adapter's files and connections close now, not when collected
