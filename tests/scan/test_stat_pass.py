"""The stat pass's shortcuts never cost a change: remembered folder listings, rows compared in bulk."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support.sessions import CLAUDE_SID, claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.api import SearchRequest, search
from voyager_sessions.core.paths import data_dir
from voyager_sessions.ingest.files import FolderMemory
from voyager_sessions.scan import scan

OTHER_SID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


@pytest.fixture
def remembering(monkeypatch) -> None:
    """Folders remembered as soon as they are listed: a test makes its folders a moment before
    scanning, and the scan would otherwise wait for them to settle (``FolderMemory.SETTLED_NS``).
    Each scan takes far longer than a clock tick, so a change after it still gets a later time."""
    monkeypatch.setattr(FolderMemory, "SETTLED_NS", 0)


@pytest.fixture
def listed(monkeypatch) -> list[str]:
    """Every folder ``os.listdir`` is asked for from now on."""
    calls: list[str] = []
    real = os.listdir

    def listdir(path="."):
        calls.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    return calls


def _sessions(q: str) -> set[str]:
    res = search(SearchRequest(query=q, refresh=False), data_dir=data_dir())
    return {h.session_id for h in res.hits}


def _settle() -> None:
    """Two scans: the first reads everything, the second finds it all unchanged with every folder remembered."""
    scan(data_dir())
    again = scan(data_dir())
    assert again.touched == 0


def test_an_unchanged_folder_is_not_listed_again(home, corpus, remembering, monkeypatch):
    scan(data_dir())
    calls: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": calls.append(os.fspath(path)) or real(path))
    again = scan(data_dir())
    assert again.touched == 0 and again.unchanged == 2
    assert not [c for c in calls if c.startswith(str(home / ".claude")) or c.startswith(str(home / ".codex"))]


def test_a_folder_changed_moments_ago_is_listed_again(home, corpus, listed):
    # Without the test's shortcut: a folder whose last change is this recent could still be racing one.
    scan(data_dir())
    listed.clear()
    scan(data_dir())
    assert str(corpus["claude"].parent) in listed


def test_a_new_session_in_a_folder_whose_mtime_was_restored_is_found(home, corpus, remembering):
    _settle()
    project = corpus["claude"].parent
    before = project.stat()
    write_claude(home, claude_session_lines(sid=OTHER_SID, cwd="/home/dev/other"), sid=OTHER_SID)
    os.utime(project, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -d`, rsync -t or tar would
    assert project.stat().st_mtime_ns == before.st_mtime_ns
    s = scan(data_dir())
    assert s.new == 1 and s.failed == 0
    assert any(OTHER_SID in sid for sid in _sessions("parse_config_v2"))


def test_an_append_within_the_same_second_is_found(home, remembering):
    lines = claude_session_lines()
    path = write_claude(home, lines[:3])
    _settle()
    st = path.stat()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[3:]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same time stamp as the read before
    s = scan(data_dir())
    assert s.grown == 1 and s.failed == 0
    assert _sessions("parse_config_v2")


def test_a_session_in_a_remembered_subfolder_is_found(home, corpus, remembering):
    # A Claude Code subagent transcript appears under <session>/subagents/, a folder that already existed:
    # neither the project folder nor <session>/ changes, only subagents/ does.
    subagents = corpus["claude"].parent / CLAUDE_SID / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-a1.meta.json").write_text("{}", encoding="utf-8")
    _settle()
    project_ctime = corpus["claude"].parent.stat().st_ctime_ns
    (subagents / "agent-a1.jsonl").write_text(
        "".join(claude_session_lines(sid=OTHER_SID, cwd="/home/dev/shop")), encoding="utf-8"
    )
    assert corpus["claude"].parent.stat().st_ctime_ns == project_ctime
    s = scan(data_dir())
    assert s.new == 1 and s.failed == 0


def test_a_removed_folder_is_seen_and_a_new_one_in_its_place_found(home, corpus, remembering):
    _settle()
    day = corpus["codex"].parent
    shutil.rmtree(day)
    s = scan(data_dir())
    assert s.removed == 1
    write_codex(home, codex_session_lines())
    s = scan(data_dir())
    assert s.new == 1 and s.failed == 0


def test_a_file_replaced_by_a_folder_of_the_same_name_is_walked(home, corpus, remembering):
    # An entry's kind changes only by a removal and a creation, which the folder records.
    _settle()
    project = corpus["claude"].parent
    side = project / "notes.jsonl.d"
    side.write_text("x", encoding="utf-8")
    _settle()
    side.unlink()
    side.mkdir()
    write_claude(home, claude_session_lines(sid=OTHER_SID), sid=OTHER_SID, project="-home-dev-shop/notes.jsonl.d")
    s = scan(data_dir())
    assert s.new == 1 and s.failed == 0


def test_a_no_op_scan_with_folders_remembered_writes_nothing(home, corpus, remembering):
    import sqlite3

    from voyager_sessions.core.paths import DataDir

    _settle()
    watcher = sqlite3.connect(DataDir(data_dir()).state_db)
    try:
        version = watcher.execute("PRAGMA data_version").fetchone()[0]
        assert scan(data_dir()).touched == 0
        # data_version moves when another connection commits: no listing, no row, no scan record written.
        assert watcher.execute("PRAGMA data_version").fetchone()[0] == version
        assert watcher.execute("SELECT count(*) FROM folders").fetchone()[0] >= 2
    finally:
        watcher.close()
