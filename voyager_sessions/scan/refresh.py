"""One refresh of the index told by a file-system watcher: the hook ``voyager watch`` and ``voyager serve`` call.

:func:`refresh` takes the watcher's change set (:mod:`.changes`), asks the no-change test
(:mod:`.quiet`) whether a scan would do anything, and runs the scan (:mod:`.run`) only
when it would. It is a module of its own because it is the one place that needs all
three: the scan takes the watcher's change set, and the no-change test reads it, so the
watcher's module cannot run either without the scan package importing itself in a circle
(``tests/test_import_cycles.py`` keeps it that way).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from voyager_sessions.scan.changes import ChangeWatcher
from voyager_sessions.scan.quiet import QuietCheck
from voyager_sessions.scan.run import NoticeFn, ProgressFn, scan
from voyager_sessions.scan.summary import ScanSummary


def quiet_check(watcher: ChangeWatcher, data_dir: Path) -> QuietCheck:
    """The no-change test of ``data_dir``'s refreshes with ``watcher``, kept with the watcher between refreshes
    (it caches the state's view) and closed when the watcher stops."""
    key = os.fspath(data_dir)
    check = watcher.kept.get(key)
    if not isinstance(check, QuietCheck):
        check = QuietCheck(Path(data_dir))
        watcher.kept[key] = check
    return check


def refresh(
    data_dir: Path,
    env: Mapping[str, str],
    watcher: ChangeWatcher | None,
    *,
    periodic: bool = True,
    providers: list[str] | None = None,
    keep_missing: bool = False,
    wait: float = 0.0,
    progress: ProgressFn | None = None,
    on_notice: NoticeFn | None = None,
    rebuild: bool = False,
    workers: int | None = None,
    budget: float | None = None,
) -> ScanSummary:
    """One refresh of ``data_dir``: only what ``watcher`` saw change, or everything when it cannot say.

    The hook for ``voyager watch`` and a server's refreshes: pass the same started watcher
    to every call (None, or one that cannot watch, makes it a plain full scan; ``periodic``
    as :meth:`ChangeWatcher.take` says). A fenced change set that is empty, where
    :class:`~voyager_sessions.scan.quiet.QuietCheck` finds nothing else to do, runs no scan
    at all (an empty summary). A scan that fails gives its change set back, so nothing is lost.
    """
    from voyager_sessions.ingest import adapters as registry

    t0 = time.perf_counter()
    changes = watcher.take(periodic=periodic) if watcher is not None else None
    if (
        changes is not None
        and watcher is not None
        and not rebuild
        and not keep_missing
        and quiet_check(watcher, data_dir).nothing_to_do(changes, providers or registry.PROVIDERS, env)
    ):
        watcher.counts["quiet"] += 1
        return ScanSummary(seconds=round(time.perf_counter() - t0, 6))
    try:
        summary = scan(
            data_dir,
            env,
            changes=changes,
            providers=providers,
            keep_missing=keep_missing,
            wait=wait,
            progress=progress,
            on_notice=on_notice,
            rebuild=rebuild,
            workers=workers,
            budget=budget,
        )
    except BaseException:
        if watcher is not None:
            watcher.give_back(changes)
        raise
    if watcher is not None:
        quiet_check(watcher, data_dir).saw_index()  # its own commits are no news to the next refresh
    return summary
