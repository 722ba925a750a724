"""ISO-8601 times for people and documents, standard library only.

Its own module so that what renders output (``render``, ``present``) needs no msgspec:
a client of ``voyager serve`` renders the server's answer with the standard library alone.
"""

from __future__ import annotations

from datetime import datetime, timezone


def iso(ts: float | None) -> str | None:
    """A timestamp as ISO-8601 UTC with a ``Z``, or None."""
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):  # a provider wrote a time no calendar can show
        return None
