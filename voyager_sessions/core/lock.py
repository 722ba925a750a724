"""The one-writer lock of a data dir: a scan, a watch and a checkpoint's index update take turns.

An ``fcntl`` lock on ``<data dir>/scan.lock`` (released by the kernel if the holder
dies, so a SIGKILLed scan never leaves a stale lock). The holder's pid is written
into the file so a second writer can say who it is waiting for. Readers never take it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from voyager_sessions.core.errors import Busy
from voyager_sessions.core.paths import DataDir, ensure_private_dir, open_private


class ScanBusy(Busy):
    """Another process is writing the index; ``pid`` says which when known."""

    def __init__(self, pid: int | None) -> None:
        super().__init__(f"another scan is running (pid {pid if pid else 'unknown'})")
        self.pid = pid


@contextmanager
def writer_lock(data_dir: Path, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the one-writer lock of ``data_dir`` (an fcntl lock on ``scan.lock``), waiting up to ``wait`` s."""
    ensure_private_dir(data_dir)
    path = DataDir(data_dir).lock
    fd = open_private(path, os.O_RDWR | os.O_CREAT)
    deadline = time.monotonic() + max(0.0, wait)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    try:
                        pid = int(os.pread(fd, 32, 0).decode().strip() or 0) or None
                    except (ValueError, OSError):
                        pid = None
                    raise ScanBusy(pid) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock
