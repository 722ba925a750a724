"""``voyager checkpoint …`` through the root command (click's CliRunner) and as a real subprocess.

Every call goes through ``voyager_sessions.cli.app.cli``, so errors are printed by the root
group exactly as every other command's: one ``voyager: …`` line and the family's exit code.
"""

from __future__ import annotations

import errno
import io
import json
import os
import resource
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.run import run_subprocess, voyager_exe
from tests.support.sessions import claude_session_lines, write_claude
from voyager_sessions.cli.app import cli
from voyager_sessions.cli.checkpoint import Resolved
from voyager_sessions.core.model import Session, SessionRecord
from voyager_sessions.core.paths import DataDir
from voyager_sessions.store import db as store_db
from voyager_sessions.store.checkpoints import MAX_PAYLOAD_BYTES, CheckpointStore
from voyager_sessions.store.checkpoints import db as checkpoints_db
from voyager_sessions.store.db import BusyError
from voyager_sessions.store.state import StateStore

SID = "claude:aaaa-1111"


@pytest.fixture(autouse=True)
def search_hook(monkeypatch) -> list[tuple[Path, str, str]]:
    """Record calls to the search hook instead of committing a real index in every test."""
    calls: list[tuple[Path, str, str]] = []
    fake = types.ModuleType("voyager_sessions.search.checkpoints")
    fake.index_checkpoint = lambda data_dir, sid, text: calls.append((Path(data_dir), sid, text))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "voyager_sessions.search.checkpoints", fake)
    return calls


@pytest.fixture
def home(home: Path) -> Path:
    """The data dir (VOYAGER_HOME) inside the fake HOME of tests/conftest.py, not created yet."""
    return home / "voyager-data"


@pytest.fixture
def run(home: Path):
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, obj: dict | None = None):
        return runner.invoke(cli, ["checkpoint", *args], input=input, obj=obj, env={"VOYAGER_HOME": str(home)})

    return invoke


def _one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("voyager: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _index(home: Path, *sessions: Session) -> None:
    state = StateStore(DataDir(home).state_db)
    state.commit_scan(sessions=[SessionRecord(session=s, events=1) for s in sessions])
    state.close()


# -- save and status -------------------------------------------------------------------


def test_save_status_round_trip_text(run, home: Path) -> None:
    r = run(
        "save",
        SID,
        "--title",
        "Fix login",
        "--objective",
        "log in works",
        "--status",
        "in progress",
        "--summary",
        "half done",
        "--plan",
        "1. test\n2. fix",
        "--next",
        "write test",
        "--next",
        "fix bug",
        "--blocker",
        "flaky CI",
        "--file",
        "src/login.py",
        "--note",
        "ask Ana",
    )
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"saved {SID} (snapshot auto-")
    r = run("save", SID, "--done", "write test")
    assert r.exit_code == 0
    r = run("status", SID)
    assert r.exit_code == 0
    for text in (
        "Fix login",
        "in progress",
        "Objective:\n  log in works",
        "Done:\n  [x] write test",
        "Next:\n  [ ] fix bug",
        "Blockers:\n  flaky CI",
        "Files:\n  src/login.py",
        "Notes:\n  ask Ana",
        "2 snapshots",
        "  2. fix",
    ):
        assert text in r.stdout
    assert (DataDir(home).checkpoints_db.stat().st_mode & 0o777) == 0o600
    assert (home.stat().st_mode & 0o777) == 0o700


def test_unchanged_save_says_so_and_writes_nothing(run) -> None:
    run("save", SID, "--title", "t", "--next", "a")
    r = run("save", SID, "--title", "t", "--next", "a", "--json")
    doc = json.loads(r.stdout)
    assert doc["changed"] is False and doc["snapshot"] is None
    assert run("save", SID, "--next", "a").stdout.startswith(f"unchanged {SID}")
    assert json.loads(run("status", SID, "--json").stdout)["snapshots"] == 1


def test_status_without_checkpoint_exits_1_and_creates_nothing(run, home: Path) -> None:
    r = run("status", SID)
    assert r.exit_code == 1 and r.stdout.strip() == f"no checkpoint for {SID}"
    r = run("status", SID, "--json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"schema_version": 1, "session_id": SID, "checkpoint": None, "snapshots": 0}
    assert not home.exists()  # reads never create the data dir or the database


def test_empty_value_clears_a_field(run) -> None:
    run("save", SID, "--title", "t", "--status", "s")
    run("save", SID, "--status", "")
    cp = json.loads(run("status", SID, "--json").stdout)["checkpoint"]
    assert cp["title"] == "t" and cp["status"] is None


# -- --from-json -------------------------------------------------------------------------


def test_from_json_replaces_whole_payload(run, tmp_path: Path) -> None:
    run("save", SID, "--title", "old", "--status", "s", "--next", "x")
    doc = tmp_path / "cp.json"
    doc.write_text(json.dumps({"title": "new", "completed_steps": ["a"], "next_steps": ["b"]}))
    r = run("save", SID, "--from-json", str(doc), "--next", "c")  # flags apply on top
    assert r.exit_code == 0, r.stderr
    cp = json.loads(run("status", SID, "--json").stdout)["checkpoint"]
    assert (cp["title"], cp["status"], cp["completed_steps"], cp["next_steps"]) == ("new", None, ["a"], ["b", "c"])


def test_from_json_stdin_accepts_status_output(run) -> None:
    run("save", SID, "--title", "t", "--done", "d", "--file", "f.py")
    exported = json.loads(run("status", SID, "--json").stdout)["checkpoint"]
    r = run("save", "claude:copy", "--from-json", "-", input=json.dumps(exported))
    assert r.exit_code == 0, r.stderr
    copy = json.loads(run("status", "claude:copy", "--json").stdout)["checkpoint"]
    assert {k: v for k, v in copy.items() if k not in ("session_id", "created_at", "updated_at")} == {
        k: v for k, v in exported.items() if k not in ("session_id", "created_at", "updated_at")
    }


@pytest.mark.parametrize(
    "doc", ['{"title": 5}', '{"next_steps": [1]}', "{", '{"titel": "x"}', '{"schema_version": 9}', "null"]
)
def test_bad_document_is_one_error_and_writes_nothing(run, home: Path, doc: str) -> None:
    run("save", SID, "--title", "kept")
    before = DataDir(home).checkpoints_db.read_bytes(), json.loads(run("status", SID, "--json").stdout)
    line = _one_line_error(run("save", SID, "--from-json", "-", "--status", "also not written", input=doc))
    assert "invalid checkpoint document" in line
    assert json.loads(run("status", SID, "--json").stdout) == before[1]


def test_missing_json_file_is_one_error(run) -> None:
    assert "cannot read" in _one_line_error(run("save", SID, "--from-json", "/nonexistent/cp.json"))


class _Endless(io.RawIOBase):
    """A stdin that never ends (``cat /dev/zero |``), failing the test if more than ``allowed`` bytes are read."""

    def __init__(self, allowed: int) -> None:
        self.allowed, self.served = allowed, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        assert self.served <= self.allowed, f"read {self.served} bytes of an endless stdin"
        buf[:] = b" " * len(buf)
        self.served += len(buf)
        return len(buf)


def test_endless_stdin_document_is_refused_after_the_limit(run) -> None:
    stdin = _Endless(allowed=MAX_PAYLOAD_BYTES + (1 << 16))
    line = _one_line_error(run("save", SID, "--from-json", "-", input=stdin))
    assert line == f"voyager: invalid checkpoint document: larger than the limit of {MAX_PAYLOAD_BYTES} bytes"


def test_document_over_the_limit_is_refused_even_when_its_payload_is_small(run, tmp_path: Path) -> None:
    doc = tmp_path / "padded.json"
    doc.write_bytes(b'{"title": "t"}' + b" " * MAX_PAYLOAD_BYTES)
    assert "larger than the limit" in _one_line_error(run("save", SID, "--from-json", str(doc)))
    doc.write_bytes(b'{"title": "t"}'.ljust(MAX_PAYLOAD_BYTES))  # exactly at the limit: fine
    assert run("save", SID, "--from-json", str(doc)).exit_code == 0


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_document_is_refused_in_bounded_memory(home: Path) -> None:
    # Issue 15, item 12: this grew without bound (7 GB in 6 s). The address-space cap
    # turns the old behaviour into a quick MemoryError instead of a swapping machine.
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    r = subprocess.run(
        voyager_exe() + ["checkpoint", "save", SID, "--from-json", "/dev/zero"],
        env={"VOYAGER_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap,
    )
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == f"voyager: invalid checkpoint document: larger than the limit of {MAX_PAYLOAD_BYTES} bytes\n"


# -- list, snapshots, restore, undo, clear, handoff ---------------------------------------------


def test_list(run) -> None:
    assert run("list").stdout.strip() == "no checkpoints"
    assert json.loads(run("list", "--json").stdout) == {"schema_version": 1, "sessions": []}
    run("save", SID, "--title", "first", "--status", "blocked")
    run("save", "codex:bbbb", "--title", "second")
    r = run("list")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert "codex:bbbb" in lines[0] and "second" in lines[0]
    assert SID in lines[1] and "[blocked]" in lines[1]
    doc = json.loads(run("list", "--json").stdout)
    assert [s["session_id"] for s in doc["sessions"]] == ["codex:bbbb", SID]
    assert set(doc["sessions"][0]) == {"session_id", "project_id", "title", "status", "updated_at", "snapshots"}


def test_snapshots_restore_undo(run) -> None:
    for status in ("v1", "v2", "v3"):
        run("save", SID, "--status", status)
    r = run("snapshots", SID)
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("* auto-") and "v3" in lines[0]
    r = run("restore", SID)
    assert r.exit_code == 0 and "previous state kept as pre-restore-" in r.stdout
    assert json.loads(run("status", SID, "--json").stdout)["checkpoint"]["status"] == "v2"
    oldest = json.loads(run("snapshots", SID, "--json").stdout)["snapshots"][-1]["name"]
    doc = json.loads(run("restore", SID, "--snapshot", oldest, "--json").stdout)
    assert doc["changed"] and doc["restored"] == oldest and doc["checkpoint"]["status"] == "v1"
    assert set(doc) == {"schema_version", "session_id", "changed", "restored", "pre_restore", "checkpoint"}
    r = run("undo", SID)
    assert r.exit_code == 0 and r.stdout.startswith("undid restore")
    assert json.loads(run("status", SID, "--json").stdout)["checkpoint"]["status"] == "v2"
    run("undo", SID)
    assert json.loads(run("status", SID, "--json").stdout)["checkpoint"]["status"] == "v3"
    assert "no restore to undo" in _one_line_error(run("undo", SID))
    assert "no snapshot named" in _one_line_error(run("restore", SID, "--snapshot", "auto-nope"))


def test_restore_after_undo_goes_back_again(run) -> None:
    for status in ("s1", "s2", "s3"):
        run("save", SID, "--status", status)

    def step(*args: str) -> str:
        doc = json.loads(run(*args, SID, "--json").stdout)
        return doc["checkpoint"]["status"]

    assert [step("restore"), step("undo"), step("restore"), step("restore")] == ["s2", "s3", "s2", "s1"]


def test_snapshots_json_shape(run) -> None:
    run("save", SID, "--title", "t", "--next", "n")
    doc = json.loads(run("snapshots", SID, "--json").stdout)
    assert doc["schema_version"] == 1 and doc["session_id"] == SID
    (snap,) = doc["snapshots"]
    assert set(snap) == {"name", "kind", "captured_at", "restored_at", "current", "payload"}
    assert snap["kind"] == "auto" and snap["current"] is True
    assert snap["payload"] == {"title": "t", "next_steps": ["n"]}  # payloads omit empty fields


def test_restore_without_checkpoint_is_an_error(run) -> None:
    assert "has no checkpoint" in _one_line_error(run("restore", SID))


def test_clear(run) -> None:
    run("save", SID, "--title", "t")
    run("save", SID, "--title", "u")
    r = run("clear", SID)
    assert r.exit_code == 0 and r.stdout.strip() == f"cleared {SID} (2 snapshots deleted)"
    assert run("status", SID).exit_code == 1
    doc = json.loads(run("clear", SID, "--json").stdout)
    assert doc == {"schema_version": 1, "session_id": SID, "cleared": False, "snapshots": 0}


@pytest.mark.parametrize("sid", ["claude:../../etc/passwd", "claude:a/b", "claude:セッション"])
def test_handoff_writes_inside_data_dir(run, home: Path, sid: str) -> None:
    run("save", sid, "--title", "Hand me off", "--next", "step")
    r = run("handoff", sid)
    assert r.exit_code == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path.parent == home / "checkpoints" and path.name.startswith("handoff-claude")
    assert "# Hand-off: Hand me off" in path.read_text() and "- [ ] step" in path.read_text()
    doc = json.loads(run("handoff", sid, "--json").stdout)
    assert doc == {"schema_version": 1, "session_id": sid, "path": str(path)}
    assert [p for p in home.rglob("*") if p.is_file() and p.suffix == ".md"] == [path]


def test_handoff_without_checkpoint_is_an_error(run) -> None:
    assert "no checkpoint" in _one_line_error(run("handoff", SID))


# -- resolving SESSION --------------------------------------------------------------------------


def test_resolves_native_ids_and_prefixes_through_the_index(run, home: Path) -> None:
    _index(
        home,
        Session(id="claude:abc123", provider="claude", native_id="abc123", cwd="/work/repo"),
        Session(id="codex:abd999", provider="codex", native_id="abd999"),
    )
    assert run("save", "abc1", "--title", "by prefix").exit_code == 0
    cp = json.loads(run("status", "abc123", "--json").stdout)["checkpoint"]
    assert cp["session_id"] == "claude:abc123" and cp["title"] == "by prefix"
    assert cp["project_id"] == "/work/repo"  # the session's cwd names its project
    line = _one_line_error(run("status", "ab"))
    assert line == "voyager: 'ab' is ambiguous: claude:abc123, codex:abd999; give more of the id"
    assert (
        _one_line_error(run("save", "zzz", "--title", "t")) == "voyager: no session matches 'zzz' (see `voyager list`)"
    )
    # Not indexed (yet) but a full Voyager id: accepted as given, with the default project.
    doc = json.loads(run("save", "opencode:new", "--title", "t", "--json").stdout)
    assert doc["checkpoint"]["project_id"] == "default"


def test_show_and_checkpoint_say_no_match_and_ambiguous_alike(run, home: Path) -> None:
    fake_home = home.parent
    for sid in ("5f1c0000-aaaa", "5f1c0000-bbbb"):
        write_claude(fake_home, claude_session_lines(sid), sid=sid)
    assert CliRunner().invoke(cli, ["scan", "-q"]).exit_code == 0
    for ref in ("zzz", "5f1c"):
        shown = CliRunner().invoke(cli, ["show", ref])
        saved = run("save", ref, "--title", "t")
        assert _one_line_error(shown) == _one_line_error(saved)
    assert "ambiguous: claude:5f1c0000-aaaa, claude:5f1c0000-bbbb;" in _one_line_error(saved)
    assert not DataDir(home).checkpoints_db.exists() or run("list", "--json").stdout.count("session_id") == 0


def test_resolves_against_checkpoints_when_the_index_does_not_know(run) -> None:
    run("save", "claude:only-here", "--title", "t")
    r = run("status", "only-h")
    assert r.exit_code == 0 and "claude:only-here" in r.stdout


def test_project_stays_bound_after_the_index_learns_the_cwd(run, home: Path) -> None:
    run("save", "claude:late", "--title", "before scan")
    _index(home, Session(id="claude:late", provider="claude", native_id="late", cwd="/elsewhere"))
    assert run("save", "late", "--status", "after scan").exit_code == 0
    cp = json.loads(run("status", "late", "--json").stdout)["checkpoint"]
    assert cp["project_id"] == "default" and cp["status"] == "after scan"


def test_unusable_index_falls_back_with_a_warning(run, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "state.db").write_bytes(b"garbage" * 200)
    r = run("save", "claude:x", "--title", "t")
    assert r.exit_code == 0 and "warning: session index unavailable" in r.stderr


def test_injected_resolver_is_used(run) -> None:
    seen = []

    def resolver(data_dir: Path, ref: str) -> Resolved:
        seen.append(ref)
        return Resolved("custom:id", "/proj")

    r = run("save", "anything", "--title", "t", "--json", obj={"resolver": resolver})
    assert seen == ["anything"] and json.loads(r.stdout)["checkpoint"]["project_id"] == "/proj"


@pytest.mark.parametrize("ref", ["", "   ", "a\x00b"])
def test_malformed_session_ref_is_an_error(run, ref: str) -> None:
    _one_line_error(run("save", ref, "--title", "t"))


@pytest.mark.parametrize("ref", ["claude:", ":x", ":"])
def test_half_a_voyager_id_is_malformed_not_a_prefix_or_a_new_session(run, home: Path, ref: str) -> None:
    _index(home, Session(id="claude:only-one", provider="claude", native_id="only-one"))
    for command in (("save", ref, "--title", "t"), ("status", ref), ("clear", ref)):
        line = _one_line_error(run(*command))
        assert line == f"voyager: session {ref!r} is malformed: expected <provider>:<id>, like claude:4f2a"
    assert run("list", "--json").stdout.count("session_id") == 0


# -- search hook ----------------------------------------------------------------------------------


def test_changes_call_the_search_hook(run, home: Path, search_hook: list) -> None:
    calls = search_hook
    run("save", SID, "--objective", "ship it", "--next", "n1")
    run("save", SID, "--next", "n1")  # unchanged: no call
    run("save", SID, "--status", "s2")
    run("restore", SID)
    run("undo", SID)
    run("clear", SID)
    run("clear", SID)  # nothing cleared: no call
    assert [c[1] for c in calls] == [SID] * 5
    assert calls[0][0] == home and "Objective: ship it" in calls[0][2] and "Next: n1" in calls[0][2]
    assert "s2" in calls[1][2] and "s2" not in calls[2][2] and "s2" in calls[3][2]
    assert calls[4][2] == ""  # empty text: remove the session's checkpoint from the index


def test_no_search_module_means_no_hook(run, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "voyager_sessions.search.checkpoints", None)  # import raises ModuleNotFoundError
    r = run("save", SID, "--title", "t")
    assert r.exit_code == 0 and r.stderr == ""


def test_failing_search_hook_is_a_warning_not_a_lost_save(run, monkeypatch) -> None:
    fake = types.ModuleType("voyager_sessions.search.checkpoints")

    def broken(*args: object) -> None:
        raise RuntimeError("index is\nbroken")

    fake.index_checkpoint = broken  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "voyager_sessions.search.checkpoints", fake)
    r = run("save", SID, "--title", "t")
    assert r.exit_code == 0 and r.stdout.startswith("saved")
    assert r.stderr.strip() == "warning: checkpoint saved, but the search index was not updated: index is broken"


# -- environment errors ------------------------------------------------------------------------------


def test_data_dir_that_is_a_file(run, home: Path) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("")
    assert "is not a directory" in _one_line_error(run("save", SID, "--title", "t"))


def test_newer_database_is_refused(run, home: Path) -> None:
    run("save", SID, "--title", "t")
    with CheckpointStore.open(DataDir(home).checkpoints_db) as store:
        store.conn.execute("PRAGMA user_version = 42")
    line = _one_line_error(run("status", SID))
    assert "newer than this Voyager knows" in line and "upgrade Voyager" in line


def test_busy_database_exits_3(run, monkeypatch) -> None:
    def busy(self, *args: object) -> None:
        raise BusyError("database stayed busy: database is locked")

    monkeypatch.setattr(CheckpointStore, "save", busy)
    _one_line_error(run("save", SID, "--title", "t"), code=3)


def _disk_full(*args: object) -> None:
    raise sqlite3.OperationalError("database or disk is full")  # what sqlite3 raises for SQLITE_FULL


def test_full_disk_on_save_is_one_line_and_loses_nothing(run, home: Path, monkeypatch) -> None:
    # Issue 15, item 16: a full disk said "disk I/O error"; the previous checkpoint must survive.
    run("save", SID, "--title", "kept", "--next", "n")
    before = run("status", SID, "--json").stdout
    monkeypatch.setattr(CheckpointStore, "_write", _disk_full)  # after the snapshot row, before COMMIT
    line = _one_line_error(run("save", SID, "--title", "lost", "--done", "n"))
    assert line == f"voyager: no space left on device ({DataDir(home).checkpoints_db})"
    monkeypatch.undo()
    assert run("status", SID, "--json").stdout == before  # same payload, same updated_at, one snapshot


def test_full_disk_when_sqlite_says_only_io_error(run, home: Path, monkeypatch) -> None:
    # Growing the WAL index on a full disk fails as SQLITE_IOERR_SHMSIZE ("disk I/O error"):
    # the filesystem's free space tells a full disk from a failing one.
    run("save", SID, "--title", "kept")

    def io_error(conn: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store_db, "_enable_wal", io_error)
    monkeypatch.setattr(store_db, "free_bytes", lambda path: 0)
    line = _one_line_error(run("save", SID, "--title", "lost"))
    assert line == f"voyager: no space left on device ({DataDir(home).checkpoints_db})"
    monkeypatch.setattr(store_db, "free_bytes", lambda path: 10 << 30)
    line = _one_line_error(run("save", SID, "--title", "lost"))
    assert line == f"voyager: cannot open {DataDir(home).checkpoints_db}: disk I/O error"
    monkeypatch.undo()
    assert json.loads(run("status", SID, "--json").stdout)["checkpoint"]["title"] == "kept"


def test_full_disk_on_handoff_is_one_line_and_keeps_the_old_file(run, home: Path, monkeypatch) -> None:
    run("save", SID, "--title", "first")
    path = Path(run("handoff", SID).stdout.strip())
    old = path.read_bytes()
    run("save", SID, "--title", "second")
    real_fdopen = os.fdopen

    class FullFile:
        def __init__(self, fd: int, mode: str) -> None:
            self.f = real_fdopen(fd, mode)

        def __enter__(self) -> FullFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoints_db.os, "fdopen", FullFile)
    line = _one_line_error(run("handoff", SID))
    monkeypatch.undo()
    assert line == f"voyager: no space left on device ({path})"
    assert path.read_bytes() == old and sorted(p.name for p in path.parent.iterdir()) == [path.name]


# -- as a real process ---------------------------------------------------------------------------------


def test_subprocess_round_trip_and_clean_errors(home: Path) -> None:
    env = {"VOYAGER_HOME": str(home), "PATH": "/usr/bin:/bin"}

    def voyager(*args: str, input: str | None = None):
        return run_subprocess("checkpoint", *args, env=env, input=input)

    r = voyager("save", SID, "--title", "from a process", "--done", "one", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["checkpoint"]["completed_steps"] == ["one"]
    r = voyager("status", SID)
    assert r.returncode == 0 and "from a process" in r.stdout and r.stderr == ""
    r = voyager("save", SID, "--from-json", "-", input='{"title": ["no"]}')
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("voyager: invalid checkpoint document")
    r = voyager("save", "nothing-like-an-id", "--title", "t")
    assert (r.returncode, r.stderr) == (2, "voyager: no session matches 'nothing-like-an-id' (see `voyager list`)\n")
