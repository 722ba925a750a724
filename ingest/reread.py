"""Reading events back from their source, for text the index keeps only up to its cap.

The index stores each event's text up to a cap (``VOYAGER_MAX_EVENT_CHARS``); ``voyager
show`` asks here for the whole text of the events it displays. The source is streamed
again through its adapter, read-only, stopping as soon as the wanted events are seen.
"""

from __future__ import annotations

import os

from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest.adapters.base import Source, fingerprint
from voyager_sessions.core.model import Event


def full_texts(provider: str, source_path: str, session_id: str, seqs: set[int]) -> dict[int, str]:
    """seq -> full text for ``seqs`` of ``session_id``, read from ``source_path``; missing ones are left out."""
    if not seqs or not os.path.exists(source_path):
        return {}
    try:
        adapter = registry.get(provider)
        src = Source(
            provider=provider,
            path=source_path,
            fingerprint=fingerprint(source_path),
            append_only=os.path.isfile(source_path) and source_path.endswith(".jsonl"),
        )
    except (KeyError, OSError, ImportError):
        return {}
    out: dict[int, str] = {}
    try:
        for item in adapter.read(src):
            if isinstance(item, Event) and item.session == session_id and item.seq in seqs:
                out[item.seq] = item.text
                if len(out) == len(seqs):
                    break
    except Exception:  # the source changed shape since: show what the index has
        pass
    return out
