"""Events made ready for the index, away from it: capped, their analyzer input prepared, their text encoded.

Everything the index does to an event before Tantivy sees it that needs no index
(the per-event cap, ``analyzer.prepare_many``, the UTF-8 bytes that are stored) lives
here, apart from ``index`` and without importing ``tantivy``, so the scan's worker
processes can do it while the one writer only builds documents. What they hand over is
a :class:`PreparedEvent`: a small typed record, cheap to send between processes as
msgpack (``array_like``: no field names on the wire).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from voyager_sessions.core.model import Event
from voyager_sessions.search.analyzer import identifier_parts, prepare_many

#: Default cap on the characters of one event that are indexed and stored.
DEFAULT_MAX_EVENT_CHARS = 256 * 1024
#: Events are prepared for the index in chunks of about this many characters (see
#: ``analyzer.prepare_many``): enough to share its per-call work, little memory beside the
#: one event a cap allows.
PREPARE_BATCH_CHARS = 128 * 1024
TRUNCATION_MARKER = "\n[… truncated by voyager: {n} more characters; `voyager show` reads the source]"


def max_event_chars() -> int:
    """The per-event cap, from ``VOYAGER_MAX_EVENT_CHARS`` when set (documented in the README)."""
    try:
        return max(1024, int(os.environ.get("VOYAGER_MAX_EVENT_CHARS", DEFAULT_MAX_EVENT_CHARS)))
    except ValueError:
        return DEFAULT_MAX_EVENT_CHARS


def capped_text(text: str, cap: int) -> str:
    """``text`` cut to ``cap`` characters, with a marker saying how many more there were."""
    if len(text) > cap:
        return text[:cap] + TRUNCATION_MARKER.format(n=len(text) - cap)
    return text


class PreparedEvent(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """An event as the index takes it: the Event's fields, its stored bytes and its analyzer input.

    ``stored`` is the capped text as UTF-8 (lone surrogates kept, ``surrogatepass``), what
    ``show`` and snippets read back; ``body`` is ``prepare``'s output for the tool name and
    that text, what the analyzer tokenizes, as UTF-8 (it is made as bytes, and crosses a
    pipe as bytes: only the writer decodes it, to hand Tantivy a string). ``prompt`` is the text of a person's
    prompt (``user`` typed by a ``human``), capped as ``stored`` is, and None otherwise: a session without a title
    is named after its first prompt, and nothing else about an event's text is needed
    once it is prepared. ``parts``: the words of the body's identifiers that are made of several
    (``analyzer.identifier_parts``), space-separated, b"" when it has none.
    """

    session: str
    seq: int
    kind: str
    origin: str
    ts: float | None
    tool: str | None
    call_id: str | None
    exit_code: int | None
    is_error: bool
    stored: bytes
    body: bytes
    prompt: str | None = None
    parts: bytes = b""


def prepare_events(events: Sequence[Event], cap: int | None = None) -> list[PreparedEvent]:
    """``events`` made ready for the index, in one ``prepare_many`` pass (keep a call to about
    ``PREPARE_BATCH_CHARS`` characters of text: the joined copies are its memory)."""
    cap = max_event_chars() if cap is None else cap
    texts = [ev.text if len(ev.text) <= cap else capped_text(ev.text, cap) for ev in events]
    bodies = prepare_many([f"{ev.tool}\n{text}" if ev.tool else text for ev, text in zip(events, texts)], utf8=True)
    return [
        PreparedEvent(
            ev.session,
            ev.seq,
            ev.kind,
            ev.origin,
            ev.ts,
            ev.tool,
            ev.call_id,
            ev.exit_code,
            ev.is_error,
            text.encode("utf-8", "surrogatepass"),
            body,
            text if ev.kind == "user" and ev.origin == "human" else None,  # capped: only a title is made of it
            identifier_parts(body),
        )
        for ev, text, body in zip(events, texts, bodies)
    ]
