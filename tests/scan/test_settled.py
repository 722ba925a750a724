"""A refresh does not walk a Claude Code session's subagents folder while the session's transcript is quiet.

Subagents run when their session's transcript says so first, so the transcript is the folder's
canary: unchanged since the last scan and idle for ``SETTLE_S``, with nothing under the folder
newer than it, the folder is not walked (its sources count as seen, unchanged). A full walk
every ``FULL_WALK_S`` catches what no canary announces (a file copied or deleted by hand).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import synth
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import scan, settled
from voyager_sessions.store.state import StateStore

OLD = time.time() - 3 * 3600  # idle for hours


def _session(home: Path, i: int, *, when: float = OLD) -> tuple[Path, Path]:
    """A Claude Code session with one subagent transcript in ``<id>/subagents/``, both last written at ``when``."""
    conv = synth.generate(seed=4000 + i, messages=6, output_bytes=200)
    parent = synth.write_claude(conv, home / ".claude" / "projects")
    sub = synth.generate(seed=4100 + i, messages=4, output_bytes=200, session_id=conv.id, cwd=conv.cwd)
    agent = parent.with_suffix("") / "subagents" / f"agent-a{i:04x}.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_bytes(b"".join(synth.claude_lines(sub)).replace(b'"isSidechain":false', b'"isSidechain":true'))
    os.utime(agent, (when - 60, when - 60))
    os.utime(parent, (when, when))
    return parent, agent


def _walked(monkeypatch) -> list[str]:
    """The folders the walk lists or looks into."""
    seen: list[str] = []
    real = os.listdir

    def spy(path="."):
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", spy)
    return seen


def _full_walk_long_ago(data: Path) -> None:
    store = StateStore(DataDir(data).state_db)
    store.set_meta(settled.META_KEY, str(time.time_ns() - 2 * settled.FULL_WALK_S * 1_000_000_000))
    store.close()


@pytest.fixture
def data(monkeypatch) -> Path:
    # The folders were made a moment ago: remember their listings at once (the 3 s guard against a listing
    # racing a change is not what these tests are about).
    from voyager_sessions.ingest.files import FolderMemory

    monkeypatch.setattr(FolderMemory, "SETTLED_NS", 0)
    return Path(os.environ["VOYAGER_HOME"])


def test_a_quiet_sessions_subagents_are_not_walked_and_stay(home, data, monkeypatch):
    parents = [_session(home, i) for i in range(3)]
    first = scan(data)
    assert first.new == 6
    walked = _walked(monkeypatch)
    again = scan(data)
    assert again.unchanged == 6 and again.sources == 6 and not again.touched and again.removed == 0
    assert not [w for w in walked if w.endswith("subagents")], walked  # no subagents folder looked into
    # ... and its transcripts are still what a search finds: nothing was taken out of the index.
    from voyager_sessions.api import SearchRequest, search

    assert search(SearchRequest(query="kind:user", sessions=True, limit=50, refresh=False), data_dir=data).total == 6
    assert parents


def test_a_session_that_moved_has_its_subagents_walked(home, data, monkeypatch):
    parent, agent = _session(home, 0)
    scan(data)
    # The session starts another subagent: its transcript says so first, then the subagent's file appears.
    with open(parent, "ab") as fh:
        fh.write(b"\n")
    extra = agent.with_name("agent-b0001.jsonl")
    extra.write_bytes(agent.read_bytes())
    found = scan(data)
    assert found.new == 1 and found.grown + found.changed == 1


def test_a_subagent_newer_than_its_session_is_looked_at(home, data):
    """A background subagent that wrote after its session last did may still be running: always statted."""
    parent, agent = _session(home, 0)
    os.utime(agent, (OLD + 60, OLD + 60))
    scan(data)
    with open(agent, "ab") as fh:
        fh.write(agent.read_bytes().splitlines(keepends=True)[-1])
    os.utime(agent, (OLD + 120, OLD + 120))
    again = scan(data)
    assert again.grown + again.changed == 1


def test_a_session_written_lately_has_its_subagents_looked_at(home, data):
    parent, agent = _session(home, 0, when=time.time() - 5)  # idle for seconds only
    scan(data)
    with open(agent, "ab") as fh:
        fh.write(agent.read_bytes().splitlines(keepends=True)[-1])
    os.utime(agent, (time.time() - 70, time.time() - 70))  # still older than its session
    again = scan(data)
    assert again.grown + again.changed == 1


def test_the_full_walk_finds_what_no_canary_announced(home, data):
    parent, agent = _session(home, 0)
    _, gone = _session(home, 1)
    scan(data)
    # By hand: a subagent transcript grows and another is deleted, their sessions untouched.
    with open(agent, "ab") as fh:
        fh.write(agent.read_bytes().splitlines(keepends=True)[-1])
    os.utime(agent, (OLD - 30, OLD - 30))
    gone.unlink()
    quiet = scan(data)
    assert not quiet.touched  # not walked: not seen yet
    _full_walk_long_ago(data)
    full = scan(data)
    assert full.grown + full.changed == 1 and full.removed == 1


def test_a_transcript_read_without_its_subagents_does_not_quiet_their_folder(home, data, monkeypatch):
    """A scan stopped by its budget right after a session's transcript, before its subagent: the next scan finds
    the subagent, though the transcript is as it was read and long idle."""
    from voyager_sessions.scan import run as run_mod

    parent, agent = _session(home, 0)
    real = run_mod.Scan._budget_spent
    monkeypatch.setattr(run_mod.Scan, "_budget_spent", lambda self, left, left_bytes: self.source_no >= 1)
    first = scan(data, budget=0.0)
    assert first.new == 1 and first.remaining == 1  # the transcript (newest), not its subagent
    monkeypatch.setattr(run_mod.Scan, "_budget_spent", real)
    rest = scan(data)
    assert rest.new == 1 and rest.remaining == 0


def test_a_quiet_sessions_folder_in_a_remembered_project_is_not_even_statted(home, data, monkeypatch):
    """The project's listing is remembered and the transcript quiets its folder: the folder is never looked at (at
    10,000 sessions a third of a refresh's stats), while every transcript is statted (an append changes no folder)."""
    parents = [_session(home, i)[0] for i in range(3)]
    scan(data)
    statted: list[str] = []
    real = os.lstat

    def spy(path, *args, **kwargs):
        statted.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", spy)
    again = scan(data)
    assert again.unchanged == 6 and not again.touched and again.removed == 0
    folders = {str(p.with_suffix("")) for p in parents}
    assert not folders & set(statted), statted
    assert {str(p) for p in parents} <= set(statted)


def test_a_link_to_a_quiet_folder_is_still_named_as_one_already_walked(home, data):
    """A quiet folder goes unstatted, yet a symlink elsewhere to it is not walked as a second copy of its sessions."""
    parent, agent = _session(home, 0)
    other = home / ".claude" / "projects" / "-zz-other"
    other.mkdir()
    (other / "linked").symlink_to(parent.with_suffix(""), target_is_directory=True)
    first = scan(data)
    assert first.new == 2 and any("already walked" in s.reason for s in first.skipped), first.skipped
    again = scan(data)
    assert again.new == 0 and again.unchanged == 2 and again.removed == 0
    assert any("already walked" in s.reason for s in again.skipped), again.skipped


def _forget_row(data: Path, path: Path) -> None:
    """As if the last scan never read ``path`` (killed between a session's transcript and its subagent)."""
    store = StateStore(DataDir(data).state_db)
    store.conn.execute("DELETE FROM sources WHERE path = ?", (str(path),))
    store.conn.commit()
    store.close()


def test_while_an_unfinished_scan_is_recorded_every_folder_is_walked(home, data):
    """A scan killed after a commit left a transcript read and its subagent not, and its record of how far it got:
    the next refresh walks the quiet folder too, finds the subagent, and (its plan read) removes the record."""
    from voyager_sessions.scan.progress import META_KEY

    parent, agent = _session(home, 0)
    scan(data)
    _forget_row(data, agent)
    store = StateStore(DataDir(data).state_db)
    store.set_meta(META_KEY, '{"sessions_done": 1, "sessions_total": 2}')
    store.close()
    found = scan(data)
    assert found.new == 1 and found.unchanged == 1
    store = StateStore(DataDir(data).state_db, readonly=True)
    assert store.get_meta(META_KEY) is None
    store.close()


def test_without_a_record_the_rows_are_trusted(home, data):
    """The other side of the test above: no record of an unfinished scan, the folder is quiet, its rows are what it
    holds (a subagent missing from them shows at the next full walk)."""
    parent, agent = _session(home, 0)
    scan(data)
    _forget_row(data, agent)
    quiet = scan(data)
    assert quiet.new == 0 and quiet.unchanged == 1
    _full_walk_long_ago(data)
    assert scan(data).new == 1


def test_a_quiet_refresh_reads_only_the_listings_its_walk_asks_for(home, data, monkeypatch):
    """The listings of quiet folders (two a Claude Code session with subagents) are not read from state.db."""
    parents = [_session(home, i)[0] for i in range(3)]
    scan(data)
    asked: list[str] = []
    real = StateStore.folder

    def spy(self, path):
        asked.append(path)
        return real(self, path)

    monkeypatch.setattr(StateStore, "folder", spy)
    monkeypatch.setattr(StateStore, "folders", lambda self: pytest.fail("every listing read"))
    again = scan(data)
    assert again.unchanged == 6 and not again.touched
    quiet = {str(p.with_suffix("")) for p in parents}
    assert asked and not [p for p in asked if p in quiet or p.startswith(tuple(q + os.sep for q in quiet))], asked


def test_a_partial_scan_leaves_an_unfinished_scans_record_as_it_found_it(home, data, monkeypatch):
    """A scan of one agent that commits part-way (recording its own progress) puts back the record of an unfinished
    scan it found: the folder that scan left unread is still walked by the next refresh, and its subagent found."""
    from voyager_sessions.scan.progress import META_KEY

    parent, agent = _session(home, 0)
    for i in range(3):
        synth.write_codex(synth.generate(seed=4200 + i, messages=4, output_bytes=100), home / ".codex")
    scan(data, providers=["claude"])
    _forget_row(data, agent)
    unfinished = '{"sessions_done": 1, "sessions_total": 2}'
    store = StateStore(DataDir(data).state_db)
    store.set_meta(META_KEY, unfinished)
    store.close()
    monkeypatch.setenv("VOYAGER_COMMIT_EVERY_EVENTS", "1")  # a commit after every source: progress recorded
    codex = scan(data, providers=["codex"])
    assert codex.new == 3
    store = StateStore(DataDir(data).state_db)
    assert store.get_meta(META_KEY) == unfinished
    store.close()
    found = scan(data)
    assert found.new == 1 and found.unchanged == 4
    store = StateStore(DataDir(data).state_db)
    assert store.get_meta(META_KEY) is None  # a whole scan that read its plan: the record is gone
    store.close()
