"""The per-source caps: how many events, how much of their text and how many sessions one read of one source may index.

Every other bound in ``ingest`` is on bytes (a line, a JSON document, what a zstd file may
inflate to). Bytes do not bound events: a 97 KiB zstd file inflating to its 1 GiB cap of
short valid lines is millions of events, minutes of indexing and, where a format makes an
adapter hold a session, gigabytes. :func:`bounded` wraps an adapter's stream (the scan
reads every source through it) and stops the read once the source has yielded more than
``VOYAGER_MAX_SOURCE_EVENTS`` events, ``VOYAGER_MAX_SOURCE_CHARS`` characters of event
text or ``VOYAGER_MAX_SOURCE_SESSIONS`` sessions (what a read keeps until the source's end is a
record per session: an export of 167,000 one-line conversations, a few hundred KiB zipped, took
330 MB), with one notice naming the source and the cap. What came before is indexed; the rest
is not, and the source is read again only when it changes. The defaults are far above any
session a person has produced (a heavy agent's longest sessions hold tens of thousands of
events), so only a crafted or runaway file meets them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from voyager_sessions.ingest.adapters.base import Item, Notice, Source
from voyager_sessions.core.model import Event, Session

#: Events one source may yield in one read (``VOYAGER_MAX_SOURCE_EVENTS``).
MAX_SOURCE_EVENTS = 1_000_000
#: Characters of event text one source may yield in one read (``VOYAGER_MAX_SOURCE_CHARS``).
MAX_SOURCE_CHARS = 1 << 30
#: Sessions one source may yield in one read (``VOYAGER_MAX_SOURCE_SESSIONS``): a person's export of years of chats
#: holds thousands.
MAX_SOURCE_SESSIONS = 100_000
#: The least any cap can be set to: a cap set absurdly low would cut every session short.
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


def max_source_sessions() -> int:
    return _cap("VOYAGER_MAX_SOURCE_SESSIONS", MAX_SOURCE_SESSIONS)


def bounded(source: Source, items: Iterable[Item]) -> Iterator[Item]:
    """``items`` (one read of ``source``) until it passes a per-source cap, then one notice, and the read is closed."""
    max_events, max_chars, max_sessions = max_source_events(), max_source_chars(), max_source_sessions()
    events = chars = 0
    sessions: set[str] = set()
    stream = iter(items)
    try:
        for item in stream:
            if type(item) is Session and item.id not in sessions:
                sessions.add(item.id)
                if len(sessions) > max_sessions:
                    yield Notice(
                        source=source.path,
                        where=f"session {len(sessions):,}",
                        reason=f"more than {max_sessions:,} sessions (VOYAGER_MAX_SOURCE_SESSIONS) in one source; "
                        "the rest is not indexed",
                    )
                    return
            elif type(item) is Event:
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
