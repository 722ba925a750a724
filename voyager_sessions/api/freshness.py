"""Keeping the index fresh: the writer side of the API, for the front ends that write.

``voyager scan`` and the refresh before a search run :func:`scan`; ``voyager watch`` and ``voyager serve``
keep the index fresh with :func:`keep_fresh`, told which sources changed by a file-system
:class:`ChangeWatcher` and refreshed by :func:`refresh`. They are the scan's own functions
(:mod:`voyager_sessions.scan`), named here so that a front end reaches the writer through the API as it
reaches the reader, and nothing below it. (A test that replaces one for a front end replaces it here.)
"""

from __future__ import annotations

from voyager_sessions.scan import scan
from voyager_sessions.scan.changes import ChangeWatcher, refresh
from voyager_sessions.scan.watch import keep_fresh

__all__ = ["ChangeWatcher", "keep_fresh", "refresh", "scan"]
