"""A long scan is searchable while it runs: newest first, early commits, what was said before tool output.

The two phases (a spool holding tool output while every source's words are indexed) must
leave exactly the index and state rows one pass leaves; a scan stopped between them, or
killed, must cost a re-read, never a duplicate or a loss; a budgeted scan stops early and
says what it left; and whatever a commit holds is what a search in another process sees,
with how far the index is built.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import synth
from tests.support.mixed import Corpus, index_contents, scan_each, state_rows
from tests.support.paused import marked_history, paused_scan
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import progress, scan
from voyager_sessions.scan import run as run_mod
from voyager_sessions.scan import spool as spool_mod
from voyager_sessions.store.state import StateStore


def _phased(monkeypatch, on: bool) -> None:
    monkeypatch.setenv("VOYAGER_PHASE_MIN_BYTES", "0" if on else str(1 << 60))


def test_two_phases_leave_the_index_and_state_of_one(home, monkeypatch):
    """Words first, tool output after, in every kind of read (new, grown, rewritten, a database, removals)."""
    corpus = Corpus(home, monkeypatch)
    held: list[int] = []
    real = spool_mod.Spool.hold
    monkeypatch.setattr(spool_mod.Spool, "hold", lambda self, no, evs: (held.append(len(evs)), real(self, no, evs))[1])
    _phased(monkeypatch, False)
    one = scan_each(home, (1,), "one")
    _phased(monkeypatch, True)
    two = scan_each(home, (2,), "two")  # on workers too: the writer splits what they send
    assert sum(held) > 100, "the words phase held no tool output back"
    assert two[2] == one[1]
    corpus.change()
    held.clear()
    _phased(monkeypatch, False)
    one = scan_each(home, (1,), "one")
    _phased(monkeypatch, True)
    two = scan_each(home, (2,), "two")
    assert sum(held) > 0
    assert two[2] == one[1]
    assert not list(DataDir(home / "data-2").root.glob("scan-spool*")), "the spool outlived the scan"


def test_a_session_read_again_after_its_tool_output_was_held_keeps_one_copy(home, monkeypatch):
    """Two sources that hold the same session: the second read replaces the first, held tool output included."""
    conv = synth.generate(seed=41, messages=30, output_bytes=300)
    first = synth.write_claude(conv, home / ".claude" / "projects")
    copy = first.parent.parent / "-home-dev-copy" / first.name
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())
    _phased(monkeypatch, False)
    one = scan_each(home, (1,), "one")
    _phased(monkeypatch, True)
    two = scan_each(home, (1,), "two")
    assert two[1][1] == one[1][1]  # the same events, once each


def test_newest_sessions_are_read_first(home, monkeypatch):
    projects = home / ".claude" / "projects"
    paths = []
    for i in range(6):
        path = synth.write_claude(synth.generate(seed=70 + i, messages=6), projects)
        os.utime(path, (1_700_000_000 + i * 100, 1_700_000_000 + i * 100))
        paths.append(str(path))
    order: list[str] = []
    real = run_mod.Scan._read

    def spy(self, source, *args):
        order.append(source.path)
        return real(self, source, *args)

    monkeypatch.setattr(run_mod.Scan, "_read", spy)
    scan(Path(os.environ["VOYAGER_HOME"]), workers=1)
    assert order == paths[::-1]


def _search(query: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "voyager_sessions", "search", query, "--no-refresh", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, VOYAGER_NO_SERVER="1"),
    )


def test_a_search_meanwhile_answers_from_what_is_committed_and_says_so(home, monkeypatch):
    marked_history(home, 8)
    _phased(monkeypatch, False)
    with paused_scan(monkeypatch, Path(os.environ["VOYAGER_HOME"]), 3):
        newest = _search("marker7", "--json")  # read first
        assert newest.returncode == 0, newest.stderr
        doc = json.loads(newest.stdout)
        assert doc["total"] >= 1
        assert doc["indexing"] == {"sessions_done": 3, "sessions_total": 8, "sessions_words": 3, "running": True}
        assert "still indexing: searched 3 of 8 sessions" in newest.stderr
        oldest = _search("marker0")  # not read yet: no match is no answer
        assert oldest.returncode == 3, oldest.stderr
        assert "No matches yet." in oldest.stderr and "still indexing" in oldest.stderr
        listed = subprocess.run(
            [sys.executable, "-m", "voyager_sessions", "list", "--json"], capture_output=True, text=True, timeout=60
        )
        assert json.loads(listed.stdout)["indexing"]["sessions_done"] == 3 and "still indexing" in listed.stderr
    done = _search("marker0", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["indexing"] is None
    none = _search("nosuchwordanywhere")
    assert none.returncode == 1 and "No matches." in none.stderr


def test_between_the_phases_what_was_said_is_searchable_and_tool_output_follows(home, monkeypatch):
    convs = marked_history(home, 4)
    _phased(monkeypatch, True)
    with paused_scan(monkeypatch, Path(os.environ["VOYAGER_HOME"]), 1, phase="tools"):
        doc = json.loads(_search("marker0", "--json").stdout)
        assert doc["total"] >= 1
        ix = doc["indexing"]
        assert ix["sessions_words"] == 4 and ix["sessions_total"] == 4 and ix["sessions_done"] == 1 and ix["running"]
        tools = json.loads(_search("kind:tool_result", "--sessions", "--json").stdout)
        assert tools["total"] == 1  # the newest session's tool output, none of the others' yet
    tools = json.loads(_search("kind:tool_result", "--sessions", "--json").stdout)
    assert tools["total"] == len(convs) and tools["indexing"] is None


def test_a_scan_that_dies_between_the_phases_costs_a_re_read(home, monkeypatch):
    """The words are committed, the tool output never: the next scan reads those sources again, whole."""
    Corpus(home, monkeypatch)
    _phased(monkeypatch, False)
    reference = scan_each(home, (1,), "reference")[1]
    _phased(monkeypatch, True)
    data = home / "data-crash"

    class Died(Exception):
        pass

    def die(self):
        raise Died

    drain = run_mod.Scan._drain
    monkeypatch.setattr(run_mod.Scan, "_drain", die)
    with pytest.raises(Died):
        scan(data, workers=1)
    monkeypatch.setattr(run_mod.Scan, "_drain", drain)
    record = progress.decode(StateStore(DataDir(data).state_db).get_meta(progress.META_KEY))
    assert record is not None and record.sessions_words > record.sessions_done  # the words were committed
    _phased(monkeypatch, False)
    repaired = scan(data, workers=1)
    assert repaired.changed + repaired.grown > 0 and repaired.new == 0
    assert index_contents(data) == reference[1]
    assert state_rows(data) == reference[2]
    assert StateStore(DataDir(data).state_db).get_meta(progress.META_KEY) is None


def test_a_budget_stops_reading_and_the_next_scan_goes_on(home, monkeypatch):
    marked_history(home, 12)
    monkeypatch.setenv("VOYAGER_HANDOVER_MIN_BYTES", "0")
    data = Path(os.environ["VOYAGER_HOME"])
    first = scan(data, workers=1, budget=0.0)
    assert first.remaining == 12 and first.new == 0
    record = progress.decode(StateStore(DataDir(data).state_db).get_meta(progress.META_KEY))
    assert record is not None and record.sessions_total == 12 and record.sessions_done == 0
    rest = scan(data, workers=1)
    assert rest.new == 12 and rest.remaining == 0
    assert StateStore(DataDir(data).state_db).get_meta(progress.META_KEY) is None


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_the_first_search_hands_the_rest_to_a_scan_in_the_background(home, monkeypatch):
    """Through the CLI as a person runs it: an answer now, the rest indexed behind it by a process of its own."""
    marked_history(home, 10)
    env = dict(os.environ, VOYAGER_NO_SERVER="1", VOYAGER_REFRESH_BUDGET="0", VOYAGER_HANDOVER_MIN_BYTES="0")
    data = DataDir(os.environ["VOYAGER_HOME"])
    first = subprocess.run(
        [sys.executable, "-m", "voyager_sessions", "search", "marker9", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert first.returncode in (0, 3), first.stderr
    doc = json.loads(first.stdout)
    assert doc["indexing"] is not None and doc["indexing"]["sessions_total"] == 10
    # The scan in the background finishes, leaves no process behind, and the record of an unfinished index goes.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pid = progress.holder(data.lock)
        if StateStore(data.state_db).get_meta(progress.META_KEY) is None and not (pid and progress.alive(pid)):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the background scan did not finish")
    later = subprocess.run(
        [sys.executable, "-m", "voyager_sessions", "search", "marker0", "--json", "--no-refresh"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert later.returncode == 0 and json.loads(later.stdout)["indexing"] is None
    assert data.scan_log.stat().st_mode & 0o077 == 0


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_full_spool_is_drained_and_the_words_go_on(home, monkeypatch):
    """A spool that reaches its size is read back into the index, emptied, and the next sources' words follow."""
    for i in range(4):
        synth.write_claude(synth.generate(seed=60 + i, messages=240, output_bytes=4000), home / ".claude" / "projects")
    resets: list[int] = []
    real = spool_mod.Spool.reset
    monkeypatch.setattr(spool_mod.Spool, "reset", lambda self: (resets.append(self.bytes), real(self))[1])
    monkeypatch.setenv("VOYAGER_SPOOL_MAX_BYTES", str(1 << 20))  # the floor: a session's tool output fills it
    _phased(monkeypatch, False)
    one = scan_each(home, (1,), "one")[1]
    _phased(monkeypatch, True)
    assert scan_each(home, (2,), "two")[2] == one  # on workers: the writer drains while it waits for them
    shutil.rmtree(home / "data-1")
    assert scan_each(home, (1,), "here")[1] == one  # in-process: drained when full, then on
    assert resets, "the spool never filled"
