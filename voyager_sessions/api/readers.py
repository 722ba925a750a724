"""Readers kept open: a pool of :class:`~voyager_sessions.api.Reader` s for a process that answers many requests.

``voyager serve`` and ``voyager web`` answer request after request from one process; opening the index and
the state store for each would cost more than most searches. :class:`ReaderPool` lends each request a
reader of its own (SQLite connections and Tantivy searchers are not for two threads at once) and keeps each
one current: before a reader is lent, the index's ``meta.json`` is looked at (one ``stat``) and the reader
reloaded if any process committed since, or opened anew if the index was rebuilt. :class:`PooledBackend` is
the :class:`~voyager_sessions.api.Backend` over a pool, for a front end that refreshes elsewhere (the web
page: the server's or its own watcher keeps the index fresh).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir

if TYPE_CHECKING:
    from voyager_sessions.api import Notice, Reader


class _Pooled:
    __slots__ = ("reader", "signature")

    def __init__(self, reader: Reader, signature: tuple[object, ...]) -> None:
        self.reader = reader
        self.signature = signature


def index_signature(ddir: DataDir) -> tuple[object, ...]:
    """What changes when any process commits to the index (``meta.json`` is replaced) or rebuilds it."""
    out: list[object] = []
    for path in (ddir.index, ddir.index / "voyager-index-id", ddir.index / "meta.json"):
        try:
            st = os.stat(path)
            out.append((st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


class ReaderPool:
    """Up to ``size`` open ``api.Reader``s of one data dir, each lent to one request at a time."""

    def __init__(self, ddir: DataDir, size: int) -> None:
        self.ddir = ddir
        self.size = size
        self._idle: queue.LifoQueue[_Pooled] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._all: set[_Pooled] = set()

    @contextmanager
    def reader(self) -> Iterator[Reader]:
        """A current reader for the ``with`` block; "no index yet" as ``api.reader`` says it."""
        from voyager_sessions.api import require_index

        require_index(self.ddir)
        self._slots.acquire()
        pooled = None
        try:
            pooled = self._current()
            yield pooled.reader
        except UserError:
            raise  # the request's own mistake (an unknown session, say): the reader answered it, and stays
        except BaseException:
            if pooled is not None:  # a reader that failed mid-request is not trusted again
                self._discard(pooled)
                pooled = None
            raise
        finally:
            if pooled is not None:
                self._idle.put(pooled)
            self._slots.release()

    def _current(self) -> _Pooled:
        signature = index_signature(self.ddir)
        try:
            pooled = self._idle.get_nowait()
        except queue.Empty:
            return self._open(signature)
        if pooled.signature == signature:
            return pooled
        if pooled.signature[:2] == signature[:2]:
            try:
                pooled.reader.reload()  # the same index, new commits
            except BaseException:  # the index's meta lock held too long (search.index.wait_for_meta_lock), say
                self._discard(pooled)
                raise
            pooled.signature = signature
            return pooled
        self._discard(pooled)  # rebuilt: another index in the same place
        return self._open(signature)

    def _open(self, signature: tuple[object, ...]) -> _Pooled:
        from voyager_sessions.api import Reader

        pooled = _Pooled(Reader(self.ddir, shared=True), signature)
        with self._lock:
            self._all.add(pooled)
        return pooled

    def _discard(self, pooled: _Pooled) -> None:
        with self._lock:
            self._all.discard(pooled)
        try:
            pooled.reader.close()
        except Exception:  # noqa: BLE001 - closing a broken reader must not hide the first error
            pass

    def close(self) -> None:
        with self._lock:
            every = list(self._all)
        for pooled in every:
            self._discard(pooled)


class PooledBackend:
    """The :class:`~voyager_sessions.api.Backend` of a pool: its readers, and no refresh of its own (whoever owns
    the pool keeps the index fresh: ``voyager serve``'s scans, or ``voyager web``'s watcher)."""

    def __init__(self, pool: ReaderPool) -> None:
        self.pool = pool

    def reader(self, ddir: Path) -> AbstractContextManager[Reader]:
        return self.pool.reader()

    def refresh(self, ddir: Path, notice: Notice) -> None:
        pass
