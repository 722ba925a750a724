"""The watcher under a small inotify budget (issue #38, item 10): only folders that can hold sessions, honest when short.

The probe: with a small ``fs.inotify.max_user_watches`` the server took the whole budget, ``serve status``
said "watching 1 folders" while every refresh was a full pass, and each served search waited out a 1 s
fence (the fence folder, added last, went unwatched without a word); an ordinary OpenCode data folder
cost 4,755 watches, 4,572 of them in folders that never hold a session. Here the budget is made small
(``VOYAGER_MAX_WATCHES``, and for real in a user namespace of its own where one can be made), and the
watcher must spend it on session folders only, the fence first, watch each agent whole or not at all,
say which it does not watch and why, and never make a refresh wait for a fence it cannot use.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.scan import inotify
from voyager_sessions.scan.changes import ChangeWatcher

pytestmark = pytest.mark.skipif(not inotify.available(), reason="Linux inotify")


def _opencode_home(root: Path, junk: int) -> Path:
    """An OpenCode data folder: its database, a legacy storage tree, and ``junk`` folders (``snapshot/`` git
    objects, logs, binaries) that never hold a session."""
    root.mkdir(parents=True)
    sqlite3.connect(root / "opencode.db").close()
    (root / "storage" / "session" / "global").mkdir(parents=True)
    for i in range(junk):
        (root / "snapshot" / f"p{i % 10}" / "objects" / f"{i:03x}").mkdir(parents=True, exist_ok=True)
    (root / "log").mkdir()
    return root


def test_a_database_folder_is_watched_alone_not_with_every_folder_under_it(home, monkeypatch) -> None:
    oc = _opencode_home(home / "oc", junk=600)
    monkeypatch.setenv("VOYAGER_OPENCODE_HOME", str(oc))
    watcher = ChangeWatcher(dict(os.environ), ["opencode"], full_every=1e9).start()
    try:
        # The data folder (for the database and its -wal) and the storage tree (3): not snapshot/, log/.
        assert watcher.status.startswith("watching 4 folders for 1 of 1 agents"), watcher.status
        assert watcher.take() is None  # the first
        with sqlite3.connect(oc / "opencode.db") as db:
            db.execute("CREATE TABLE t (x)")
        (oc / "snapshot" / "p1" / "objects" / "001" / "blob").write_text("x")  # never a session: not seen
        got = watcher.take()
        assert got is not None and str(oc / "opencode.db") in got.touching("opencode"), got
        assert not any("snapshot" in p for p in got.paths)
    finally:
        watcher.stop()


def test_under_a_small_budget_each_agent_is_watched_whole_or_not_at_all_and_said_so(home, monkeypatch) -> None:
    claude = write_claude(home, claude_session_lines()[:2])
    codex = write_codex(home, codex_session_lines())
    for i in range(30):  # Codex's tree is too large for what is left
        (home / ".codex" / "sessions" / "2026" / f"{i:02d}").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("VOYAGER_MAX_WATCHES", "12")
    watcher = ChangeWatcher(dict(os.environ), ["claude", "codex"], full_every=1e9).start()
    try:
        status = watcher.status
        assert "for 1 of 2 agents" in status and "not watched" in status and "codex" in status, status
        assert "budget of 12 watches" in status
        assert watcher._notify.count <= 12  # the budget holds: the rest is left to other programs
        assert watcher.take() is None
        with open(claude, "a", encoding="utf-8") as fh:
            fh.write(claude_session_lines()[2])
        with open(codex, "a", encoding="utf-8") as fh:
            fh.write(codex_session_lines()[-1])
        got = watcher.take()
        assert got is not None and got.touching("claude") == frozenset({str(claude)})
        assert got.touching("codex") is None  # not watched: a scan discovers it whole
        assert watcher.counts["late"] == 0
    finally:
        watcher.stop()


def test_a_folder_that_outgrows_the_budget_gives_its_agent_back_and_says_so(home, monkeypatch) -> None:
    write_claude(home, claude_session_lines()[:2])
    monkeypatch.setenv("VOYAGER_MAX_WATCHES", "5")
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert watcher.take() is None
        project = home / ".claude" / "projects" / "-home-dev-new"
        for i in range(6):
            (project / f"s{i}" / "subagents").mkdir(parents=True)
        made = write_claude(
            home, claude_session_lines()[:2], sid="aaaaaaaa-0000-4000-8000-000000000001", project="-home-dev-new"
        )
        got = watcher.take()
        assert got is not None and got.touching("claude") is None  # no longer watched: discovered whole
        assert "no longer watched" in watcher.status and "claude" in watcher.status
        assert watcher._notify.count <= 5
        assert str(made.parent) in got.paths or made.exists()
    finally:
        watcher.stop()


def test_a_folder_made_under_a_watched_one_is_watched_and_what_it_holds_reported(home) -> None:
    write_claude(home, claude_session_lines()[:2])
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert watcher.take() is None
        made = write_claude(
            home, claude_session_lines()[:2], sid="aaaaaaaa-0000-4000-8000-000000000002", project="-home-dev-fresh"
        )
        got = watcher.take()
        assert got is not None and str(made) in got.touching("claude")
        with open(made, "a", encoding="utf-8") as fh:
            fh.write(claude_session_lines()[2])
        again = watcher.take()
        assert again is not None and again.touching("claude") == frozenset({str(made)})
    finally:
        watcher.stop()


def test_a_lost_event_queue_is_a_full_pass_said_so(home) -> None:
    write_claude(home, claude_session_lines()[:2])
    watcher = ChangeWatcher(dict(os.environ), ["claude"], full_every=1e9).start()
    try:
        assert watcher.take() is None
        out: set[str] = set()
        watcher._notify._parse(struct.pack("iIII", -1, inotify.IN_Q_OVERFLOW, 0, 0), out)  # what the kernel sends
        assert watcher.take() is None and "kernel's event queue" in (watcher.last_full or "")
        assert watcher.take() is not None  # and watching goes on
    finally:
        watcher.stop()


def _userns_ok() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-U", "-r", "sh", "-c", "echo 50 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _userns_ok(), reason="no user namespace with its own inotify limit here")
def test_a_real_small_kernel_limit_in_a_user_namespace(home, tmp_path) -> None:
    """For real: the kernel's own limit is 60 watches in a user namespace; an OpenCode folder of 600 junk folders
    and a Claude store. The watcher takes half (30), watches both agents (their session folders fit), and a
    refresh's fence shows at once."""
    write_claude(home, claude_session_lines()[:2])
    oc = _opencode_home(home / "oc", junk=600)
    script = tmp_path / "probe.py"
    script.write_text(
        "import json, os\n"
        "from voyager_sessions.scan.changes import ChangeWatcher\n"
        "w = ChangeWatcher(dict(os.environ), ['claude', 'opencode'], full_every=1e9).start()\n"
        "first = w.take()\n"
        "open(os.environ['APPEND'], 'a').write('{}\\n')\n"
        "got = w.take()\n"
        "print(json.dumps({'status': w.status, 'count': w._notify.count, 'late': w.counts['late'],\n"
        "    'claude': sorted(got.touching('claude') or []) if got else None}))\n"
        "w.stop()\n"
    )
    claude_file = next((home / ".claude" / "projects").rglob("*.jsonl"))
    env = {**os.environ, "VOYAGER_OPENCODE_HOME": str(oc), "APPEND": str(claude_file)}
    env.pop("VOYAGER_MAX_WATCHES", None)
    import sys

    res = subprocess.run(
        [
            "unshare",
            "-U",
            "-r",
            "sh",
            "-c",
            f'echo 60 > /proc/sys/user/max_inotify_watches && exec "{sys.executable}" "{script}"',
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["count"] <= 30, doc  # half the kernel's limit: the rest is for the other programs
    assert "for 2 of 2 agents" in doc["status"], doc
    assert doc["late"] == 0 and doc["claude"] == [str(claude_file)], doc
