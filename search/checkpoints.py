"""Making checkpoints searchable: one ``checkpoint`` event per session, replaced on every save.

The checkpoint store (``voyager_sessions.store.checkpoints``) owns the state; this module only
mirrors its rendered text into the index as the session's event ``seq = -1`` so that
``voyager search`` finds an objective or a blocker beside the session's own messages
and ``voyager show`` lists it first. Scans keep it when they replace a session's events.
"""

from __future__ import annotations

import time
from pathlib import Path

from voyager_sessions.core.lock import writer_lock
from voyager_sessions.core.model import Event
from voyager_sessions.core.paths import DataDir

CHECKPOINT_SEQ = -1


def index_checkpoint(
    data_dir: Path, session_id: str, text: str | None, *, ts: float | None = None, wait: float = 10.0
) -> None:
    """Replace ``session_id``'s checkpoint event with ``text`` (None or empty: remove it). Commits."""
    from voyager_sessions.search.index import SearchIndex

    with writer_lock(data_dir, wait=wait):
        ix = SearchIndex(DataDir(data_dir).index)
        try:
            ix.delete_checkpoint(session_id)
            if text:
                ix.add_events(
                    [
                        Event(
                            session=session_id,
                            seq=CHECKPOINT_SEQ,
                            kind="checkpoint",
                            origin="voyager",
                            text=text,
                            ts=time.time() if ts is None else ts,
                        )
                    ]
                )
            ix.commit()
        finally:
            ix.close()
