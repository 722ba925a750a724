"""A full disk under the data dir: one line, nothing lost, reading goes on, the watcher keeps trying.

The end-to-end test mounts a small tmpfs (it needs the privilege to mount, as root in CI
here; it is skipped, saying so, where mounting is not allowed). The others simulate the
errors the libraries raise.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support.run import run_subprocess
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.core.errors import DiskFull, VoyagerError
from voyager_sessions.scan.watch import MAX_BACKOFF, Backoff, keep_fresh

ENOSPC_FROM_TANTIVY = "An error occurred in a thread: 'An IO error occurred: No space left on device (os error 28)'"


def test_a_full_disk_while_indexing_is_one_line_and_blames_no_session(corpus, run, monkeypatch):
    import tantivy

    real = tantivy.IndexWriter.add_document

    def full(self, doc):
        raise ValueError(ENOSPC_FROM_TANTIVY)

    monkeypatch.setattr(tantivy.IndexWriter, "add_document", full)
    res = run("scan")
    assert res.exit_code == 2, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("voyager: no space left on device (")
    assert "adapter error" not in res.stderr and "internal error" not in res.stderr
    # Space is back: the next scan reads everything, nothing was half-recorded.
    monkeypatch.setattr(tantivy.IndexWriter, "add_document", real)
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["new"] == 2 and doc["failed"] == 0
    assert run.json("search", "数据库", "--json", "--no-refresh")["total"] == 1


def test_backoff_doubles_to_a_ceiling_and_resets():
    b = Backoff(2.0)
    assert [b.failed() for _ in range(7)] == [4.0, 8.0, 16.0, 32.0, MAX_BACKOFF, MAX_BACKOFF, MAX_BACKOFF]
    assert b.ok() == 2.0 and b.failed() == 4.0


def test_the_watcher_keeps_retrying_after_a_full_disk():
    calls: list[str] = []
    errors: list[tuple[str, float]] = []
    stop = threading.Event()

    def scan():
        calls.append("scan")
        if len(calls) <= 2:
            raise DiskFull.at("/data/index")
        stop.set()
        return "ok"

    keep_fresh(
        scan,
        interval=0.001,
        on_error=lambda exc, d: errors.append((str(exc), d)),
        stop=stop,
        on_scan=lambda s: calls.append(s),
    )
    assert calls == ["scan", "scan", "scan", "ok"]
    assert [e for e, _ in errors] == ["no space left on device (/data/index)"] * 2
    assert errors[1][1] > errors[0][1]


def test_the_watcher_stops_on_a_bug():
    def scan():
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        keep_fresh(scan, interval=0.001)
    assert issubclass(DiskFull, VoyagerError)


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.decode().strip()}): the simulated tests cover the logic")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(mnt: Path) -> Path:
    filler = mnt / "filler"
    # Unbuffered: a buffered file keeps the part of a write that did not fit and raises again on close
    # (whether it does depended on how many bytes the data dir left free: 12 KiB more of state failed it).
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


@pytest.mark.slow
def test_on_a_really_full_disk(home, small_disk):
    env = dict(os.environ, VOYAGER_HOME=str(small_disk / "voyager"))
    session = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    assert run_subprocess("scan", "-q", env=env).returncode == 0
    filler = _fill(small_disk)
    try:
        # Reading keeps working on a full disk.
        res = run_subprocess("search", "数据库", "--json", "--no-refresh", env=env)
        assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1, res.stderr
        # A write says what is wrong in one line (exit 2), never a traceback or a blamed session.
        with session.open("a") as fh:
            fh.write(claude_session_lines()[1].replace("我们的数据库迁移失败了", "磁盘已满 zeppelin-after-full"))
        res = run_subprocess("scan", env=env)
        assert res.returncode == 2, (res.returncode, res.stderr)
        assert "no space left on device" in res.stderr and "adapter error" not in res.stderr
        assert "Traceback" not in res.stderr
        res = run_subprocess("checkpoint", "save", "5f1c", "--objective", "x", env=env)
        assert res.returncode == 2 and "no space left on device" in res.stderr, res.stderr
        # A search with its refresh still answers from what is indexed (the refresh failing is said, not fatal).
        res = run_subprocess("search", "数据库", "--json", env=env)
        assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1, res.stderr
    finally:
        filler.unlink()
    # Space freed: the next scan completes and nothing was lost.
    res = run_subprocess("scan", "--json", env=env)
    assert res.returncode == 0, res.stderr
    res = run_subprocess("search", "zeppelin-after-full", "--json", "--no-refresh", env=env)
    assert json.loads(res.stdout)["total"] == 1
