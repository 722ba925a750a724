"""Child processes for the checkpoint store's concurrency and crash tests.

Run as a script (``python _workers.py <command> …``) so each worker is a real,
separate process with its own SQLite connection, exactly like two CLI invocations.
Workers wait on a file barrier (write ``ready-<pid>``, wait for ``go``) so that they
hit the database at the same instant instead of one after another as they start up.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from voyager_sessions.store.checkpoints import CheckpointPatch, CheckpointStore


def _barrier(barrier_dir: Path) -> None:
    (barrier_dir / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 30
    while not (barrier_dir / "go").exists():
        if time.monotonic() > deadline:
            raise SystemExit("barrier timed out")
        time.sleep(0.001)


def writer(db: str, barrier: str, tag: str, field: str, shared: str, own: str, count: str) -> None:
    """Save ``count`` times: to the shared session (own text field + appended steps) and to an own session."""
    store = CheckpointStore.open(Path(db), history_limit=5)
    _barrier(Path(barrier))
    for i in range(int(count)):
        store.save(shared, "proj", CheckpointPatch(**{field: f"{tag}-{i}"}, add_next=(f"{tag}-next-{i}",)))
        store.save(own, "proj", CheckpointPatch(title=f"{tag}-{i}", add_done=(f"{tag}-done-{i}",)))
    store.close()


def first_open(db: str, barrier: str) -> None:
    """Open a database that does not exist yet, at the same time as the other workers."""
    _barrier(Path(barrier))
    store = CheckpointStore.open(Path(db))
    print(store.conn.execute("PRAGMA user_version").fetchone()[0], flush=True)
    store.close()


def crash(db: str, session: str) -> None:
    """Commit one save, then stop inside the next save's open transaction and wait to be killed."""
    store = CheckpointStore.open(Path(db))
    store.save(session, "proj", CheckpointPatch(title="committed", add_done=("first",)))

    def stop_here(*args: object) -> None:
        # Called by save() after the checkpoint row and snapshot are written, before COMMIT.
        print("in-transaction", flush=True)
        time.sleep(60)

    store._prune = stop_here  # type: ignore[method-assign,assignment]  # pauses save() inside its transaction
    store.save(session, "proj", CheckpointPatch(title="uncommitted", add_done=("second",)))
    raise SystemExit("not killed")


if __name__ == "__main__":
    {"writer": writer, "first_open": first_open, "crash": crash}[sys.argv[1]](*sys.argv[2:])
