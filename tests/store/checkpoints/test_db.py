"""The checkpoint store (``store/checkpoints/db.py``): its eight invariants, history, durability, concurrency."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from voyager_sessions.core.errors import DiskFull
from voyager_sessions.store.checkpoints import CheckpointError, CheckpointPatch, CheckpointStore, model, schema
from voyager_sessions.store.checkpoints.model import MAX_PAYLOAD_BYTES
from voyager_sessions.store.db import NewerSchemaError, StoreError, connect

WORKERS = Path(__file__).with_name("_workers.py")
SID = "claude:0001"
OTHER = "codex:0002"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.db"


@pytest.fixture
def store(db_path: Path):
    s = CheckpointStore.open(db_path)
    yield s
    s.close()


def P(**kw) -> CheckpointPatch:
    return CheckpointPatch(**kw)


# -- basics -------------------------------------------------------------------------


def test_save_then_load_round_trips(store: CheckpointStore) -> None:
    r = store.save(
        SID,
        "/repo",
        P(
            title="Fix login",
            objective="users can log in",
            status="in progress",
            summary="s",
            current_plan="p",
            notes="n",
            add_next=("a", "b"),
            add_blockers=("x",),
            add_files=("src/a.py",),
        ),
    )
    assert r.changed and r.snapshot and r.checkpoint
    cp = store.load(SID)
    assert cp == r.checkpoint
    assert (cp.title, cp.next_steps, cp.blockers, cp.files_touched) == ("Fix login", ("a", "b"), ("x",), ("src/a.py",))
    assert cp.project_id == "/repo" and cp.schema_version == 1 and cp.created_at == cp.updated_at
    assert store.load("claude:unknown") is None


def test_database_is_private_and_wal(db_path: Path, store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="t"))
    assert (db_path.stat().st_mode & 0o777) == 0o600
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


# -- invariant 1: session isolation -----------------------------------------------------


@pytest.mark.parametrize("bad", [None, "", "   ", " lead", "trail ", "a\x00b", "a\nb", 42, b"claude:1", "x" * 600])
def test_bad_session_ids_raise_and_never_bind(store: CheckpointStore, bad: object) -> None:
    calls = [
        lambda: store.save(bad, "p", P(title="t")),  # type: ignore[arg-type]
        lambda: store.load(bad),  # type: ignore[arg-type]
        lambda: store.snapshots(bad),  # type: ignore[arg-type]
        lambda: store.restore(bad),  # type: ignore[arg-type]
        lambda: store.undo(bad),  # type: ignore[arg-type]
        lambda: store.clear(bad),  # type: ignore[arg-type]
        lambda: store.status(bad),  # type: ignore[arg-type]
        lambda: store.project_of(bad),  # type: ignore[arg-type]
        lambda: store.handoff(bad, Path("/nonexistent")),  # type: ignore[arg-type]
        lambda: store.save(SID, bad, P(title="t")),  # type: ignore[arg-type]  (project id too)
    ]
    for call in calls:
        with pytest.raises(CheckpointError):
            call()
    for table in ("sessions", "checkpoints", "snapshots"):
        assert store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


@pytest.mark.parametrize("bad", ["claude:", ":x", ":"])
def test_half_a_provider_id_is_not_a_session_id(store: CheckpointStore, bad: str) -> None:
    for call in (
        lambda: store.save(bad, "p", P(title="t")),
        lambda: store.load(bad),
        lambda: store.clear(bad),
        lambda: store.find_sessions(bad),
    ):
        with pytest.raises(CheckpointError, match="malformed"):
            call()
    assert store.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_sessions_are_isolated(store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="mine", add_next=("a",)))
    store.save(SID, "p", P(title="mine 2"))
    store.save(OTHER, "p", P(title="theirs"))
    assert store.load(OTHER).title == "theirs"
    assert {s.payload.title for s in store.snapshots(OTHER)} == {"theirs"}
    store.restore(SID)
    assert store.load(OTHER).title == "theirs"
    with pytest.raises(CheckpointError, match="no earlier snapshot"):
        store.restore(OTHER)
    with pytest.raises(CheckpointError, match="no snapshot named"):
        store.restore(OTHER, store.snapshots(SID)[0].name)  # another session's snapshot is invisible
    assert store.clear(SID).cleared
    assert store.load(SID) is None and store.snapshots(SID) == []
    assert store.load(OTHER).title == "theirs" and len(store.snapshots(OTHER)) == 1
    assert store.conn.execute("SELECT count(*) FROM snapshots WHERE session_id IS NULL").fetchone()[0] == 0


def test_null_ids_are_rejected_by_the_schema_too(store: CheckpointStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute("INSERT INTO sessions (id, project_id, created_at) VALUES (NULL, 'p', 0)")


# -- invariant 2: atomic read-merge-write ----------------------------------------------


def test_two_handles_saving_different_fields_lose_neither(db_path: Path) -> None:
    a, b = CheckpointStore.open(db_path), CheckpointStore.open(db_path)
    try:
        a.save(SID, "p", P(title="from a"))
        b.save(SID, "p", P(status="from b"))  # b never loaded; the merge happens under the lock
        a.save(SID, "p", P(add_next=("a1",)))
        b.save(SID, "p", P(add_next=("b1",)))
        cp = a.load(SID)
        assert (cp.title, cp.status, cp.next_steps) == ("from a", "from b", ("a1", "b1"))
    finally:
        a.close()
        b.close()


def test_save_holds_the_write_lock_while_merging(db_path: Path, store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="t"))
    other = sqlite3.connect(db_path, isolation_level=None, timeout=0)
    seen = []
    real_merge = model.merge

    def spying_merge(current, patch):
        # While save() merges, no other connection may start a write.
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        seen.append(True)
        return real_merge(current, patch)

    model.merge = spying_merge
    try:
        store.save(SID, "p", P(status="s"))
    finally:
        model.merge = real_merge
        other.close()
    assert seen == [True]


def test_four_writer_processes_lose_no_field_or_step(tmp_path: Path, db_path: Path) -> None:
    CheckpointStore.open(db_path).close()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    n = 15
    fields = ["title", "objective", "status", "summary"]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKERS),
                "writer",
                str(db_path),
                str(barrier),
                f"w{i}",
                fields[i],
                SID,
                f"own:{i}",
                str(n),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    _release(barrier, 4, procs)
    for p in procs:
        assert p.wait(60) == 0, p.stderr.read()
    with CheckpointStore.open(db_path) as store:
        cp = store.load(SID)
        assert [getattr(cp, f) for f in fields] == [f"w{i}-{n - 1}" for i in range(4)]
        assert sorted(cp.next_steps) == sorted(f"w{i}-next-{k}" for i in range(4) for k in range(n))
        for i in range(4):
            own = store.load(f"own:{i}")
            assert own.title == f"w{i}-{n - 1}" and own.completed_steps == tuple(f"w{i}-done-{k}" for k in range(n))
        names = store.conn.execute("SELECT name FROM snapshots").fetchall()
        assert len(names) == len(set(names))
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _release(barrier: Path, count: int, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + 30
    while len(list(barrier.glob("ready-*"))) < count:
        for p in procs:
            if p.poll() is not None:
                pytest.fail(f"worker exited early: {p.stderr.read() if p.stderr else ''}")
        assert time.monotonic() < deadline, "workers never got ready"
        time.sleep(0.005)
    (barrier / "go").touch()


# -- invariant 3: no phantom progress ---------------------------------------------------


def test_unchanged_save_writes_nothing(store: CheckpointStore) -> None:
    first = store.save(SID, "p", P(title="t", add_done=("a",), add_next=("b",)))
    changes = store.conn.total_changes
    for patch in (
        P(),
        P(title="t"),
        P(add_done=("a",)),
        P(add_next=("b",)),
        P(replace=first.checkpoint.payload()),
        P(add_done=(" a ",)),
    ):
        r = store.save(SID, "p", patch)
        assert not r.changed and r.snapshot is None and r.checkpoint == first.checkpoint
    assert store.conn.total_changes == changes
    assert store.load(SID).updated_at == first.checkpoint.updated_at
    assert len(store.snapshots(SID)) == 1


def test_empty_first_save_creates_nothing(store: CheckpointStore) -> None:
    r = store.save(SID, "p", P(title=""))
    assert not r.changed and r.checkpoint is None
    assert store.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_restore_to_equal_payload_writes_nothing(store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="a"))
    name = store.save(SID, "p", P(title="b")).snapshot
    changes = store.conn.total_changes
    r = store.restore(SID, name)
    assert not r.changed and r.pre_restore is None
    assert store.conn.total_changes == changes


# -- invariant 4: history, restore, undo, pruning --------------------------------------


def test_every_changed_save_is_a_snapshot_and_current_is_marked(store: CheckpointStore) -> None:
    names = [store.save(SID, "p", P(status=f"v{i}")).snapshot for i in range(3)]
    snaps = store.snapshots(SID)
    assert [s.name for s in snaps] == names[::-1]
    assert [s.current for s in snaps] == [True, False, False]
    assert all(s.kind == "auto" for s in snaps)
    assert [s.payload.status for s in snaps] == ["v2", "v1", "v0"]


def test_default_restore_walks_back_and_undo_walks_forward(store: CheckpointStore) -> None:
    for i in range(1, 4):
        store.save(SID, "p", P(status=f"v{i}"))
    r1 = store.restore(SID)
    assert r1.changed and r1.checkpoint.status == "v2" and r1.pre_restore.startswith("pre-restore-")
    pre = [s for s in store.snapshots(SID) if s.kind == "pre-restore"]
    assert [s.payload.status for s in pre] == ["v3"]  # the replaced state was saved first
    assert store.restore(SID).checkpoint.status == "v1"  # again: one further back
    with pytest.raises(CheckpointError, match="no earlier snapshot"):
        store.restore(SID)
    assert store.undo(SID).checkpoint.status == "v2"  # undo the second restore
    assert store.undo(SID).checkpoint.status == "v3"  # then the first
    with pytest.raises(CheckpointError, match="no restore to undo"):
        store.undo(SID)
    assert store.load(SID).status == "v3"


def test_restore_after_undo_walks_back_again(store: CheckpointStore) -> None:
    # Issue 15, item 11: after an undo, restore answered "unchanged" with the current
    # version forever instead of going to the newest older snapshot that differs.
    for status in ("s1", "s2", "s3"):
        store.save(SID, "p", P(status=status))
    assert store.restore(SID).checkpoint.status == "s2"
    assert store.undo(SID).checkpoint.status == "s3"
    again = store.restore(SID)
    assert again.changed and again.checkpoint.status == "s2" and again.pre_restore
    assert store.restore(SID).checkpoint.status == "s1"
    assert store.undo(SID).checkpoint.status == "s2"
    assert store.undo(SID).checkpoint.status == "s3"


def test_default_restore_from_a_restored_pre_restore_snapshot_skips_its_equal(store: CheckpointStore) -> None:
    store.save(SID, "p", P(status="a"))
    store.save(SID, "p", P(status="b"))
    pre = store.restore(SID).pre_restore  # -> a; the pre-restore snapshot holds b
    assert store.restore(SID, pre).checkpoint.status == "b"
    # The auto snapshot just older than that pre-restore one also holds b: skip it.
    r = store.restore(SID)
    assert r.changed and r.checkpoint.status == "a"


def test_restore_by_name_and_save_after_restore(store: CheckpointStore) -> None:
    first = store.save(SID, "p", P(title="t", add_next=("a",))).snapshot
    store.save(SID, "p", P(add_done=("a",)))
    r = store.restore(SID, first)
    assert r.restored == first and r.checkpoint.next_steps == ("a",) and r.checkpoint.completed_steps == ()
    # A save merges into the restored state, not into the replaced one.
    cp = store.save(SID, "p", P(add_next=("b",))).checkpoint
    assert cp.next_steps == ("a", "b") and cp.completed_steps == ()
    assert store.load(SID).created_at == r.checkpoint.created_at
    with pytest.raises(CheckpointError, match="no snapshot named"):
        store.restore(SID, "auto-0-0")


def test_pruning_never_removes_undo(db_path: Path) -> None:
    with CheckpointStore.open(db_path, history_limit=3) as store:
        for i in range(6):
            store.save(SID, "p", P(status=f"v{i}"))
        assert len(store.snapshots(SID)) == 3
        oldest = store.snapshots(SID)[-1]
        store.restore(SID, oldest.name)  # restore the oldest kept version
        for i in range(6, 14):
            store.save(SID, "p", P(status=f"v{i}"))
        kinds = [s.kind for s in store.snapshots(SID)]
        assert kinds.count("pre-restore") == 1 and kinds.count("auto") == 3
        assert store.undo(SID).checkpoint.status == "v5"  # the state the restore replaced


def test_pruning_keeps_the_snapshot_the_current_state_came_from(db_path: Path) -> None:
    with CheckpointStore.open(db_path, history_limit=2) as store:
        for i in range(3):
            store.save(SID, "p", P(status=f"v{i}"))
        store.restore(SID)  # -> v1, which is older than the two newest (pre-restore v2, auto v2)
        snaps = store.snapshots(SID)
        assert [(s.kind, s.payload.status, s.current) for s in snaps] == [
            ("pre-restore", "v2", False),
            ("auto", "v2", False),
            ("auto", "v1", True),
        ]
        with pytest.raises(CheckpointError, match="no earlier snapshot"):
            store.restore(SID)  # v0 was pruned before the restore


def test_clear_removes_everything_and_unbinds_the_project(store: CheckpointStore) -> None:
    store.save(SID, "p1", P(title="t"))
    store.save(SID, "p1", P(title="u"))
    r = store.clear(SID)
    assert r.cleared and r.snapshots == 2
    assert store.load(SID) is None and store.snapshots(SID) == [] and store.project_of(SID) is None
    assert not store.clear(SID).cleared
    assert store.save(SID, "p2", P(title="fresh")).checkpoint.project_id == "p2"


def test_list_is_newest_first(store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="one"))
    store.save(OTHER, "q", P(title="two", status="s"))
    rows = store.list()
    assert [r.session_id for r in rows] == [OTHER, SID]
    assert rows[0].status == "s" and rows[0].snapshots == 1
    assert [r.session_id for r in store.list("p")] == [SID]


# -- invariant 5: snapshot names -------------------------------------------------------


def test_snapshot_names_are_unique_within_one_millisecond(store: CheckpointStore, monkeypatch) -> None:
    monkeypatch.setattr(schema.time, "time_ns", lambda: 1_700_000_000_000_000_000)
    names = [store.save(SID, "p", P(status=str(i))).snapshot for i in range(5)]
    assert len(set(names)) == 5
    assert all(re.fullmatch(rf"auto-1700000000000-{os.getpid()}\d{{4}}", n) for n in names)


def test_snapshot_name_collision_is_refused_by_the_schema(store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="t"))
    row = store.conn.execute(
        "SELECT session_id, project_id, name, kind, captured_at, payload, schema_version FROM snapshots"
    ).fetchone()
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        store.conn.execute(
            "INSERT INTO snapshots (session_id, project_id, name, kind, captured_at, payload, schema_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            row,
        )


def test_a_colliding_name_is_retried_not_replaced(store: CheckpointStore, monkeypatch) -> None:
    names = iter(["auto-1-1", "auto-1-1", "auto-1-2"])
    monkeypatch.setattr(schema, "snapshot_name", lambda kind: next(names))
    assert store.save(SID, "p", P(title="a")).snapshot == "auto-1-1"
    assert store.save(SID, "p", P(title="b")).snapshot == "auto-1-2"
    assert len(store.snapshots(SID)) == 2


# -- invariant 6: derived hand-off files ------------------------------------------------


@pytest.mark.parametrize(
    "sid", ["../../etc/passwd", "a/b", "a_b", "claude:セッション-é", "..", "/abs/path", "x" * 500, "a\\b"]
)
def test_handoff_names_stay_inside_the_directory(tmp_path: Path, store: CheckpointStore, sid: str) -> None:
    out = tmp_path / "handoffs"
    out.mkdir()
    store.save(sid, "p", P(title="t\nsecond line", add_next=("n",)))
    path = store.handoff(sid, out)
    assert path.parent == out and path.exists()
    assert re.fullmatch(r"handoff-[A-Za-z0-9_-]+-[0-9a-f]{12}\.md", path.name)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".md") == [path.name]
    text = path.read_text()
    assert text.startswith("# Hand-off: t second line\n") and "- [ ] n" in text
    assert (path.stat().st_mode & 0o777) == 0o600


def test_handoff_is_never_read_back(tmp_path: Path, store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="real"))
    path = store.handoff(SID, tmp_path)
    path.write_text("# Hand-off: forged\n")
    assert store.load(SID).title == "real"
    assert "real" in store.handoff(SID, tmp_path).read_text()  # rewritten from rows
    with pytest.raises(CheckpointError, match="no checkpoint"):
        store.handoff(OTHER, tmp_path)


# -- invariant 7: a row cannot claim another project ------------------------------------


def test_rows_cannot_claim_a_project_their_session_is_not_in(store: CheckpointStore) -> None:
    store.save(SID, "/repo/a", P(title="t"))
    with pytest.raises(CheckpointError, match="belongs to project '/repo/a'"):
        store.save(SID, "/repo/b", P(title="u"))
    assert store.project_of(SID) == "/repo/a"
    store.conn.execute("INSERT INTO projects (id, created_at) VALUES ('/repo/b', 0)")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        store.conn.execute("UPDATE checkpoints SET project_id = '/repo/b' WHERE session_id = ?", (SID,))
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        store.conn.execute(
            "INSERT INTO snapshots (session_id, project_id, name, kind, captured_at, payload, schema_version) "
            "VALUES (?, '/repo/b', 'manual-x', 'manual', 0, '{}', 1)",
            (SID,),
        )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        store.conn.execute(
            "INSERT INTO snapshots (session_id, project_id, name, kind, captured_at, payload, schema_version) "
            "VALUES (?, '/repo/a', 'odd', 'odd', 0, '{}', 1)",
            (SID,),
        )
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


# -- invariant 8: schema versioning -----------------------------------------------------


def test_schema_version_and_newer_database_refused(db_path: Path) -> None:
    with CheckpointStore.open(db_path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(schema.MIGRATIONS)
        store.conn.execute("PRAGMA user_version = 99")
    with pytest.raises(NewerSchemaError, match="schema version 99, newer than this Voyager knows") as info:
        CheckpointStore.open(db_path)
    assert "\n" not in str(info.value)


def test_a_failing_migration_leaves_the_database_untouched(db_path: Path) -> None:
    CheckpointStore.open(db_path).close()

    def m002_broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        connect(db_path, [*schema.MIGRATIONS, m002_broken])
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    conn.close()


def test_six_concurrent_first_opens_create_the_schema_once(tmp_path: Path, db_path: Path) -> None:
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS), "first_open", str(db_path), str(barrier)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    _release(barrier, 6, procs)
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert out.strip() == str(len(schema.MIGRATIONS))
    conn = sqlite3.connect(db_path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    assert tables == ["checkpoints", "projects", "sessions", "snapshots"]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


# -- durability -------------------------------------------------------------------------


def test_sigkill_inside_a_transaction_keeps_committed_and_drops_uncommitted(db_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(WORKERS), "crash", str(db_path), SID],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "in-transaction", proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    with CheckpointStore.open(db_path) as store:
        cp = store.load(SID)
        assert cp.title == "committed" and cp.completed_steps == ("first",)
        assert len(store.snapshots(SID)) == 1
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert store.save(SID, "proj", P(title="after crash")).changed  # and the lock is free


def test_full_disk_is_a_clear_error_and_writes_nothing(store: CheckpointStore) -> None:
    store.save(SID, "p", P(title="small"))
    before = store.load(SID)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")  # the database cannot grow: a full disk
    with pytest.raises(DiskFull) as info:
        store.save(SID, "p", P(notes="x" * 200_000))
    assert str(info.value) == f"no space left on device ({store.path})"
    assert not store.conn.in_transaction
    assert store.load(SID) == before and len(store.snapshots(SID)) == 1
    assert store.save(SID, "p", P(status="tiny")).changed  # small writes still fit in free pages


def test_disk_full_mid_write_keeps_the_previous_state(store: CheckpointStore, monkeypatch) -> None:
    store.save(SID, "p", P(title="one"))
    store.save(SID, "p", P(title="two", add_next=("a",)))
    before, snaps = store.load(SID), store.snapshots(SID)
    real_prune = store._prune

    def full_after_writing(db: sqlite3.Connection, sid: str, based_on: int) -> None:
        real_prune(db, sid, based_on)  # the row and the snapshot are written, not committed
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "_prune", full_after_writing)
    for call in (lambda: store.save(SID, "p", P(title="three")), lambda: store.restore(SID)):
        with pytest.raises(DiskFull) as info:
            call()
        assert str(info.value) == f"no space left on device ({store.path})"
        assert not store.conn.in_transaction
    monkeypatch.undo()
    assert store.load(SID) == before and store.snapshots(SID) == snaps


def test_oversized_payload_is_refused(store: CheckpointStore) -> None:
    with pytest.raises(CheckpointError, match="limit"):
        store.save(SID, "p", P(notes="x" * (MAX_PAYLOAD_BYTES + 1)))
    assert store.load(SID) is None


def test_database_whose_directory_cannot_exist(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(StoreError, match="cannot create .*is not a directory") as info:
        CheckpointStore.open(not_a_dir / "checkpoints.db")
    assert "\n" not in str(info.value)


def test_read_only_database_is_a_clear_error(db_path: Path) -> None:
    CheckpointStore.open(db_path).close()
    with CheckpointStore.open(db_path, readonly=True) as ro:  # sqlite's own mode=ro: honest even as root
        assert ro.load(SID) is None
        with pytest.raises(StoreError, match=r"cannot save checkpoint: .* is read-only$") as info:
            ro.save(SID, "p", P(title="t"))
        assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_directory_is_a_clear_error(tmp_path: Path) -> None:
    ro_dir = tmp_path / "ro"
    ro_dir.mkdir()
    ro_dir.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="cannot"):
            CheckpointStore.open(ro_dir / "checkpoints.db")
    finally:
        ro_dir.chmod(0o700)


def test_not_a_database_is_a_clear_error(db_path: Path) -> None:
    db_path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open") as info:
        CheckpointStore.open(db_path)
    assert "\n" not in str(info.value)


# -- speed (loose bounds: this catches regressions by orders of magnitude, not noise) --------


def test_hot_paths_are_fast(db_path: Path) -> None:
    t0 = time.perf_counter()
    store = CheckpointStore.open(db_path)
    first_open = time.perf_counter() - t0
    saves, loads = [], []
    for i in range(200):
        t = time.perf_counter()
        store.save(SID, "p", P(status=f"s{i}", add_done=(f"d{i % 10}",)))
        saves.append(time.perf_counter() - t)
    for _ in range(2000):
        t = time.perf_counter()
        store.load(SID)
        loads.append(time.perf_counter() - t)
    t = time.perf_counter()
    store.close()
    close = time.perf_counter() - t
    saves.sort()
    loads.sort()
    assert first_open < 0.5 and close < 0.5
    assert saves[len(saves) // 2] < 0.01, saves[len(saves) // 2]
    assert loads[len(loads) // 2] < 0.0005, loads[len(loads) // 2]
