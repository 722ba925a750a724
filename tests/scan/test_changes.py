"""Refreshing from a watcher's change set: nothing missed, whatever is appended, rewritten, deleted or created.

Every step mutates the agents' stores while a :class:`ChangeWatcher` runs (or while it is
disabled, so every refresh is the full stat pass), refreshes through
:func:`~voyager_sessions.scan.refresh.refresh`, and compares the index and the sessions
table with a scan from scratch of the same stores.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.sessions import CLAUDE_SID, claude_session_lines, codex_session_lines, write_claude, write_codex
from tests.support.store_changes import create_and_change_opencode
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import scan
from voyager_sessions.scan.changes import ChangeWatcher
from voyager_sessions.scan.refresh import refresh

pytest.importorskip("watchfiles")


def _contents(ddir: Path) -> tuple[list, dict]:
    """Every indexed event (session, seq, text) and every session's title and event count."""
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import StateStore

    ix = SearchIndex(DataDir(ddir).index, create=False)
    events = sorted((e.session, e.seq, e.text) for sid in ix.iter_session_ids() for e in ix.session_events(sid))
    store = StateStore(DataDir(ddir).state_db)
    _, records = store.list_sessions()
    sessions = {r.session.id: (r.session.title, r.events) for r in records}
    store.close()
    return events, sessions


@pytest.mark.slow
@pytest.mark.parametrize("watching", [True, False], ids=["watcher", "no-watcher"])
def test_a_refresh_sees_exactly_what_a_full_rescan_sees(home, tmp_path, monkeypatch, watching):
    db = home / "oc" / "opencode.db"
    db.parent.mkdir()
    monkeypatch.setenv("VOYAGER_OPENCODE_DB", str(db))
    lines = claude_session_lines()
    claude = write_claude(home, lines[:3])
    (home / ".codex" / "sessions").mkdir(parents=True)
    env = dict(os.environ)
    ddir = home / "voyager-data"
    watcher = ChangeWatcher(env, enabled=watching, full_every=1e9).start()
    if watching and not watcher.status.startswith("watching"):
        pytest.skip(f"no file-system watcher here: {watcher.status}")
    took_changes = 0
    try:
        assert refresh(ddir, env, watcher).new == 1  # the first refresh is a full pass

        def check(step: str) -> None:
            nonlocal took_changes
            changes = watcher.take()
            took_changes += changes is not None
            watcher.give_back(changes)
            refresh(ddir, env, watcher)
            fresh = tmp_path / f"fresh-{step}"
            scan(fresh, env)
            assert _contents(ddir) == _contents(fresh), step

        with open(claude, "a", encoding="utf-8") as fh:  # append
            fh.write("".join(lines[3:]))
        check("append")
        codex = write_codex(home, codex_session_lines())  # create, in new dated folders
        check("create")
        claude.write_text("".join(lines[:4]), encoding="utf-8")  # rewrite, shorter
        check("rewrite")
        write_claude(
            home,
            claude_session_lines(sid="aaaaaaaa-7b3d-4c21-9e8f-0a1b2c3d4e5f"),
            project="-home-dev-new",
            sid="aaaaaaaa-7b3d-4c21-9e8f-0a1b2c3d4e5f",
        )
        check("new-project")
        entries = [{"sessionId": CLAUDE_SID, "customTitle": "zanzibar named"}]
        (claude.parent / "sessions-index.json").write_text(json.dumps({"version": 1, "entries": entries}))
        check("side-file")
        create_and_change_opencode(db, check)
        codex.unlink()  # delete
        check("delete")
        shutil.rmtree(claude.parent)  # a whole project folder goes
        check("delete-folder")
    finally:
        watcher.stop()
    if watching:
        assert took_changes >= 5, watcher.status  # the watcher's change sets, not only full passes, were tested
    else:
        assert took_changes == 0


def test_a_watcher_that_cannot_watch_says_so_and_every_refresh_is_full(home):
    watcher = ChangeWatcher(dict(os.environ), enabled=False).start()
    assert "disabled" in watcher.status
    assert watcher.take() is None


def test_an_overflowing_watcher_asks_for_a_full_pass_then_watches_again(home, monkeypatch):
    from voyager_sessions.scan import changes

    monkeypatch.setattr(changes, "MAX_CHANGES", 2)
    path = write_claude(home, claude_session_lines()[:2])
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert watcher.take() is None  # the first take: what changed before the start is unknown
        for i in range(4):
            (path.parent / f"extra-{i}.txt").write_text("x")
        assert watcher.take() is None  # more changes than kept: stat everything
        assert watcher.last_full is not None and watcher.last_full.startswith("overflow"), watcher.last_full
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(claude_session_lines()[2])
        got = watcher.take()
        assert got is not None and str(path) in got.paths
        assert got.touching("claude") == frozenset({str(path)})
        assert got.touching("codex") is None  # not among the watched agents: a scan discovers it whole
    finally:
        watcher.stop()


def test_a_store_on_a_network_file_system_is_stat_every_time_and_said_so(home, monkeypatch):
    from voyager_sessions.scan import changes

    write_claude(home, claude_session_lines()[:2])
    monkeypatch.setattr(changes, "_mounts", lambda: [(str(home.resolve()), "nfs4"), ("/", "ext4")])
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert "network file system" in watcher.status and "claude" in watcher.status
        assert watcher.take() is None
        # No agent is watched: every refresh is the full pass, without waiting for a fence that could spare it nothing.
        assert watcher.take() is None and watcher.counts["late"] == 0
    finally:
        watcher.stop()


def test_a_take_holds_every_write_made_before_it_in_every_watched_folder(home):
    """The fence: writes to two agents' stores (two inotify watches) made just before a take are in its set."""
    claude = write_claude(home, claude_session_lines()[:2])
    codex = write_codex(home, codex_session_lines())
    watcher = ChangeWatcher(dict(os.environ), ["claude", "codex"], full_every=1e9).start()
    try:
        assert watcher.take() is None  # the first take: what changed before the start is unknown
        for i in range(20):
            with open(claude, "a", encoding="utf-8") as fh:
                fh.write(claude_session_lines()[2])
            with open(codex, "a", encoding="utf-8") as fh:
                fh.write(codex_session_lines()[-1])
            made = codex.parent / f"rollout-2026-11-20T10-00-{i:02d}-extra.jsonl"
            made.write_text(codex_session_lines()[0], encoding="utf-8")
            got = watcher.take()
            assert got is not None, watcher.counts
            assert {str(claude), str(codex), str(made)} <= got.paths, (i, got.paths)
            assert not any("fence" in p for p in got.paths)  # the fence is the watcher's own
        assert watcher.counts["late"] == 0
    finally:
        watcher.stop()


def test_a_fence_that_never_shows_makes_the_refresh_a_full_pass(home, monkeypatch, tmp_path):
    from voyager_sessions.scan import changes

    write_claude(home, claude_session_lines()[:2])
    monkeypatch.setattr(changes, "FENCE_TIMEOUT", 0.2)
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert watcher.take() is None
        watcher._fence = str(tmp_path / "unwatched-fence")  # a touch no watch reports (a lost event)
        assert watcher.take() is None
        assert watcher.counts["late"] == 1
    finally:
        watcher.stop()


def test_hinted_agents_are_not_taken_for_watched(home):
    """Aider's histories lie in project folders: no change set may say "nothing changed" for it."""
    watcher = ChangeWatcher(dict(os.environ), ["claude", "aider"], full_every=1e9).start()
    try:
        assert "aider" in watcher.status
        watcher.take()
        got = watcher.take()
        assert got is not None and got.touching("aider") is None and got.touching("claude") == frozenset()
    finally:
        watcher.stop()


def test_a_watcher_that_cannot_start_or_fails_later_says_so_and_every_refresh_is_full(home, monkeypatch):
    import watchfiles._rust_notify as rust

    from voyager_sessions.scan import inotify

    write_claude(home, claude_session_lines()[:2])

    class NoWatches:
        def __init__(self, *args, **kwargs):
            raise OSError(28, "OS file watch limit reached")

    with monkeypatch.context() as m:
        m.setattr(rust, "RustNotify", NoWatches)  # macOS's backend
        m.setattr(inotify, "Inotify", NoWatches)  # Linux's
        watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    assert watcher.status.startswith("cannot start") and "watch limit" in watcher.status
    assert watcher.take() is None and "watch limit" in (watcher.last_full or "")
    watcher.stop()

    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        watcher.take()
        assert watcher.take() is not None

        class Broken:
            def watch(self, *args):
                raise RuntimeError("error in underlying watcher: no space left on device")

            def close(self):
                pass

        watcher._notify = Broken()  # a new folder the kernel would not watch any more
        assert watcher.take() is None
        assert watcher.status.startswith("watcher stopped") and "no space" in watcher.status
        assert watcher.take() is None  # and it stays a full pass, said so
    finally:
        watcher.stop()
