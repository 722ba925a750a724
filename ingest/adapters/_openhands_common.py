"""What OpenHands' two storage generations share: the provider's name, conversation ids, the resume command,
and the base of their event mappers.

The CLI's conversations (``openhands.py``) and the V0 sessions before them
(``_openhands_v0``) are both a folder per session with an ``events/`` folder of
one-event files; they differ in everything else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from voyager_sessions.ingest.adapters._common import EventCounter, opt, resume_in, UnknownRecords
from voyager_sessions.core.model import Event

PROVIDER = "openhands"
LABEL = "OpenHands"
EVENTS = "events"

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def is_hex32(name: str) -> bool:
    """True for a folder named with a UUID's 32 hex digits (how OpenHands names a conversation's folder)."""
    return bool(_HEX32.fullmatch(name))


def dashed(name: str) -> str:
    """The conversation id OpenHands shows and resumes (dashed UUID) for a folder named with its 32 hex digits."""
    if is_hex32(name):
        h = name.lower()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return name


def resume_command(cwd: str | None, conversation: str) -> str | None:
    """``openhands --resume <uuid>``, in the conversation's working directory when it is known."""
    return resume_in(cwd, "openhands", opt("--resume", conversation))


class Mapper:
    """What both generations' mappers (one event file's object to events) share: the session's counter, the
    kinds they do not know, and emitting one event."""

    def __init__(self, counter: EventCounter, unknown: UnknownRecords) -> None:
        self.counter = counter
        self.unknown = unknown

    def _one(self, kind: Any, origin: Any, text: Any, ts: float | None, **extra: Any) -> Iterator[Event]:
        """The event of ``text`` (none unless it is a string with something in it)."""
        ev = self.counter.make(kind, origin, text if isinstance(text, str) else None, ts=ts, **extra)
        if ev is not None:
            yield ev
