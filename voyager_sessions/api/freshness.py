"""Keeping the index fresh: the writer side of the API, for the front ends that write.

``voyager scan`` and the refresh before a search run :func:`scan`; ``voyager watch`` and ``voyager serve``
keep the index fresh with :func:`keep_fresh`, told which sources changed by a file-system
:class:`ChangeWatcher` and refreshed by :func:`refresh`. They are the scan's own functions
(:mod:`voyager_sessions.scan`), named here so that a front end reaches the writer through the API as it
reaches the reader, and nothing below it. (A test that replaces one for a front end replaces it here.)
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import scan
from voyager_sessions.scan.background import refresh_budget
from voyager_sessions.scan.changes import ChangeWatcher
from voyager_sessions.scan.refresh import refresh
from voyager_sessions.scan.watch import keep_fresh

__all__ = [
    "ChangeWatcher",
    "building_elsewhere",
    "keep_fresh",
    "progress_elsewhere",
    "refresh",
    "refresh_budget",
    "scan",
]


def progress_elsewhere(ddir: DataDir) -> Any | None:
    """How far the scan another process is running to build the index has got (``scan.progress.ScanProgress``, from
    what it committed), or None when none is building it: what ``voyager scan`` shows while it waits for that one."""
    from voyager_sessions.scan import progress
    from voyager_sessions.store.state import StateStore

    try:
        store = StateStore(ddir.state_db, readonly=True)
    except Exception:  # noqa: BLE001 - no state yet: nothing is being built
        return None
    try:
        record = progress.decode(store.get_meta(progress.META_KEY))
    finally:
        store.close()
    if record is None or not progress.building(record, ddir.lock):
        return None
    return progress.ScanProgress(
        phase=record.phase,
        sources_done=record.sources_done,
        sources_total=record.sources_total,
        bytes_done=record.bytes_done,
        bytes_total=record.bytes_total,
        sessions_done=record.sessions_words,
        sessions_total=record.sessions_total,
        events=0,
        seconds=max(0.0, record.updated - record.started),
        phase_seconds=max(0.0, record.updated - (record.phase_started or record.started)),
        tools_done=record.sessions_done,
        tools_total=record.sessions_total,
    )


def building_elsewhere(ddir: DataDir) -> bool:
    """True when another process is building the index (a first index it has committed part of)."""
    return progress_elsewhere(ddir) is not None
