"""A Claude Code adapter whose read dies (SIGKILL of its own process) on a file named in ``VOYAGER_TEST_DIE_ON``.

It dies after yielding ``VOYAGER_TEST_DIE_AFTER`` items (default 0). Only a worker process
dies: the scan's own process (``VOYAGER_TEST_WRITER_PID``) reads normally, so a scan that
reads in-process is unaffected. Registered by the tests in place of the real module.
"""

from __future__ import annotations

import os
import signal

from voyager_sessions.ingest.adapters.claude import ClaudeAdapter


class DyingAdapter(ClaudeAdapter):
    def read(self, source, cursor=None):
        victim = os.environ.get("VOYAGER_TEST_DIE_ON")
        if (
            not victim
            or not source.path.endswith(victim)
            or str(os.getpid()) == os.environ.get("VOYAGER_TEST_WRITER_PID")
        ):
            return super().read(source, cursor)
        return self._dying(super().read(source, cursor), int(os.environ.get("VOYAGER_TEST_DIE_AFTER", "0")))

    @staticmethod
    def _dying(items, after: int):
        for n, item in enumerate(items):
            if n == after:
                os.kill(os.getpid(), signal.SIGKILL)
            yield item
        os.kill(os.getpid(), signal.SIGKILL)


ADAPTER = DyingAdapter()
