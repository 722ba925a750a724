"""The inotify shortcut: a refresh is skipped only when nothing under the agents' homes can have changed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import codex_session_lines
from tests.serve.conftest import cli
from voyager_sessions.serve import changes
from voyager_sessions.serve.changes import SourceWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def tree(tmp_path):
    home = tmp_path / "agent"
    (home / "projects" / "a").mkdir(parents=True)
    (home / "projects" / "a" / "s.jsonl").write_text("one\n")
    return home


def test_nothing_changed_until_a_source_does(tree):
    watch = SourceWatch([tree])
    assert watch.available
    gen = watch.start_scan()
    assert watch.unchanged_since(gen) and watch.unchanged_since(gen)
    with open(tree / "projects" / "a" / "s.jsonl", "a") as fh:
        fh.write("two\n")
    assert not watch.unchanged_since(gen)
    gen = watch.start_scan()
    assert watch.unchanged_since(gen)
    (tree / "projects" / "a" / "s.jsonl").unlink()
    assert not watch.unchanged_since(gen)
    watch.close()


def test_reading_is_no_change(tree):
    watch = SourceWatch([tree])
    gen = watch.start_scan()
    (tree / "projects" / "a" / "s.jsonl").read_text()
    os.listdir(tree / "projects")
    assert watch.unchanged_since(gen)


def test_a_new_directory_is_watched_from_the_next_scan_on(tree):
    watch = SourceWatch([tree])
    gen = watch.start_scan()
    new = tree / "projects" / "b" / "deeper"
    new.mkdir(parents=True)
    assert not watch.unchanged_since(gen)  # the directory appeared: rescan (and watch it first)
    gen = watch.start_scan()
    assert watch.unchanged_since(gen)
    (new / "t.jsonl").write_text("x\n")
    assert not watch.unchanged_since(gen)


def test_a_missing_home_is_watched_through_its_ancestor_for_its_name_only(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    watch = SourceWatch([home / ".agent" / "sessions"])
    gen = watch.start_scan()
    (home / ".bash_history").write_text("ls\n")  # another name in the ancestor: no change for us
    (home / "other").mkdir()
    assert watch.unchanged_since(gen)
    (home / ".agent").mkdir()
    assert not watch.unchanged_since(gen)
    gen = watch.start_scan()  # now the ancestor is .agent, for "sessions"
    (home / ".agent" / "sessions").mkdir()
    assert not watch.unchanged_since(gen)
    gen = watch.start_scan()
    (home / ".agent" / "sessions" / "s.jsonl").write_text("x\n")
    assert not watch.unchanged_since(gen)


def test_a_named_file_is_watched_through_its_directory(tmp_path):
    db = tmp_path / "dbdir" / "opencode.db"
    db.parent.mkdir()
    db.write_bytes(b"x")
    watch = SourceWatch([db])
    gen = watch.start_scan()
    assert watch.unchanged_since(gen)
    (tmp_path / "dbdir" / "opencode.db-wal").write_bytes(b"wal")
    assert not watch.unchanged_since(gen)


def test_too_many_directories_turn_the_shortcut_off(tree, monkeypatch):
    monkeypatch.setattr(changes, "MAX_WATCHES", 2)
    watch = SourceWatch([tree])
    assert watch.start_scan() is None
    assert not watch.available and "more than 2 directories" in watch.reason
    assert not watch.unchanged_since(0)


def test_symlink_loops_are_watched_once(tree):
    (tree / "projects" / "a" / "loop").symlink_to(tree / "projects")
    watch = SourceWatch([tree])
    gen = watch.start_scan()
    assert gen is not None and watch.unchanged_since(gen)
    assert len(watch._wds) == 3  # agent, projects, a


def test_homes_names_every_agent_home(tmp_path):
    from voyager_sessions.paths import AGENT_HOMES, agent_home

    env = {"HOME": str(tmp_path), "OPENCODE_DB": str(tmp_path / "x" / "o.db")}
    got = changes.homes(env)
    assert tmp_path / ".claude" in got and tmp_path / ".codex" in got and tmp_path / "x" / "o.db" in got
    # All but the user's home itself (Aider's default: its adapter is rescanned instead).
    assert set(got) == {agent_home(name, env) for name in AGENT_HOMES} - {None, tmp_path}
    assert len(got) == len(set(got))
    unwatched = changes.unwatched_providers(env, got)
    assert "aider" in unwatched and "crush" in unwatched  # a home too broad; sessions found in projects
    assert "claude" not in unwatched and "codex" not in unwatched


@pytest.fixture
def watching(tmp_path):
    from tests.serve.conftest import ServerProcess, make_env, write_corpus

    env = make_env(tmp_path)
    write_corpus(env)
    assert cli(env, "scan", "-q", server=False).code == 0
    server = ServerProcess(env, watch=True)
    try:
        yield env, server
    finally:
        server.stop()


def test_without_watch_every_refresh_scans(served):
    env, server = served
    before = server.status()
    assert before["watch"] == "off"
    for _ in range(2):
        assert cli(env, "search", "postgres", "--json").code == 0
    after = server.status()
    assert after["refreshes_skipped"] == 0 and after["scans"] >= before["scans"] + 2


def test_the_server_skips_refreshes_nothing_needs_and_still_finds_a_new_days_session(watching):
    env, server = watching
    before = server.status()
    for _ in range(3):
        assert cli(env, "search", "postgres", "--json").code == 0
    after = server.status()
    assert after["watch"] == "inotify" and "aider" in after["unwatched_providers"]
    assert after["refreshes_skipped"] >= before["refreshes_skipped"] + 2
    # A session written into a directory that did not exist (a new day of Codex rollouts), then searched at once.
    home = Path(env["HOME"])
    day = home / ".codex" / "sessions" / "2026" / "12" / "24"
    assert not day.exists()
    sid = "0199ffff-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    lines = [line.replace("connection refused on port 5432", "wombat on christmas eve")
             for line in codex_session_lines(sid=sid)]
    day.mkdir(parents=True)  # the only event a watch sees: a directory created under a watched one
    (day / f"rollout-2026-12-24T08-00-00-{sid}.jsonl").write_text("".join(lines), encoding="utf-8")
    got = cli(env, "search", "wombat", "--json")
    assert got.code == 0 and b'"total":1' in got.out and sid.encode() in got.out, got
    assert got == cli(env, "search", "wombat", "--json", server=False)
