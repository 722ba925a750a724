"""What OpenHands' two storage generations share: the provider's name, conversation ids, the resume command.

The CLI's conversations (``openhands.py``) and the V0 sessions before them
(``_openhands_v0``) are both a folder per session with an ``events/`` folder of
one-event files; they differ in everything else.
"""

from __future__ import annotations

import re

from voyager_sessions.ingest.adapters._common import resume_in

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


def resume_command(cwd: str | None, conversation: str) -> str:
    """``openhands --resume <uuid>``, in the conversation's working directory when it is known."""
    return resume_in(cwd, "openhands", "--resume", conversation)
