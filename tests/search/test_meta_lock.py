"""A process stopped while it holds the index's meta lock: every reader says who holds it instead of hanging.

Tantivy takes ``.tantivy-meta.lock`` blocking, with no timeout, to open or reload a
reader; ``search.index.wait_for_meta_lock`` probes it first. The holders here are real
processes (one stopped with SIGSTOP, one running), so what ``/proc/locks`` says about
them is what a user's machine would say.
"""

from __future__ import annotations

import sys

import pytest

from tests.support.locks import holder
from tests.support.serving import cli, scanned_env
from voyager_sessions.core.errors import Busy
from voyager_sessions.core.paths import DataDir
from voyager_sessions.search.index import META_LOCK_FILE, wait_for_meta_lock

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and flock as Linux has them")


def test_a_stopped_holder_is_named_and_the_lock_is_waited_for_no_longer(tmp_path):
    with holder(tmp_path / META_LOCK_FILE, stop=True) as pid:
        with pytest.raises(Busy) as caught:
            wait_for_meta_lock(tmp_path, wait=0.2)
    assert str(caught.value) == (
        f"the search index is locked by process {pid}, which is stopped: `kill -CONT {pid}` lets it go on"
    )
    wait_for_meta_lock(tmp_path, wait=0.2)  # the holder is gone: free at once


def test_a_running_holder_is_named_as_one_that_holds_it_too_long(tmp_path):
    with holder(tmp_path / META_LOCK_FILE, stop=False) as pid:
        with pytest.raises(Busy, match=rf"^the search index is locked by process {pid}, which has held it for over"):
            wait_for_meta_lock(tmp_path, wait=0.2)


def test_no_lock_file_is_free_and_the_probe_makes_none(tmp_path):
    wait_for_meta_lock(tmp_path, wait=0.0)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # ~6 s: the CLI waits out the whole bound before it says so
def test_voyager_stats_says_which_stopped_process_holds_the_index_and_exits_busy(tmp_path):
    env = scanned_env(tmp_path)
    index = DataDir(env["VOYAGER_HOME"]).index
    with holder(index / META_LOCK_FILE, stop=True) as pid:
        held = cli(env, "stats", "--json", server=False, timeout=60)
    assert held.code == 3 and held.out == b""
    assert (
        held.err
        == f"voyager: the search index is locked by process {pid}, which is stopped: `kill -CONT {pid}` lets it go on\n"
    )
    freed = cli(env, "stats", "--json", server=False)
    assert freed.code == 0 and b'"index_events"' in freed.out
