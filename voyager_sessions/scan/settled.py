"""Folders a refresh need not walk: the session file written before anything in them changes says they are quiet.

A Claude Code session keeps its subagents' transcripts in ``<id>/subagents/``, beside its
own ``<id>.jsonl``: at 10,000 sessions a refresh statted 25,000 files and folders where
15,000 were subagent transcripts and their folders. A subagent runs only when its session
says so in its own transcript first (the call that starts or resumes it), so that transcript
is the folder's *canary* (``walk_files(canary=…)``): when it has not changed since the last
scan read it, and had then been idle for ``SETTLE_S`` while nothing under the folder was
newer than it, nothing there can have changed, and the folder is not walked — its sessions
are the ones the last scan read, as they were (:class:`Settled`, which answers
``FolderMemory.quiet`` from the scan's state rows and hands the scan their paths). The folder
must also have been read whole, and the state rows say so unless a scan left its plan
unfinished: one stopped by its budget, or killed, may have committed a transcript and not yet
what is under it. Such a scan leaves its record of how far it got (``scan.progress``,
committed with every commit but a finished scan's last), and while one is there the scan
quiets no folder (``run``), so the next one walks them all and reads what was left; the scan
that finishes its plan removes the record. (The check was once made folder by folder against
the remembered listings: at 10,000 sessions two listings decoded a session on every refresh,
and every listing read from ``state.db`` for it, ~20 % of a no-op refresh's CPU.)

One case is left: a subagent started in the background that keeps running, silent for
``SETTLE_S``, while its session is idle too, and writes again: it shows when its session
writes (a background subagent's end is reported in its session's transcript), or at the
next full walk. Every ``FULL_WALK_S`` a refresh walks every folder (the time of the last one
is kept in ``state.db``), which also finds files deleted or copied there by hand.
"""

from __future__ import annotations

from bisect import bisect_left
import os
import time
from typing import Any

#: A canary idle this long (seconds) at the last scan, with nothing under its folder newer, makes the folder quiet.
SETTLE_S = 600
#: A refresh walks every folder again when the last full walk is this old (seconds).
FULL_WALK_S = 900
#: The ``meta`` key holding when the last full walk was (ns since the epoch).
META_KEY = "full_walk_ns"


class Settled:
    """``FolderMemory.quiet`` from the state rows ``known`` (a ``store.state.KnownSources``): see the module."""

    def __init__(self, known: Any, now_ns: int | None = None) -> None:
        self.known = known
        self.fresh: dict[str, tuple[Any, ...]] = known.fresh
        self.boundary = (time.time_ns() if now_ns is None else now_ns) - SETTLE_S * 1_000_000_000
        self._paths: list[str] | None = None
        # The rows to read again (loaded with the agent's rows, before its walk): a folder holding one is walked.
        self._retry: list[str] | None = None
        #: Folders not walked, and the sources in them (seen, unchanged: the scan takes them).
        self.skipped = 0
        self.seen: list[str] = []

    def __call__(self, folder: str, canary: str, st: os.stat_result) -> bool:
        fresh = self.fresh
        row = fresh.get(canary)
        if row is None or row[1] != st.st_size or row[2] != st.st_mtime_ns or row[3] != st.st_ino:
            return False  # the session changed (or is new): what is under it may have too
        newest = st.st_mtime_ns
        if newest > self.boundary:
            return False  # written lately: its subagents may still be at work
        # The rows under the folder: a slice of every row's path, sorted once (each agent's rows come in path
        # order: runs merged, not sorted); none of them to be read again. (Inline: it runs once a session.)
        paths = self._paths
        if paths is None:
            paths = self._paths = sorted(fresh)
            self._retry = sorted(self.known.retry_paths())
        prefix = folder + _SEP
        i = bisect_left(paths, prefix)
        under = paths[i : bisect_left(paths, folder + _AFTER_SEP, i)]
        if self._retry and _holds(self._retry, prefix):
            return False
        for p in under:
            if fresh[p][2] > newest:
                return False  # a subagent that wrote after its session last did may still be running
        self.skipped += 1
        self.seen.extend(under)
        return True


def _holds(paths: list[str], prefix: str) -> bool:
    """True when one of ``paths`` (sorted) starts with ``prefix``."""
    k = bisect_left(paths, prefix)
    return k < len(paths) and paths[k].startswith(prefix)


_SEP = os.sep
#: The character after the separator: every path under ``folder`` sorts before ``folder + _AFTER_SEP``.
_AFTER_SEP = chr(ord(os.sep) + 1)


def full_walk_due(last_ns: str | None, now_ns: int | None = None) -> bool:
    """True when the last full walk (the ``meta`` value, ns) is ``FULL_WALK_S`` old or unknown."""
    now = time.time_ns() if now_ns is None else now_ns
    try:
        return now - int(last_ns or 0) >= FULL_WALK_S * 1_000_000_000
    except ValueError:
        return True
