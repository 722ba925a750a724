"""A real process holding a file's flock (as Tantivy holds its meta lock), running or stopped, for the lock tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def holder(lock: Path, *, stop: bool) -> Iterator[int]:
    """A child process that takes the flock on ``lock`` (as Tantivy does), then stops itself or sleeps; its pid."""
    import fcntl

    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(ready_w, b"x")
            if stop:
                os.kill(os.getpid(), signal.SIGSTOP)
            signal.pause()
        finally:
            os._exit(0)
    os.close(ready_w)
    try:
        assert os.read(ready_r, 1) == b"x"
        yield pid
    finally:
        os.close(ready_r)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
