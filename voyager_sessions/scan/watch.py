"""Keeping an index fresh over time: rescan on an interval, back off on failure, never give up.

``voyager watch`` and the resident server (``voyager serve``) share this loop. A scan
that fails for a reason that may pass (another writer holds the lock, the disk is full, a
database is busy) is reported once per failure and retried after a delay that doubles up
to :data:`MAX_BACKOFF` seconds; the first scan that succeeds again resets the delay, and
since a failed scan commits nothing, nothing is lost in between.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from voyager_sessions.core.errors import Busy, VoyagerError

#: What a scan returns (a summary), handed to ``on_scan`` as it is.
_S = TypeVar("_S")

#: The longest wait between two attempts after repeated failures (seconds).
MAX_BACKOFF = 60.0


class Backoff:
    """The delay before the next attempt: ``interval`` while all is well, doubling per failure up to ``MAX_BACKOFF``."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.failures = 0

    def ok(self) -> float:
        self.failures = 0
        return self.interval

    def failed(self) -> float:
        self.failures += 1
        return min(MAX_BACKOFF, max(self.interval, self.interval * 2.0**self.failures))


def keep_fresh(
    scan: Callable[[], _S],
    *,
    interval: float,
    on_scan: Callable[[_S], None] = lambda summary: None,
    on_error: Callable[[VoyagerError, float], None] = lambda exc, delay: None,
    stop: threading.Event | None = None,
) -> None:
    """Run ``scan()`` every ``interval`` seconds until ``stop`` is set (forever without one).

    ``on_scan(summary)`` follows each scan that ran; ``on_error(exc, delay)`` each that
    failed with a VoyagerError (anything else is a bug and propagates). A busy lock is no
    failure (another process is doing the work): it is retried after ``interval``.
    """
    backoff = Backoff(interval)
    stop = stop or threading.Event()
    while not stop.is_set():
        try:
            summary = scan()
        except Busy as exc:
            delay = backoff.interval
            on_error(exc, delay)
        except VoyagerError as exc:
            delay = backoff.failed()
            on_error(exc, delay)
        else:
            delay = backoff.ok()
            on_scan(summary)
        if stop.wait(delay):
            break
