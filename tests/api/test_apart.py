"""The refresh the picker runs in a process of its own (``api.apart``): it indexes what changed, says "busy" as
a scan does, and a failure is one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.api import SearchRequest, search
from voyager_sessions.api.apart import refresh_apart
from voyager_sessions.core.errors import Busy, VoyagerError
from voyager_sessions.core.paths import data_dir


def _sessions(query: str) -> int:
    return search(SearchRequest(query=query, sessions=True, refresh=False)).total


def test_a_refresh_apart_indexes_what_changed_and_leaves_the_agents_files_as_they_were(home: Path) -> None:
    claude = write_claude(home, claude_session_lines())
    refresh_apart(data_dir())
    assert _sessions("数据库") == 1
    codex = write_codex(home, codex_session_lines())
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (claude, codex)}
    listing = sorted(os.listdir(claude.parent)), sorted(os.listdir(codex.parent))
    refresh_apart(data_dir())
    assert search(SearchRequest(query="", sessions=True, refresh=False, providers=["codex"])).total == 1
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (claude, codex)} == before
    assert (sorted(os.listdir(claude.parent)), sorted(os.listdir(codex.parent))) == listing


def test_a_refresh_apart_while_a_scan_writes_is_busy(home: Path) -> None:
    from voyager_sessions.core.lock import writer_lock

    write_claude(home, claude_session_lines())
    with writer_lock(data_dir()), pytest.raises(Busy):
        refresh_apart(data_dir())


def test_a_failing_refresh_apart_is_one_line(home: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(VoyagerError) as err:
        refresh_apart(not_a_dir / "data")
    assert str(err.value) and "\n" not in str(err.value) and "Traceback" not in str(err.value)
