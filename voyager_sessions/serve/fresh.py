"""What the server reads from and how it stays fresh: a pool of open readers and one scan at a time.

:class:`Scans` runs the server's scans one at a time and lets callers share them: a
search that asks for a refresh waits for a scan that *started after it arrived* (so it
sees whatever was appended before it was sent, as an in-process refresh would) and every
request waiting meanwhile is answered by that same scan. The keep-fresh loop (``watch``'s
:func:`~voyager_sessions.scan.watch.keep_fresh`) goes through it too. Every scan is *watched*: a
file-system watcher (:class:`~voyager_sessions.scan.changes.ChangeWatcher`) says which sources changed,
behind a fence that makes sure every write made before the scan started is in its change set, so a
refresh costs what changed, and one where nothing changed runs no scan at all
(:mod:`voyager_sessions.scan.quiet`). Without a working watcher every refresh is the full stat pass.
The scans take the data dir's writer lock as every scan does, so another process scanning meanwhile is no
trouble: a request's refresh that finds it busy answers from what is committed, exactly
as ``voyager search`` does.

The readers come from a :class:`~voyager_sessions.api.readers.ReaderPool` (one reader lent to each request,
kept current as any process commits).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voyager_sessions.api.readers import ReaderPool
from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.core.paths import DataDir


@dataclass
class ScanOutcome:
    """One scan's result as its waiting requests need it."""

    number: int
    started: float
    seconds: float = 0.0
    summary: Any = None
    notices: list[Any] = field(default_factory=list)
    error: BaseException | None = None


class Scans:
    """The server's scans of one data dir: one at a time, shared by whoever is waiting for a fresh one."""

    def __init__(
        self, ddir: DataDir, *, on_done: Callable[[ScanOutcome], None] = lambda outcome: None, watcher: Any = None
    ) -> None:
        from voyager_sessions.api.freshness import scan

        self._scan = scan
        self._ddir = ddir
        self._on_done = on_done
        self._watcher = watcher
        self._cond = threading.Condition()
        self._started = 0
        self._running = False
        self._running_since = 0.0
        self._unfinished = False  # the last scan left part of its plan (a budget): the next one is a full one
        self._last: ScanOutcome | None = None
        self.count = 0

    @property
    def last(self) -> ScanOutcome | None:
        return self._last

    @property
    def watched(self) -> int:
        """Refreshes the watcher's change set answered (a scan of what changed, or none at all)."""
        counts = getattr(self._watcher, "counts", None) or {}
        return counts.get("watched", 0)

    def fresh(
        self, *, watched: bool = False, patience: float | None = None, budget: float | None = None
    ) -> ScanOutcome | None:
        """The outcome of a refresh that started after this call: run one, or wait for the one about to run.

        Any refresh serves any caller: each one's change set is fenced (see ``ChangeWatcher.take``),
        so it holds every write made before it started. ``watched``: the keep-fresh loop's refresh, the
        one that may be the watcher's periodic full stat pass (a request's never is).

        A request's (``patience``, ``budget``): a scan already running for ``patience`` seconds is a long
        one (a first index), and the request answers from what it has committed (None) rather than wait
        for it and one more; a scan the request starts stops reading after ``budget`` seconds if much is
        left, and the rest is read at once by a full scan in a thread of its own.
        """
        with self._cond:
            wanted = self._started + 1
            while True:
                last = self._last
                if last is not None and last.number >= wanted:
                    return last
                if not self._running:
                    self._running = True
                    self._running_since = time.monotonic()
                    self._started += 1
                    number = self._started
                    full, self._unfinished = self._unfinished, False
                    break
                if patience is None:
                    self._cond.wait()
                    continue
                waited = time.monotonic() - self._running_since
                if waited >= patience:
                    return None
                self._cond.wait(patience - waited)
        outcome = ScanOutcome(number=number, started=time.time())
        t0 = time.perf_counter()
        args: dict[str, Any] = {"budget": budget} if budget is not None else {}
        try:
            if self._watcher is not None and not full:
                from voyager_sessions.api.freshness import refresh

                outcome.summary = refresh(
                    self._ddir.root,
                    os.environ,
                    self._watcher,
                    periodic=watched,
                    on_notice=outcome.notices.append,
                    **args,
                )
            else:
                if self._watcher is not None:
                    self._watcher.take(periodic=True)  # a full stat pass sees whatever it had seen change
                outcome.summary = self._scan(self._ddir.root, on_notice=outcome.notices.append, **args)
        except Exception as exc:  # noqa: BLE001 - handed to every waiting request, which reports it
            outcome.error = exc
        outcome.seconds = time.perf_counter() - t0
        unfinished = outcome.error is None and getattr(outcome.summary, "remaining", 0) > 0
        with self._cond:
            self._last = outcome
            self._running = False
            self._unfinished = self._unfinished or unfinished
            self.count += 1
            self._cond.notify_all()
        self._on_done(outcome)
        if unfinished:
            # The rest of a plan the budget left: read now, in full (the watcher saw none of it change).
            threading.Thread(target=self.fresh, kwargs={"watched": True}, name="voyager-scan-rest", daemon=True).start()
        return outcome


#: A request does not wait for a scan that has been running this long (seconds): a first index, say.
LONG_SCAN_S = 1.0


class ServerBackend:
    """The :class:`~voyager_sessions.api.Backend` of ``voyager serve``: pooled readers, shared scans."""

    def __init__(self, pool: ReaderPool, scans: Scans) -> None:
        self.pool = pool
        self.scans = scans

    def reader(self, ddir: Path) -> Any:
        return self.pool.reader()

    def refresh(self, ddir: Path, notice: Callable[[str, bool], None]) -> None:
        """A search's refresh: a scan that started after this request, its skip notices reported to ``notice``."""
        from voyager_sessions.api import notice_text

        from voyager_sessions.api.freshness import refresh_budget

        outcome = self.scans.fresh(patience=LONG_SCAN_S, budget=refresh_budget())
        if outcome is None:
            return  # a long scan is building the index: answer from what it has committed (the result says so)
        for skipped in outcome.notices:
            notice(notice_text(skipped), not skipped.repair)
        if outcome.error is not None:
            raise outcome.error


def scan_for_keep_fresh(scans: Scans) -> Callable[[], Any]:
    """``keep_fresh``'s ``scan()``: a shared scan; a bug in it becomes a failure to back off from, not a dead thread."""

    def run() -> Any:
        outcome = scans.fresh(watched=True)
        assert outcome is not None  # no patience: it waits
        if outcome.error is None:
            return outcome.summary
        if isinstance(outcome.error, VoyagerError):
            raise outcome.error
        raise _ScanBug(f"internal error: {type(outcome.error).__name__}: {outcome.error}")

    return run


class _ScanBug(VoyagerError):
    """An unexpected exception in a background scan: reported, retried with backoff."""
