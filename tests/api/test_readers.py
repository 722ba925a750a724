"""The pool of open readers a server keeps: a reader whose reload fails is dropped, and the next one works."""

from __future__ import annotations

import os
import sqlite3
import sys

import pytest

from tests.support.locks import holder
from tests.support.serving import scanned_env
from voyager_sessions.api.readers import ReaderPool
from voyager_sessions.core.errors import Busy
from voyager_sessions.core.paths import DataDir
from voyager_sessions.search import index as search_index


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and flock as Linux has them")
def test_a_reader_whose_reload_meets_a_stopped_lock_holder_is_dropped_and_the_next_is_fresh(tmp_path, monkeypatch):
    monkeypatch.setattr(search_index, "META_LOCK_WAIT", 0.2)
    ddir = DataDir(scanned_env(tmp_path)["VOYAGER_HOME"])
    pool = ReaderPool(ddir, 1)
    with pool.reader() as first:
        events = first.stats().index_events
    meta = ddir.index / "meta.json"
    st = os.stat(meta)
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # as after another process's commit
    with holder(ddir.index / search_index.META_LOCK_FILE, stop=True) as pid:
        with pytest.raises(Busy, match=f"locked by process {pid}, which is stopped"):
            with pool.reader():
                pass
    with pytest.raises(sqlite3.ProgrammingError):  # the failed reader was closed, not left open and forgotten
        first.stats()
    with pool.reader() as second:  # the one slot was given back, and the failed reader is not lent again
        assert second is not first
        assert second.stats().index_events == events
    pool.close()
